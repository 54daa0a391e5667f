//! The bindings history: every saved version (who, when, what), the diff of
//! any of them against the current one, and restore.

use crate::api::bindings::{get_bindings_version, RestoreBindings};
use crate::domain::bindings::{BindingsDiff, ToolBindings, VersionMeta};
use crate::ui::bindings::diff_view::DiffView;
use crate::ui::components::Fetched;
use crate::ui::components::{Loaded, LocalTime};
use crate::ui::current;
use leptos::prelude::*;

/// Saved versions, newest first; View diff shows what restoring one would
/// change; Restore (asking first if there are unsaved edits) reloads the
/// page's data.
#[component]
pub fn History(
    history: Fetched<Vec<VersionMeta>>,
    version: RwSignal<i64>,
    saved: RwSignal<ToolBindings>,
    edited: RwSignal<ToolBindings>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let restore = ServerAction::<RestoreBindings>::new();
    let restore_result = restore.value();
    let viewing = RwSignal::new(None::<(i64, Result<BindingsDiff, String>)>);
    Effect::new(move |_| {
        if let Some(Ok(_)) = current(&restore_result) {
            reload.update(|n| *n += 1);
        }
    });
    let show_diff = move |v: i64| {
        leptos::task::spawn_local(async move {
            // `try_`: the page may have been left while the version loaded.
            let result = match get_bindings_version(v).await {
                Ok(old) => match saved
                    .try_with_untracked(|now| BindingsDiff::between(now, &old.bindings))
                {
                    Some(diff) => Ok(diff),
                    None => return,
                },
                Err(e) => Err(e.to_string()),
            };
            viewing.set(Some((v, result)));
        });
    };
    view! {
        <section class="panel" data-testid="history">
            <h2>"History"</h2>
            {move || {
                current(&restore_result)
                    .and_then(Result::err)
                    .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
            }}
            <Loaded resource=history loading="Loading history…" let:list>
                <ol class="history">
                    <For each=move || list.clone() key=|meta| meta.version let:meta>
                        <VersionRow meta version saved edited restore show_diff />
                    </For>
                </ol>
            </Loaded>
            {move || {
                viewing
                    .get()
                    .map(|(v, result)| match result {
                        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                        Ok(diff) => {
                            let heading = format!(
                                "Restoring v{v} would change the current version by {}",
                                diff.counts(),
                            );
                            view! { <DiffView heading diff testid="diff" /> }.into_any()
                        }
                    })
            }}
        </section>
    }
}

/// One saved version with its View diff and Restore buttons (Restore is off
/// for the current version and while a restore runs).
#[component]
fn VersionRow<D>(
    meta: VersionMeta,
    version: RwSignal<i64>,
    saved: RwSignal<ToolBindings>,
    edited: RwSignal<ToolBindings>,
    restore: ServerAction<RestoreBindings>,
    show_diff: D,
) -> impl IntoView
where
    D: Fn(i64) + Copy + Send + Sync + 'static,
{
    let restoring = restore.pending();
    let v = meta.version;
    let current = v == version.get_untracked();
    view! {
        <li data-version=v>
            <div>
                <strong>{format!("v{v}")}</strong>
                <span>{format!(" · {} · ", meta.author)}</span>
                <LocalTime ms=meta.created_at * 1000 />
                <span class="badge" class:hidden=!current>
                    "current"
                </span>
            </div>
            <div class="muted small">{meta.summary.clone()}</div>
            <div class="history-actions">
                <button type="button" class="button ghost small" on:click=move |_| show_diff(v)>
                    "View diff"
                </button>
                <button
                    type="button"
                    class="button ghost small"
                    disabled=move || current || restoring.try_get().unwrap_or(true)
                    on:click=move |_| {
                        if edited.with_untracked(|e| saved.with_untracked(|s| e != s)) {
                            let ok = window()
                                .confirm_with_message(
                                    "Discard your unsaved changes and restore this version?",
                                )
                                .unwrap_or(false);
                            if !ok {
                                return;
                            }
                        }
                        restore
                            .dispatch(RestoreBindings {
                                restore: v,
                                current: version.get_untracked(),
                            });
                    }
                >
                    "Restore"
                </button>
            </div>
        </li>
    }
}
