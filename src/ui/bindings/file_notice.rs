//! The notice for a start-up file (`SWITCHBOARD_BINDINGS_FILE`) that no
//! longer matches the bindings in force: what importing it would change,
//! and the import itself, saved as a new version like any other save.

use crate::api::bindings::ImportBindingsFile;
use crate::domain::bindings::{BindingsDiff, ToolBindings};
use crate::domain::bindings_file::{BindingsFileStatus, FileComparison};
use crate::ui::bindings::diff_view::DiffView;
use crate::ui::components::Fetched;
use crate::ui::current;
use leptos::prelude::*;

/// Nothing while the file matches (or none is set); otherwise a notice
/// naming the file, with "Review differences" and "Import the file's
/// version" (asking first when the matrix has unsaved edits). A successful
/// import reloads the page's data.
#[component]
pub fn FileNotice(
    file: Fetched<Option<BindingsFileStatus>>,
    version: RwSignal<i64>,
    saved: RwSignal<ToolBindings>,
    edited: RwSignal<ToolBindings>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let import = ServerAction::<ImportBindingsFile>::new();
    let result = import.value();
    Effect::new(move |_| {
        if let Some(Ok(_)) = current(&result) {
            reload.update(|n| *n += 1);
        }
    });
    let on_import = move |_| {
        let unsaved = edited.with_untracked(|e| saved.with_untracked(|s| e != s));
        if unsaved
            && !window()
                .confirm_with_message("Discard your unsaved changes and import the file's version?")
                .unwrap_or(false)
        {
            return;
        }
        import.dispatch(ImportBindingsFile {
            current: version.get_untracked(),
        });
    };
    let notice = move || {
        let status = current(&file).and_then(Result::ok).flatten()?;
        let BindingsFileStatus {
            path, comparison, ..
        } = status;
        let view = match comparison {
            FileComparison::Same => return None,
            FileComparison::Unreadable { problem } => view! {
                <section class="panel notice" data-testid="bindings-file" data-state="unreadable">
                    <p>
                        "The bindings file " <code>{path}</code> " (SWITCHBOARD_BINDINGS_FILE) cannot be used: "
                        {problem} ". The bindings below are the ones in force."
                    </p>
                </section>
            }
            .into_any(),
            FileComparison::Differs { diff } => {
                view! { <Differs path diff import on_import /> }.into_any()
            }
        };
        Some(view)
    };
    // Its own transition: the notice waits for the file's comparison
    // without holding up the matrix, and keeps showing while it refetches.
    view! { <Transition fallback=|| ()>{notice}</Transition> }
}

/// The notice for a file that differs, with its review and import buttons.
#[component]
fn Differs<F>(
    path: String,
    diff: BindingsDiff,
    import: ServerAction<ImportBindingsFile>,
    on_import: F,
) -> impl IntoView
where
    F: Fn(leptos::ev::MouseEvent) + Send + Sync + 'static,
{
    let (result, pending) = (import.value(), import.pending());
    let reviewing = RwSignal::new(false);
    let heading = format!(
        "Importing the file would change the bindings in force by {}",
        diff.counts()
    );
    view! {
        <section class="panel notice" data-testid="bindings-file" data-state="differs">
            <p>
                "The bindings file " <code>{path.clone()}</code>
                " (SWITCHBOARD_BINDINGS_FILE) differs from the bindings in force. The database's bindings are used; import the file's version to use it instead."
            </p>
            <div class="history-actions">
                <button type="button" class="button small" on:click=move |_| reviewing.update(|r| *r = !*r)>
                    {move || if reviewing.get() { "Hide differences" } else { "Review differences" }}
                </button>
                <button
                    type="button"
                    class="button small primary"
                    data-testid="import-bindings-file"
                    disabled=move || pending.try_get().unwrap_or(true)
                    on:click=on_import
                >
                    "Import the file's version"
                </button>
            </div>
            {move || {
                current(&result)
                    .and_then(Result::err)
                    .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
            }}
            <Show when=move || reviewing.get()>
                <DiffView heading=heading.clone() diff=diff.clone() testid="file-diff" />
            </Show>
        </section>
    }
}
