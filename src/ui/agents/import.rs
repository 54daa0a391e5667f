//! Importing a manifest archive from the `/agents` page: the admin picks a
//! `.zip` or `.tar` in the manifest layout (`VIBES/`, `AGENTS/`, `TOOLS/`),
//! the browser posts the file as it is to `POST /agents/manifests` (the
//! same import as `POST /api/manifests`, authenticated by the session and
//! checked to come from this page), and the page reloads the set. A broken
//! set is refused whole, naming the file and field, and nothing changes.

use crate::error::ApiError;
use leptos::prelude::*;

/// How the last import went (set by the browser's upload only).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Outcome {
    /// Upload under way.
    Busy,
    /// Imported: what the server counted.
    Done(String),
    /// Refused or failed.
    Failed(ApiError),
}

/// The import control; `on_done` runs after a successful import (the page
/// refetches the set).
#[component]
pub fn ManifestImport(on_done: Callback<()>) -> impl IntoView {
    let outcome = RwSignal::new(None::<Outcome>);
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            let Some(file) = crate::ui::components::file_input::picked_file(&ev) else {
                return;
            };
            outcome.set(Some(Outcome::Busy));
            leptos::task::spawn_local(async move {
                let result = upload(file).await;
                if let Ok(text) = &result {
                    outcome.try_set(Some(Outcome::Done(text.clone())));
                    on_done.run(());
                } else if let Err(e) = result {
                    outcome.try_set(Some(Outcome::Failed(e)));
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, on_done);
    };
    let busy = move || outcome.with(|o| matches!(o, Some(Outcome::Busy)));
    view! {
        <section class="panel" data-testid="manifest-import">
            <h2>"Import"</h2>
            <label class="field">
                <span>
                    "Replace every agent and vibe with a .zip or .tar in the manifest layout (tools it carries are added or updated, as JSON Schemas or as Ultravox parameters; an archive of seed 003's repository works as it is; one with tools only keeps the agents and vibes in force). A set that breaks a rule is refused whole."
                </span>
                <input
                    type="file"
                    accept=".zip,.tar,application/zip,application/x-tar"
                    data-testid="import-manifests"
                    disabled=busy
                    on:change=on_file
                />
            </label>
            {move || {
                outcome
                    .get()
                    .map(|o| match o {
                        Outcome::Busy => view! { <p class="muted" role="status">"Importing…"</p> }.into_any(),
                        Outcome::Done(text) => {
                            view! { <p class="ok" role="status" data-testid="import-status">{text}</p> }.into_any()
                        }
                        Outcome::Failed(e) => {
                            view! { <p class="error" role="alert" data-testid="import-status">{e.to_string()}</p> }
                                .into_any()
                        }
                    })
            }}
        </section>
    }
}

/// The words for an import's answer (`{"tools":3,"agents":3,"vibes":1}`,
/// and the files it did not import, if any).
pub fn imported_text(counts: &serde_json::Value) -> String {
    let n = |k: &str| counts.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let kept = counts.get("kept").and_then(|v| v.as_bool()) == Some(true);
    let mut text = if kept {
        format!(
            "Imported {} tools. The archive has no agents or vibes, so the {} vibes and {} agents in force are kept.",
            n("tools"),
            n("vibes"),
            n("agents")
        )
    } else {
        format!(
            "Imported {} vibes, {} agents and {} tools; in force now.",
            n("vibes"),
            n("agents"),
            n("tools")
        )
    };
    let ignored: Vec<String> = counts
        .get("ignored")
        .and_then(|i| i.as_array())
        .into_iter()
        .flatten()
        .map(|i| {
            let field = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or_default();
            format!("{} ({})", field("field"), field("rule"))
        })
        .collect();
    if !ignored.is_empty() {
        text.push_str(&format!(" Not imported: {}.", ignored.join("; ")));
    }
    text
}

/// Posts `file` as it is; the server's answer as words or its error.
#[cfg(feature = "hydrate")]
async fn upload(file: web_sys::File) -> Result<String, ApiError> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let failed = |what: &str| ApiError::Transport(what.to_owned());
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&file);
    let window = web_sys::window().ok_or_else(|| failed("no window"))?;
    let response: web_sys::Response =
        JsFuture::from(window.fetch_with_str_and_init("/agents/manifests", &init))
            .await
            .map_err(|_| failed("the server could not be reached"))?
            .dyn_into()
            .map_err(|_| failed("no response"))?;
    let text = JsFuture::from(response.text().map_err(|_| failed("unreadable answer"))?)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default();
    if response.ok() {
        let counts: serde_json::Value = crate::ui::components::read_json(&text).unwrap_or_default();
        Ok(imported_text(&counts))
    } else {
        Err(crate::ui::components::read_json::<ApiError>(&text)
            .unwrap_or_else(|_| failed(&format!("HTTP {}", response.status()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counts_read_as_words() {
        let counts = serde_json::json!({"tools": 3, "agents": 2, "vibes": 1});
        assert_eq!(
            imported_text(&counts),
            "Imported 1 vibes, 2 agents and 3 tools; in force now."
        );
        let seed = serde_json::json!({"tools": 9, "agents": 3, "vibes": 1, "ignored": [
            {"field": "TOOLS/hangUp/config.json", "rule": "also grouped"}
        ]});
        assert_eq!(
            imported_text(&seed),
            "Imported 1 vibes, 3 agents and 9 tools; in force now. Not imported: TOOLS/hangUp/config.json (also grouped)."
        );
        let tools_only = serde_json::json!({"tools": 2, "agents": 3, "vibes": 1, "kept": true});
        assert_eq!(
            imported_text(&tools_only),
            "Imported 2 tools. The archive has no agents or vibes, so the 1 vibes and 3 agents in force are kept."
        );
    }
}
