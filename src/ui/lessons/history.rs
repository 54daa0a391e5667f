//! The lesson's history beside the editor: every saved version (number,
//! author, time, what changed) with Restore, which saves that version's
//! content as a new version and reloads the editor.

use crate::api::lessons::{lesson_history, RestoreLesson};
use crate::domain::lesson::record::LessonVersionMeta;
use crate::domain::time::format_utc;
use crate::error::ApiError;
use crate::ui::current;
use leptos::prelude::*;

/// The history: sent with the page beside the lesson, then loaded again
/// after each save (`reload_history`). A plain signal rather than a
/// resource: the editor's bundle then carries no resource or `<Suspense>`
/// machinery for one list it already has.
pub type Versions = RwSignal<Result<Vec<LessonVersionMeta>, ApiError>>;

/// Loads lesson `id`'s history again (after a save); the list on screen
/// stays until the new one arrives, and a failure shows in its place.
pub fn reload_history(id: i64, versions: Versions) {
    leptos::task::spawn_local(async move {
        let result = lesson_history(id).await;
        // The editor may have been left while waiting.
        let _ = versions.try_set(result);
    });
}

/// Saved versions, newest first.
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
            {move || {
                versions
                    .with(|r| r.as_ref().err().map(ToString::to_string))
                    .map(|e| view! { <p class="error">{e}</p> })
            }}
            // Drawn whole again when the list changes (after a save): a
            // keyed `<For>` would add its diffing code to the bundle for a
            // list that changes once a save.
            <ol class="history">
                {move || {
                    versions
                        .with(|r| r.as_ref().ok().cloned().unwrap_or_default())
                        .into_iter()
                        .map(|meta| {
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
                                    <div class="muted small">{meta.summary}</div>
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
                        })
                        .collect_view()
                }}
            </ol>
        </section>
    }
}
