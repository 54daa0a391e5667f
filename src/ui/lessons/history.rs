//! The lesson's history beside the editor: every saved version (number,
//! author, time, what changed) with Restore, which saves that version's
//! content as a new version and reloads the editor.

use crate::api::lessons::RestoreLesson;
use crate::domain::lesson::record::LessonVersionMeta;
use crate::domain::time::format_utc;
use crate::ui::components::{Fetched, Loaded};
use crate::ui::current;
use leptos::prelude::*;

/// The history as the page loads it: created by the page beside the lesson
/// (not inside the editor), so the server sends it with the page and
/// hydration finds the same list.
pub type Versions = Fetched<Vec<LessonVersionMeta>>;

/// Saved versions, newest first (the page refetches them after each save).
/// Restoring asks first when there are unsaved edits, and bumps `reload` on
/// success so the page loads the restored lesson.
#[component]
pub fn LessonHistory(
    lesson_id: i64,
    versions: Versions,
    version: RwSignal<i64>,
    dirty: Signal<bool>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let restore = ServerAction::<RestoreLesson>::new();
    let (restore_result, restoring) = (restore.value(), restore.pending());
    Effect::new(move |_| {
        if let Some(Ok(_)) = current(&restore_result) {
            reload.update(|n| *n += 1);
        }
    });
    let on_restore = move |v: i64| {
        if dirty.get_untracked()
            && !window()
                .confirm_with_message("Discard your unsaved changes and restore this version?")
                .unwrap_or(false)
        {
            return;
        }
        restore.dispatch(RestoreLesson {
            id: lesson_id,
            version: version.get_untracked(),
            restore: v,
        });
    };
    view! {
        <section class="panel" data-testid="lesson-history">
            <h2>"History"</h2>
            {move || {
                current(&restore_result)
                    .and_then(Result::err)
                    .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
            }}
            <Loaded resource=versions loading="Loading history…" let:list>
                <ol class="history">
                    <For each=move || list.clone() key=|meta| meta.version let:meta>
                        {
                            let v = meta.version;
                            let is_current = move || version.get() == v;
                            view! {
                                <li data-version=v>
                                    <div>
                                        <strong>{format!("v{v}")}</strong>
                                        <span>{format!(" · {} · {}", meta.author, format_utc(meta.created_at))}</span>
                                        <span class="badge" class:hidden=move || !is_current()>
                                            "current"
                                        </span>
                                    </div>
                                    <div class="muted small">{meta.summary.clone()}</div>
                                    <div class="history-actions">
                                        <button
                                            type="button"
                                            class="button ghost small"
                                            data-testid=format!("restore-{v}")
                                            disabled=move || is_current() || restoring.try_get().unwrap_or(true)
                                            on:click=move |_| on_restore(v)
                                        >
                                            "Restore"
                                        </button>
                                    </div>
                                </li>
                            }
                        }
                    </For>
                </ol>
            </Loaded>
        </section>
    }
}
