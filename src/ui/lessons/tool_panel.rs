//! The Tool Configuration panel: preset menu, one row per tutor tool with
//! its trigger and instructions, and the token / enabled-count footer.
//!
//! Rows are built once and only their parts react, so typing in one tool's
//! instructions never re-creates (and unfocuses) anything.

use crate::domain::error::FieldError;
use crate::domain::lesson::config::{
    LessonToolConfiguration, Preset, ToolConfig, MAX_INSTRUCTION_CHARS,
};
use crate::domain::lesson::prompt::BuiltPrompt;
use crate::domain::lesson::tools::{ToolCategory, TutorTool, TUTOR_TOOLS};
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind, MINUTE_MARKS};
use crate::domain::lesson::LessonDraft;
use crate::ui::lessons::editor::{apply, problem_for};
use leptos::prelude::*;

/// `id`'s settings, or its catalogue default (disabled) if not configured.
fn config_of(config: &LessonToolConfiguration, id: &str) -> ToolConfig {
    config
        .tool(id)
        .cloned()
        .or_else(|| ToolConfig::default_for(id, false))
        .unwrap_or(ToolConfig {
            tool_id: id.to_owned(),
            enabled: false,
            trigger_condition: TriggerCondition::Always,
            custom_instructions: None,
        })
}

/// Changes `id`'s settings, adding them (disabled, at defaults) if missing.
fn edit_tool(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    id: &'static str,
    change: impl FnOnce(&mut ToolConfig),
) {
    apply(draft, notices, |d| {
        let config = &mut d.tool_configuration;
        if config.tool(id).is_none() {
            if let Some(fresh) = ToolConfig::default_for(id, false) {
                config.tools.push(fresh);
            }
        }
        if let Some(tool) = config.tool_mut(id) {
            change(tool);
        }
    });
}

