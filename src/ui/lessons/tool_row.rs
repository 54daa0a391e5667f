//! One tutor tool in the Tool Configuration panel: on/off, its token cost,
//! when it fires (with the trigger's own parameters), custom instructions,
//! and the first problem with its settings.

use crate::domain::error::FieldError;
use crate::domain::lesson::config::{ToolConfig, MAX_INSTRUCTION_CHARS};
use crate::domain::lesson::prompt::BuiltPrompt;
use crate::domain::lesson::tools::TutorTool;
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind, MINUTE_MARKS};
use crate::domain::lesson::LessonDraft;
use crate::ui::components::number_field::NOT_WHOLE;
use crate::ui::components::{typing, whole_number, FieldProblem};
use crate::ui::lessons::edit::{config_of, edit_tool, min_turns, minutes_remaining, tool_problem};
use crate::ui::lessons::editor::apply;
use crate::ui::lessons::keyword_chips::KeywordChips;
use leptos::prelude::*;

/// Changes tool `id`'s settings in the draft (adding them if missing), with
/// smart defaults after, as every edit in the editor.
pub fn change_tool(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    id: &'static str,
    change: impl FnOnce(&mut ToolConfig),
) {
    apply(draft, notices, |d| {
        edit_tool(&mut d.tool_configuration, id, change)
    });
}

/// One tool: on/off, trigger and its parameters, custom instructions.
#[component]
pub fn ToolRow(
    tool: &'static TutorTool,
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
    built: Memo<BuiltPrompt>,
) -> impl IntoView {
    let id = tool.id;
    let config = Memo::new(move |_| draft.with(|d| config_of(&d.tool_configuration, id)));
    // What this tool adds to every request: its declaration and its line in
    // the prompt (estimates, like the per-tool table in the preview).
    let cost = move || {
        let cost = built.with(|b| b.tool_costs.iter().find(|c| c.tool_id == id).cloned());
        match cost {
            Some(c) => format!(
                "~{} tokens (declaration ~{} + instruction ~{})",
                c.total_tokens, c.declaration_tokens, c.instruction_tokens
            ),
            None if config.with(|c| c.enabled) => "left out of the prompt".to_owned(),
            None => "off: 0 tokens".to_owned(),
        }
    };
    let kind = Memo::new(move |_| config.with(|c| c.trigger_condition.kind()));
    let errors = move || draft.with(|d| problems.with(|p| tool_problem(d, p, id)));
    let category = tool.category.as_str();
    let initial_kind = kind.get_untracked();
    view! {
        <div
            class="tool-row"
            class:disabled=move || !config.with(|c| c.enabled)
            data-tool=id
            data-testid=format!("tool-{id}")
        >
            <label class="tool-head">
                <input
                    type="checkbox"
                    data-testid=format!("enable-{id}")
                    checked=config.with_untracked(|c| c.enabled)
                    prop:checked=move || config.with(|c| c.enabled)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        apply(draft, notices, |d| d.tool_configuration.set_enabled_by_teacher(id, on))
                    }
                />
                <span class=format!("tool-icon icon-{}", tool.icon) aria-hidden="true"></span>
                <span class="tool-name">{tool.name}</span>
                <code>{id}</code>
                <span class=format!("badge cat-{category}")>{category}</span>
            </label>
            <p class="muted small tool-summary">
                {tool.summary} " "
                <span class="tool-cost" data-testid=format!("cost-{id}")>
                    {cost}
                </span>
            </p>
            <div class="tool-settings">
                <label class="inline">
                    "When "
                    <select
                        data-testid=format!("trigger-{id}")
                        prop:value=move || kind.get().as_str()
                        on:change=move |ev| {
                            if let Some(k) = TriggerKind::parse(&event_target_value(&ev)) {
                                change_tool(draft, notices, id, |t| t.trigger_condition = k.default_condition());
                            }
                        }
                    >
                        {tool
                            .allowed
                            .iter()
                            .map(|k| {
                                view! {
                                    <option value=k.as_str() selected=*k == initial_kind>
                                        {k.label()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
                {move || match kind.get() {
                    TriggerKind::Keyword => view! { <KeywordChips id draft notices config /> }.into_any(),
                    TriggerKind::TimeRemaining => {
                        view! {
                            <label class="inline">
                                "Minutes left "
                                <select
                                    data-testid=format!("minutes-{id}")
                                    prop:value=move || {
                                        config.with(|c| minutes_remaining(&c.trigger_condition)).to_string()
                                    }
                                    on:change=move |ev| {
                                        if let Ok(m) = event_target_value(&ev).parse() {
                                            change_tool(
                                                draft,
                                                notices,
                                                id,
                                                |t| {
                                                    t.trigger_condition = TriggerCondition::TimeRemaining {
                                                        minutes_remaining: m,
                                                    };
                                                },
                                            );
                                        }
                                    }
                                >
                                    {MINUTE_MARKS
                                        .into_iter()
                                        .map(|m| view! { <option value=m.to_string()>{m.to_string()}</option> })
                                        .collect_view()}
                                </select>
                            </label>
                        }
                            .into_any()
                    }
                    TriggerKind::TurnCount => {
                        view! {
                            <label class="inline">
                                "After turns "
                                <input
                                    type="text"
                                    inputmode="numeric"
                                    class="narrow"
                                    id=format!("turns-{id}")
                                    data-testid=format!("turns-{id}")
                                    prop:value=move || {
                                        typing(&format!("turns-{id}")).unwrap_or_else(|| {
                                            config.with(|c| min_turns(&c.trigger_condition)).to_string()
                                        })
                                    }
                                    on:input=move |ev| {
                                        let raw = event_target_value(&ev);
                                        let n = whole_number(&raw).unwrap_or(NOT_WHOLE);
                                        change_tool(
                                            draft,
                                            notices,
                                            id,
                                            |t| t.trigger_condition = TriggerCondition::TurnCount { min_turns: n },
                                        );
                                    }
                                />
                            </label>
                        }
                            .into_any()
                    }
                    _ => ().into_any(),
                }}
            </div>
            <div class="field tight">
                <textarea
                    rows="1"
                    placeholder="Custom instructions (optional)"
                    aria-label=format!("Custom instructions for {}", tool.name)
                    data-testid=format!("instructions-{id}")
                    prop:value=move || config.with(|c| c.custom_instructions.clone().unwrap_or_default())
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        change_tool(draft, notices, id, |t| t.custom_instructions = (!text.is_empty()).then_some(text));
                    }
                >
                    {config.with_untracked(|c| c.custom_instructions.clone().unwrap_or_default())}
                </textarea>
                <span class="muted small count">
                    {move || {
                        format!(
                            "{}/{MAX_INSTRUCTION_CHARS}",
                            config.with(|c| c.custom_instructions.as_ref().map_or(0, |s| s.chars().count())),
                        )
                    }}
                </span>
            </div>
            <FieldProblem message=errors testid=format!("error-{id}") />
        </div>
    }
    .into_any()
}
