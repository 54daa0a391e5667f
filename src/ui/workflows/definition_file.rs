//! The definition as a file: Export downloads what `GET
//! /api/workflows/{id}/definition` answers, Import reads such a file (or a
//! bare definition) and applies it as one `replace_definition` edit, so it
//! passes the rules every edit does, on top of the version shown, and
//! lands in the history like any other save.

use crate::domain::workflow_def::Definition;
use crate::error::ApiError;
use crate::ui::workflows::Editing;
use leptos::prelude::*;

/// Export and Import, beside the definition.
#[component]
pub fn DefinitionFile(editing: Editing) -> impl IntoView {
    let id = editing.page.with_untracked(|p| p.id.clone());
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            let Some(file) = crate::ui::components::file_input::picked_file(&ev) else {
                return;
            };
            leptos::task::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(file.text())
                    .await
                    .ok()
                    .and_then(|t| t.as_string())
                    .unwrap_or_default();
                match definition_of(&text) {
                    Ok(definition) => editing
                        .apply(crate::domain::workflow_def::Edit::ReplaceDefinition { definition }),
                    Err(e) => {
                        let _ = editing.problem.try_set(Some(e));
                    }
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    view! {
        <div class="definition-file" data-testid="definition-file">
            <a
                class="button small"
                href=format!("/api/workflows/{id}/definition")
                download=format!("{id}-workflow.json")
                data-testid="workflow-export"
            >
                "Export definition"
            </a>
            <label class="button small">
                "Import definition…"
                <input
                    type="file"
                    class="visually-hidden"
                    accept=".json,application/json"
                    data-testid="workflow-import"
                    prop:disabled=move || editing.busy.get()
                    on:change=on_file
                />
            </label>
        </div>
    }
}

/// The definition a file holds: an export (`{"workflowId", "version",
/// "definition", …}`) or a bare definition (`{"trigger", "steps"}`).
pub fn definition_of(text: &str) -> Result<Definition, ApiError> {
    let value: serde_json::Value = crate::ui::components::read_json(text)
        .map_err(|e| ApiError::invalid("file", format!("is not JSON: {e}")))?;
    let inner = value.get("definition").cloned().unwrap_or(value);
    serde_json::from_value(inner)
        .map_err(|e| ApiError::invalid("file", format!("is not a workflow definition: {e}")))
}

#[cfg(test)]
mod tests {
    use super::definition_of;

    #[test]
    fn a_file_is_an_export_or_a_bare_definition() {
        let bare = r#"{"trigger": null, "steps": [{"uuid": "a", "stepType": "custom_llm", "name": "Greet"}]}"#;
        let export = format!(r#"{{"workflowId": "idv", "version": 3, "definition": {bare}}}"#);
        assert_eq!(
            definition_of(bare).unwrap(),
            definition_of(&export).unwrap()
        );
        assert_eq!(definition_of(bare).unwrap().steps[0].name, "Greet");
        assert!(definition_of("{not json")
            .unwrap_err()
            .to_string()
            .contains("is not JSON"));
        assert!(definition_of(r#"{"steps": 3}"#)
            .unwrap_err()
            .to_string()
            .contains("is not a workflow definition"));
    }
}