/// The panel.
#[component]
pub fn ToolPanel(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
    built: Memo<BuiltPrompt>,
) -> impl IntoView {
    let preset = Memo::new(move |_| draft.with(|d| Preset::matching(&d.tool_configuration)));
    let enabled_count = move || {
        draft.with(|d| {
            TUTOR_TOOLS
                .iter()
                .filter(|t| d.tool_configuration.is_enabled(t.id))
                .count()
        })
    };
    view! {
        <section class="panel tool-panel" data-testid="tool-panel">
            <div class="split">
                <h2>"Tool configuration"</h2>
                <label class="inline">
                    "Preset "
                    <select
                        data-testid="preset"
                        prop:value=move || preset.get().map_or("custom", Preset::as_str)
                        on:change=move |ev| {
                            if let Some(p) = Preset::parse(&event_target_value(&ev)) {
                                apply(
                                    draft,
                                    notices,
                                    |d| {
                                        let global = d.tool_configuration.global_instructions.take();
                                        d.tool_configuration = p.configuration();
                                        d.tool_configuration.global_instructions = global;
                                    },
                                );
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
            <div class="tool-rows">
                {TUTOR_TOOLS
                    .iter()
                    .map(|tool| view! { <ToolRow tool draft notices problems /> })
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
                {move || {
                    problems
                        .with(|p| problem_for(p, "toolConfiguration.globalInstructions", false))
                        .map(|e| view! { <span class="field-error">{e}</span> })
                }}
            </div>
            <footer class="tool-footer" data-testid="tool-footer">
                {move || {
                    format!(
                        "Estimated tokens: ~{} · Tools enabled: {}/{}",
                        built.with(|b| b.estimated_tokens),
                        enabled_count(),
                        TUTOR_TOOLS.len(),
                    )
                }}
            </footer>
        </section>
    }
    .into_any()
}

/// One tool: on/off, trigger and its parameters, custom instructions.
#[component]
fn ToolRow(
    tool: &'static TutorTool,
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
) -> impl IntoView {
    let id = tool.id;
    let config = Memo::new(move |_| draft.with(|d| config_of(&d.tool_configuration, id)));
    let kind = Memo::new(move |_| config.with(|c| c.trigger_condition.kind()));
    let errors = move || {
        draft.with(|d| {
            let index = d
                .tool_configuration
                .tools
                .iter()
                .position(|t| t.tool_id == id)?;
            problems.with(|p| problem_for(p, &format!("toolConfiguration.tools[{index}]"), true))
        })
    };
    let category = match tool.category {
        ToolCategory::Core => "core",
        ToolCategory::Review => "review",
    };
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
            <p class="muted small tool-summary">{tool.summary}</p>
            <div class="tool-settings">
                <label class="inline">
                    "When "
                    <select
                        data-testid=format!("trigger-{id}")
                        prop:value=move || kind.get().as_str()
                        on:change=move |ev| {
                            if let Some(k) = TriggerKind::parse(&event_target_value(&ev)) {
                                edit_tool(draft, notices, id, |t| t.trigger_condition = k.default_condition());
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
                                        config
                                            .with(|c| match c.trigger_condition {
                                                TriggerCondition::TimeRemaining { minutes_remaining } => minutes_remaining,
                                                _ => 2,
                                            })
                                            .to_string()
                                    }
                                    on:change=move |ev| {
                                        if let Ok(m) = event_target_value(&ev).parse() {
                                            edit_tool(
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
                                    type="number"
                                    min="1"
                                    class="narrow"
                                    data-testid=format!("turns-{id}")
                                    prop:value=move || {
                                        config
                                            .with(|c| match c.trigger_condition {
                                                TriggerCondition::TurnCount { min_turns } => min_turns,
                                                _ => 5,
                                            })
                                            .to_string()
                                    }
                                    on:input=move |ev| {
                                        let n = event_target_value(&ev).trim().parse().unwrap_or(0);
                                        edit_tool(
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
                        edit_tool(draft, notices, id, |t| t.custom_instructions = (!text.is_empty()).then_some(text));
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
            {move || errors().map(|e| view! { <p class="field-error" data-testid=format!("error-{id}")>{e}</p> })}
        </div>
    }
    .into_any()
}

/// Keyword chips: type a topic and press Enter to add, × to remove.
#[component]
fn KeywordChips(
    id: &'static str,
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    config: Memo<ToolConfig>,
) -> impl IntoView {
    let typed = RwSignal::new(String::new());
    let keywords = move || {
        config.with(|c| match &c.trigger_condition {
            TriggerCondition::Keyword { keywords } => keywords.clone(),
            _ => Vec::new(),
        })
    };
    let set_keywords = move |change: &dyn Fn(&mut Vec<String>)| {
        edit_tool(draft, notices, id, |t| {
            let mut list = match &t.trigger_condition {
                TriggerCondition::Keyword { keywords } => keywords.clone(),
                _ => Vec::new(),
            };
            change(&mut list);
            t.trigger_condition = TriggerCondition::Keyword { keywords: list };
        });
    };
    view! {
        <div class="chips" data-testid=format!("chips-{id}")>
            {move || {
                keywords()
                    .into_iter()
                    .enumerate()
                    .map(|(i, k)| {
                        view! {
                            <span class="chip">
                                {k.clone()}
                                <button
                                    type="button"
                                    aria-label=format!("Remove {k}")
                                    on:click=move |_| set_keywords(&|list| {
                                        if i < list.len() {
                                            list.remove(i);
                                        }
                                    })
                                >
                                    "×"
                                </button>
                            </span>
                        }
                    })
                    .collect_view()
            }}
            <input
                type="text"
                placeholder="Topic, then Enter"
                aria-label="Add keyword"
                data-testid=format!("keyword-input-{id}")
                prop:value=move || typed.get()
                on:input=move |ev| typed.set(event_target_value(&ev))
                on:keydown=move |ev| {
                    if ev.key() == "Enter" || ev.key() == "," {
                        ev.prevent_default();
                        let word = typed.get_untracked().trim().to_owned();
                        if !word.is_empty() {
                            set_keywords(&|list| list.push(word.clone()));
                            typed.set(String::new());
                        }
                    }
                }
            />
        </div>
    }
    .into_any()
}
