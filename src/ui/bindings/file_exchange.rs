//! The `tool-bindings.json` panel: download the saved document, or load one
//! from a file into the matrix to review and save like any other change (a
//! file without `labels` leaves the labels being edited as they are).

#[cfg(feature = "hydrate")]
use crate::domain::bindings::BindingsFile;
use crate::domain::bindings::ToolBindings;
use leptos::prelude::*;

/// Download the saved document; load one from a file into the matrix (then
/// review and save it like any other change).
#[component]
pub fn FileExchange(edited: RwSignal<ToolBindings>) -> impl IntoView {
    let problem = RwSignal::new(None::<String>);
    // The last file loaded had no labels, so the ones being edited stayed.
    let kept_labels = RwSignal::new(false);
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let input: Option<web_sys::HtmlInputElement> =
                ev.target().and_then(|t| t.dyn_into().ok());
            let Some(file) = input.and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                return;
            };
            leptos::task::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(file.text()).await;
                match text.ok().and_then(|t| t.as_string()) {
                    Some(text) => match crate::ui::components::read_json::<BindingsFile>(&text) {
                        Ok(file) => {
                            let (doc, kept) = edited.with_untracked(|current| file.over(current));
                            edited.set(doc);
                            problem.set(None);
                            kept_labels.set(kept);
                        }
                        Err(e) => {
                            problem.set(Some(format!("Not a tool-bindings document: {e}")));
                            kept_labels.set(false);
                        }
                    },
                    None => problem.set(Some("The file could not be read.".into())),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, edited, kept_labels);
    };
    view! {
        <section class="panel">
            <h2>"tool-bindings.json"</h2>
            <p>
                <a class="button" href="/bindings/tool-bindings.json" download="tool-bindings.json" rel="external">
                    "Download current version"
                </a>
            </p>
            <label class="field">
                <span>"Load a file into the matrix (review, then Save)"</span>
                <input type="file" accept=".json,application/json" data-testid="upload-bindings" on:change=on_file />
            </label>
            {move || problem.get().map(|p| view! { <p class="error">{p}</p> })}
            {move || {
                kept_labels
                    .get()
                    .then(|| {
                        view! {
                            <p class="muted" data-testid="labels-kept">
                                "The file has no labels: the check and step labels stay as they are."
                            </p>
                        }
                    })
            }}
        </section>
    }
}
