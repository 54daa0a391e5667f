//! `/lessons/{id}`: the lesson form, the tool configuration panel and the
//! live preview of exactly what the tutor model will get.
//!
//! The preview runs the same domain code as the server (`prompt::build`)
//! in the browser, so it updates on every keystroke with no round trip;
//! only the exact BPE count asks the server, after a pause in typing.

use crate::api::lessons::{get_lesson, SaveLesson};
use crate::domain::declaration::{export, DeclarationFormat};
use crate::domain::error::FieldError;
use crate::domain::lesson::config::apply_smart_defaults;
use crate::domain::lesson::optimise::OptimiseMode;
use crate::domain::lesson::prompt::{build, BuiltPrompt};
use crate::domain::lesson::record::LessonView;
use crate::domain::lesson::tools::{tutor_tool, TUTOR_TOOLS};
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::ui::auth::RequireRole;
use crate::ui::current;
use crate::ui::lessons::tool_panel::ToolPanel;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// Changes the draft, then brings the tool configuration in line with the
/// lesson (smart defaults), remembering what changed automatically.
pub fn apply(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    change: impl FnOnce(&mut LessonDraft),
) {
    draft.update(|d| {
        change(d);
        let facts = d.facts();
        let changes = apply_smart_defaults(&mut d.tool_configuration, facts);
        if !changes.is_empty() {
            notices.update(|n| n.extend(changes.into_iter().map(|c| c.message)));
        }
    });
}

/// The first problem about `field` exactly, or about anything under it when
/// `prefix` is set.
pub fn problem_for(problems: &[FieldError], field: &str, prefix: bool) -> Option<String> {
    problems
        .iter()
        .find(|p| {
            p.field == field
                || (prefix
                    && p.field.starts_with(field)
                    && p.field[field.len()..].starts_with(['.', '[']))
        })
        .map(|p| p.rule.clone())
}

/// Loads the lesson named in the URL and shows the editor.
#[component]
pub fn LessonEditorPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let lesson = Resource::new(id, |id| async move {
        match id {
            Some(id) => get_lesson(id).await,
            None => Err(ApiError::NotFound("That lesson".into())),
        }
    });
    view! {
        <RequireRole role=Role::Teacher>
            <Transition fallback=|| view! { <p class="muted">"Loading lesson…"</p> }>
                {move || {
                    current(&lesson)
                        .map(|result| match result {
                            Ok(view) => view! { <LessonEditor lesson=view /> }.into_any(),
                            Err(e) => {
                                view! {
                                    <section class="panel notice">
                                        <p>{e.to_string()}</p>
                                        <a href="/lessons">"Back to lessons"</a>
                                    </section>
                                }
                                    .into_any()
                            }
                        })
                }}
            </Transition>
        </RequireRole>
    }
}

