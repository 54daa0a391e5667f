//! The Tool Configuration panel: preset menu (asking before a switch would
//! drop keywords), what smart defaults changed, suggestions and
//! contradictions (`advice`), one row per tutor tool (`tool_row`), the
//! instructions for all tools and the token / enabled-count footer.
//!
//! Rows are built once and only their parts react, so typing in one tool's
//! instructions never re-creates (and unfocuses) anything.

use crate::domain::error::{problem_for, FieldError};
use crate::domain::lesson::config::Preset;
use crate::domain::lesson::prompt::BuiltPrompt;
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::lesson::LessonDraft;
use crate::domain::review_queue::DUE_ITEMS_PER_LESSON;
use crate::domain::student::FACTS_PER_LESSON;
use crate::ui::components::FieldProblem;
use crate::ui::lessons::advice::AdviceList;
use crate::ui::lessons::edit::{enabled_count, preset_losses, use_preset};
use crate::ui::lessons::editor::apply;
use crate::ui::lessons::tool_row::ToolRow;
use leptos::prelude::*;

/// The panel.
#[component]
pub fn ToolPanel(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
    built: Memo<BuiltPrompt>,
) -> impl IntoView {
    let preset =
        Memo::new(move |_| draft.with(|d| Preset::for_lesson(&d.tool_configuration, d.facts())));
    let enabled = move || draft.with(|d| enabled_count(&d.tool_configuration));
    // Bumped when the teacher declines a switch, so the menu shows the
    // current preset again (the draft, and so `preset`, did not change).
    let declined = RwSignal::new(0u32);
    let choose = move |p: Preset| {
        let losses = draft.with_untracked(|d| preset_losses(&d.tool_configuration, p));
        if !losses.is_empty() {
            let question = format!(
                "Switching to “{}” drops what you set for:\n{}\n\nSwitch anyway?",
                p.label(),
                losses.join("\n")
            );
            if !window().confirm_with_message(&question).unwrap_or(false) {
                declined.update(|n| *n += 1);
                return;
            }
        }
        apply(draft, notices, |d| use_preset(&mut d.tool_configuration, p));
    };
    view! {
        <section class="panel tool-panel" data-testid="tool-panel">
            <div class="split">
                <h2>"Tool configuration"</h2>
                <label class="inline">
                    "Preset "
                    <select
                        data-testid="preset"
                        prop:value=move || {
                            declined.track();
                            preset.get().map_or("custom", Preset::as_str)
                        }
                        on:change=move |ev| {
                            if let Some(p) = Preset::parse(&event_target_value(&ev)) {
                                choose(p);
                            }
                        }
                    >
                        {Preset::ALL
                            .into_iter()
                            .map(|p| {
                                view! {
                                    <option
                                        value=p.as_str()
                                        selected=preset.get_untracked() == Some(p)
                                    >
                                        {p.label()}
                                    </option>
                                }
                            })
                            .collect_view()}
                        <option value="custom" disabled selected=preset.get_untracked().is_none()>
                            "Custom"
                        </option>
                    </select>
                </label>
            </div>
            {move || {
                let list = notices.get();
                (!list.is_empty())
                    .then(|| {
                        view! {
                            <div class="auto-notices" role="status">
                                {list
                                    .into_iter()
                                    .map(|n| view! { <p data-testid="auto-notice">{n}</p> })
                                    .collect_view()}
                                <button
                                    type="button"
                                    class="button ghost small"
                                    on:click=move |_| notices.set(Vec::new())
                                >
                                    "Dismiss"
                                </button>
                            </div>
                        }
                    })
            }}
            <AdviceList draft notices />
            <div class="tool-rows">
                {TUTOR_TOOLS
                    .iter()
                    .map(|tool| view! { <ToolRow tool draft notices problems built /> })
                    .collect_view()}
            </div>
            <div class="field">
                <label for="global-instructions">"Instructions for all tools (optional)"</label>
                <textarea
                    id="global-instructions"
                    rows="2"
                    prop:value=move || draft.with(|d| d.tool_configuration.global_instructions.clone().unwrap_or_default())
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        apply(
                            draft,
                            notices,
                            |d| {
                                d.tool_configuration.global_instructions = (!text.is_empty()).then_some(text);
                            },
                        )
                    }
                >
                    {draft.with_untracked(|d| d.tool_configuration.global_instructions.clone().unwrap_or_default())}
                </textarea>
                <FieldProblem message=move || {
                    problems.with(|p| problem_for(p, "toolConfiguration.globalInstructions", false))
                } />
            </div>
            <div class="field">
                <label class="check">
                    <input
                        type="checkbox"
                        data-testid="use-profile-facts"
                        prop:checked=move || draft.with(|d| d.tool_configuration.use_profile_facts)
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            apply(draft, notices, |d| d.tool_configuration.use_profile_facts = on)
                        }
                    />
                    "Use the student's profile facts"
                </label>
                <p class="muted small">
                    {format!(
                        "When the lesson runs for a student record, the facts their earlier lessons learnt (at most {FACTS_PER_LESSON}, newest first) go into its prompt."
                    )}
                </p>
            </div>
            <footer class="tool-footer" data-testid="tool-footer">
                {move || {
                    format!(
                        "Estimated tokens: ~{} · Tools enabled: {}/{}{}",
                        built.with(|b| b.estimated_tokens),
                        enabled(),
                        TUTOR_TOOLS.len(),
                        draft.with(student_note),
                    )
                }}
            </footer>
        </section>
    }
    .into_any()
}

/// What the token estimate leaves out: a student's due review items (a
/// review lesson) and known facts (with profile facts on) are added when
/// the lesson runs for a student record, so the teacher is told.
fn student_note(draft: &LessonDraft) -> String {
    let mut parts = Vec::new();
    if draft.review {
        parts.push(format!("up to {DUE_ITEMS_PER_LESSON} due review items"));
    }
    if draft.tool_configuration.use_profile_facts {
        parts.push(format!("up to {FACTS_PER_LESSON} profile facts"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" · plus, for a student: {}", parts.join(" and "))
    }
}
