//! The lesson form: title, conversation prompt, duration, level, review,
//! the ordered task list and (for a review lesson) its review items.

use crate::domain::error::{problem_for, FieldError};
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::ui::components::{typing, whole_number, FieldProblem};
use crate::ui::lessons::edit::{add_task, ids_changed};
use crate::ui::lessons::editor::apply;
use crate::ui::lessons::review_items::ReviewItems;
use leptos::prelude::*;

/// Title, prompt, tasks, duration, level, review; each field shows its own
/// problem beside it as the teacher types.
#[component]
pub fn LessonForm(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
) -> impl IntoView {
    let error = move |field: &'static str| move || problems.with(|p| problem_for(p, field, false));
    let new_task = RwSignal::new(String::new());
    // Redrawn when tasks come, go or move (`ids_changed`).
    let tasks = Memo::new_with_compare(move |_| draft.with(|d| d.tasks.clone()), ids_changed);
    let add = move || {
        let text = new_task.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        apply(draft, notices, |d| add_task(d, &text));
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
                <FieldProblem message=error("title") />
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
                <FieldProblem message=error("conversationPrompt") />
            </div>
            <div class="row3">
                <div class="field">
                    <label for="lesson-duration">"Duration (minutes)"</label>
                    <input
                        id="lesson-duration"
                        type="text"
                        inputmode="numeric"
                        prop:value=move || {
                            typing("lesson-duration").unwrap_or_else(|| {
                                draft.with(|d| d.duration_minutes.map(|m| m.to_string()).unwrap_or_default())
                            })
                        }
                        on:input=move |ev| {
                            let raw = event_target_value(&ev);
                            apply(draft, notices, |d| d.duration_minutes = whole_number(&raw))
                        }
                    />
                    <FieldProblem message=error("durationMinutes") />
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
                    // Rebuilt whole when the list changes: rows are
                    // addressed by position (move up/down, remove), not by
                    // identity.
                    {move || {
                        let tasks = tasks.get();
                        let count = tasks.len();
                        tasks
                            .into_iter()
                            .enumerate()
                            .map(|(index, task)| {
                                view! { <TaskRow draft notices problems index count task /> }
                            })
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
                                add();
                            }
                        }
                    />
                    <button type="button" class="button" on:click=move |_| add()>
                        "Add task"
                    </button>
                </div>
                <FieldProblem message=error("tasks") />
            </div>
            <ReviewItems draft notices problems />
        </section>
    }
    .into_any()
}

/// One task: its text, the id the model reports, move up / down, remove,
/// and the first problem with it.
#[component]
fn TaskRow(
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
                on:input=move |ev| {
                    let text = event_target_value(&ev);
                    apply(
                        draft,
                        notices,
                        |d| {
                            if let Some(t) = d.tasks.get_mut(index) {
                                t.text = text;
                            }
                        },
                    )
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
                    apply(
                        draft,
                        notices,
                        |d| {
                            d.tasks.remove(index);
                        },
                    )
                }
            >
                "×"
            </button>
            <FieldProblem message=move || problems.with(|p| problem_for(p, &field, true)) />
        </li>
    }
}