/// The editor for one loaded lesson.
#[component]
fn LessonEditor(lesson: LessonView) -> impl IntoView {
    let lesson_id = lesson.id;
    let draft = RwSignal::new(lesson.draft.clone());
    let saved = RwSignal::new(lesson.draft.clone());
    let version = RwSignal::new(lesson.version);
    let notices = RwSignal::new(Vec::<String>::new());
    let optimise = RwSignal::new(Some(OptimiseMode::Normal));
    let format = RwSignal::new(DeclarationFormat::Gemini);

    let problems = Memo::new(move |_| draft.with(|d| d.problems()));
    let built = Memo::new(move |_| draft.with(|d| build(&d.prompt_input(optimise.get()))));
    let dirty = move || draft.with(|d| saved.with(|s| d != s));

    let save = ServerAction::<SaveLesson>::new();
    let (save_result, saving) = (save.value(), save.pending());
    let save_message = RwSignal::new(None::<Result<String, ApiError>>);
    Effect::new(move |_| {
        if let Some(result) = current(&save_result) {
            match result {
                Ok(new_version) => {
                    version.set(new_version);
                    saved.set(draft.get_untracked());
                    save_message.set(Some(Ok("Saved.".into())));
                }
                Err(e) => save_message.set(Some(Err(e))),
            }
        }
    });
    let on_save = move |_| {
        save_message.set(None);
        save.dispatch(SaveLesson {
            id: lesson_id,
            version: version.get_untracked(),
            draft: draft.get_untracked(),
        });
    };
    let can_save = move || {
        problems.try_with(Vec::is_empty).unwrap_or(false) && !saving.try_get().unwrap_or(true)
    };

    view! {
        <section class="page-head split">
            <div>
                <a href="/lessons" class="muted small">
                    "← Lessons"
                </a>
                <h1>{move || draft.with(|d| d.title.clone())}</h1>
                <p class="muted small">
                    {format!(
                        "By {} · last changed {}{}",
                        lesson.owner_name,
                        format_utc(lesson.updated_at),
                        lesson.updated_by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(),
                    )}
                    {lesson
                        .legacy_configuration
                        .then(|| {
                            view! {
                                <span class="badge warn">
                                    "No tool configuration yet — the standard lesson tools are proposed"
                                </span>
                            }
                        })}
                </p>
            </div>
            <div class="save-bar">
                <span class="muted small" data-testid="version">
                    {move || format!("Version {}", version.get())}
                </span>
                {move || dirty().then(|| view! { <span class="badge warn">"Unsaved changes"</span> })}
                <button
                    type="button"
                    class="button primary"
                    data-testid="save-lesson"
                    disabled=move || !can_save()
                    on:click=on_save
                >
                    {move || if saving.try_get().unwrap_or(false) { "Saving…" } else { "Save" }}
                </button>
            </div>
        </section>
        {move || {
            save_message
                .get()
                .map(|m| match m {
                    Ok(text) => view! { <p class="ok" role="status" data-testid="save-status">{text}</p> }.into_any(),
                    Err(ApiError::Conflict(text)) => {
                        view! {
                            <p class="error" role="alert" data-testid="save-status">
                                {text}
                                " "
                                <a href=format!("/lessons/{lesson_id}") rel="external">"Reload"</a>
                            </p>
                        }
                            .into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert" data-testid="save-status">{e.to_string()}</p> }.into_any(),
                })
        }}
        {move || {
            (!problems.with(Vec::is_empty))
                .then(|| {
                    view! {
                        <p class="error small" data-testid="problem-count">
                            {move || {
                                let n = problems.with(Vec::len);
                                format!("{n} problem{} to fix before saving", if n == 1 { "" } else { "s" })
                            }}
                        </p>
                    }
                })
        }}
        <div class="editor-grid">
            <div class="editor-main">
                <LessonForm draft notices problems />
                <ToolPanel draft notices problems built />
            </div>
            <aside class="editor-preview">
                <Preview built optimise format />
            </aside>
        </div>
    }
    .into_any()
}

/// Title, prompt, tasks, duration, level, review.
#[component]
fn LessonForm(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
) -> impl IntoView {
    let error = move |field: &'static str, prefix: bool| {
        move || {
            problems
                .with(|p| problem_for(p, field, prefix))
                .map(|e| view! { <span class="field-error">{e}</span> })
        }
    };
    let new_task = RwSignal::new(String::new());
    let tasks = Memo::new(move |_| draft.with(|d| d.tasks.clone()));
    let add_task = move || {
        let text = new_task.get_untracked().trim().to_owned();
        if text.is_empty() {
            return;
        }
        apply(draft, notices, |d| {
            let taken: Vec<&str> = d.tasks.iter().map(|t| t.id.as_str()).collect();
            let id = LessonTask::id_for(&text, &taken);
            d.tasks.push(LessonTask { id, text });
        });
        new_task.set(String::new());
    };
    view! {
        <section class="panel">
            <h2>"Lesson"</h2>
            <div class="field">
                <label for="lesson-title">"Title"</label>
                <input
                    id="lesson-title"
                    type="text"
                    prop:value=move || draft.with(|d| d.title.clone())
                    on:input=move |ev| apply(draft, notices, |d| d.title = event_target_value(&ev))
                />
                {error("title", false)}
            </div>
            <div class="field">
                <label for="lesson-prompt">"Conversation prompt"</label>
                <textarea
                    id="lesson-prompt"
                    rows="7"
                    prop:value=move || draft.with(|d| d.conversation_prompt.clone())
                    on:input=move |ev| {
                        apply(draft, notices, |d| d.conversation_prompt = event_target_value(&ev))
                    }
                >
                    {draft.with_untracked(|d| d.conversation_prompt.clone())}
                </textarea>
                {error("conversationPrompt", false)}
            </div>
            <div class="row3">
                <div class="field">
                    <label for="lesson-duration">"Duration (minutes)"</label>
                    <input
                        id="lesson-duration"
                        type="number"
                        min="1"
                        max="180"
                        prop:value=move || draft.with(|d| d.duration_minutes.map(|m| m.to_string()).unwrap_or_default())
                        on:input=move |ev| {
                            let raw = event_target_value(&ev);
                            apply(draft, notices, |d| d.duration_minutes = raw.trim().parse().ok())
                        }
                    />
                    {error("durationMinutes", false)}
                </div>
                <div class="field">
                    <label for="lesson-level">"Student level"</label>
                    <select
                        id="lesson-level"
                        prop:value=move || draft.with(|d| d.level.map(|l| l.as_str()).unwrap_or_default())
                        on:change=move |ev| {
                            let raw = event_target_value(&ev);
                            apply(draft, notices, |d| d.level = CefrLevel::parse(&raw).ok())
                        }
                    >
                        <option value="" selected=draft.with_untracked(|d| d.level.is_none())>
                            "—"
                        </option>
                        {CefrLevel::ALL
                            .into_iter()
                            .map(|level| {
                                view! {
                                    <option
                                        value=level.as_str()
                                        selected=draft.with_untracked(|d| d.level == Some(level))
                                    >
                                        {level.as_str()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </div>
                <label class="check">
                    <input
                        type="checkbox"
                        data-testid="review-toggle"
                        prop:checked=move || draft.with(|d| d.review)
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            apply(draft, notices, |d| d.review = on)
                        }
                    />
                    "Review lesson"
                </label>
            </div>
            <div class="field">
                <span class="label">"Tasks (lesson objectives)"</span>
                <ol class="tasks" data-testid="tasks">
                    {move || {
                        let tasks = tasks.get();
                        let count = tasks.len();
                        tasks
                            .into_iter()
                            .enumerate()
                            .map(|(i, task)| task_row(draft, notices, problems, i, count, task))
                            .collect_view()
                    }}
                </ol>
                <div class="inline-form">
                    <input
                        type="text"
                        placeholder="Add a task, e.g. Order a drink"
                        aria-label="New task"
                        data-testid="new-task"
                        prop:value=move || new_task.get()
                        on:input=move |ev| new_task.set(event_target_value(&ev))
                        on:keydown=move |ev| {
                            if ev.key() == "Enter" {
                                ev.prevent_default();
                                add_task();
                            }
                        }
                    />
                    <button type="button" class="button" on:click=move |_| add_task()>
                        "Add task"
                    </button>
                </div>
                {error("tasks", false)}
            </div>
        </section>
    }
    .into_any()
}

fn task_row(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
    index: usize,
    count: usize,
    task: LessonTask,
) -> impl IntoView {
    let field = format!("tasks[{index}]");
    let swap = move |other: usize| apply(draft, notices, |d| d.tasks.swap(index, other));
    view! {
        <li class="task">
            <input
                type="text"
                aria-label=format!("Task {}", index + 1)
                value=task.text.clone()
                on:change=move |ev| {
                    let text = event_target_value(&ev);
                    apply(draft, notices, |d| {
                        if let Some(t) = d.tasks.get_mut(index) {
                            t.text = text;
                        }
                    })
                }
            />
            <code class="task-id" title="The id the model reports">
                {task.id.clone()}
            </code>
            <button
                type="button"
                class="button ghost small"
                aria-label="Move up"
                disabled=index == 0
                on:click=move |_| swap(index - 1)
            >
                "↑"
            </button>
            <button
                type="button"
                class="button ghost small"
                aria-label="Move down"
                disabled=index + 1 == count
                on:click=move |_| swap(index + 1)
            >
                "↓"
            </button>
            <button
                type="button"
                class="button ghost small"
                aria-label=format!("Remove task {}", index + 1)
                on:click=move |_| {
                    apply(draft, notices, |d| {
                        d.tasks.remove(index);
                    })
                }
            >
                "×"
            </button>
            {move || {
                problems
                    .with(|p| problem_for(p, &field, true))
                    .map(|e| view! { <span class="field-error">{e}</span> })
            }}
        </li>
    }
}

/// The assembled prompt, declarations, optimisation stats and token costs.
#[component]
fn Preview(
    built: Memo<BuiltPrompt>,
    optimise: RwSignal<Option<OptimiseMode>>,
    format: RwSignal<DeclarationFormat>,
) -> impl IntoView {
    let exact = RwSignal::new(None::<Result<usize, String>>);
    let generation = StoredValue::new(0u64);
    // Exact BPE count: asked of the server after 600 ms without changes.
    Effect::new(move |_| {
        let text = built.with(|b| b.system_prompt.clone());
        let mine = generation.get_value() + 1;
        generation.set_value(mine);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            // `try_get_value`: the editor may have been left while waiting.
            gloo_timers::future::TimeoutFuture::new(600).await;
            if generation.try_get_value() != Some(mine) {
                return;
            }
            let result = crate::api::lessons::count_tokens(text)
                .await
                .map(|c| c.tokens)
                .map_err(|e| e.to_string());
            if generation.try_get_value() == Some(mine) {
                exact.set(Some(result));
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (text, exact);
    });
    let declarations = move || {
        let value = built.with(|b| export(&b.declarations, format.get()));
        serde_json::to_string_pretty(&value).unwrap_or_default()
    };
    view! {
        <section class="panel preview" data-testid="preview">
            <div class="split">
                <h2>"What the tutor gets"</h2>
                <select
                    aria-label="Optimisation"
                    data-testid="optimise-mode"
                    on:change=move |ev| {
                        optimise
                            .set(
                                match event_target_value(&ev).as_str() {
                                    "off" => None,
                                    "aggressive" => Some(OptimiseMode::Aggressive),
                                    _ => Some(OptimiseMode::Normal),
                                },
                            )
                    }
                >
                    <option value="normal">"Optimised"</option>
                    <option value="aggressive">"Aggressively optimised"</option>
                    <option value="off">"As written"</option>
                </select>
            </div>
            <dl class="stats" data-testid="token-stats">
                <div>
                    <dt>"Estimate (chars ÷ 4)"</dt>
                    <dd data-testid="estimate">{move || format!("~{}", built.with(|b| b.estimated_tokens))}</dd>
                </div>
                <div>
                    <dt>"Exact prompt tokens (o200k_base)"</dt>
                    <dd data-testid="exact-tokens">
                        {move || match exact.get() {
                            None => "counting…".to_owned(),
                            Some(Ok(n)) => n.to_string(),
                            Some(Err(e)) => format!("unavailable ({e})"),
                        }}
                    </dd>
                </div>
                <div>
                    <dt>"Optimiser saved"</dt>
                    <dd data-testid="saved">
                        {move || {
                            built
                                .with(|b| {
                                    format!(
                                        "{} tokens ({}%) · {} → {} chars",
                                        b.stats.saved_tokens,
                                        b.stats.saved_percent,
                                        b.stats.original_chars,
                                        b.stats.optimised_chars,
                                    )
                                })
                        }}
                    </dd>
                </div>
            </dl>
            <h3>"System prompt"</h3>
            <pre class="prompt" data-testid="preview-prompt">
                {move || built.with(|b| b.system_prompt.clone())}
            </pre>
            <div class="split">
                <h3>"Function declarations"</h3>
                <select
                    aria-label="Declaration format"
                    data-testid="declaration-format"
                    on:change=move |ev| {
                        if let Ok(f) = DeclarationFormat::parse(&event_target_value(&ev)) {
                            format.set(f);
                        }
                    }
                >
                    {DeclarationFormat::ALL
                        .into_iter()
                        .map(|f| view! { <option value=f.as_str()>{f.label()}</option> })
                        .collect_view()}
                </select>
            </div>
            <pre class="json" data-testid="preview-declarations">{declarations}</pre>
            <h3>"Token cost per tool"</h3>
            <table class="table compact" data-testid="tool-costs">
                <thead>
                    <tr>
                        <th>"Tool"</th>
                        <th>"Declaration"</th>
                        <th>"Instruction"</th>
                        <th>"Total"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        built
                            .with(|b| b.tool_costs.clone())
                            .into_iter()
                            .map(|c| {
                                let name = tutor_tool(&c.tool_id).map_or(c.tool_id.clone(), |t| t.name.to_owned());
                                view! {
                                    <tr>
                                        <td>{name}</td>
                                        <td>{format!("~{}", c.declaration_tokens)}</td>
                                        <td>{format!("~{}", c.instruction_tokens)}</td>
                                        <td>{format!("~{}", c.total_tokens)}</td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <p class="muted small">{format!("{} tutor tools in the catalogue.", TUTOR_TOOLS.len())}</p>
        </section>
    }
    .into_any()
}
