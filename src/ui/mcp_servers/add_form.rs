//! The form that adds a connected MCP server: its name, its Streamable
//! HTTP URL and its headers, one `Name: value` a line (a bearer token, a
//! key). A real form (`ActionForm`), so it works before hydration; a
//! refused field is named beside it, and the headers are cleared after
//! an add — they are never shown again.

use crate::api::mcp_servers::AddMcpServer;
use crate::domain::limits::{MCP_SERVER_NAME_MAX_CHARS, MCP_URL_MAX_BYTES};
use crate::domain::mcp_server_view::ServerView;
use crate::error::ApiError;
use crate::ui::components::FieldProblem;
use crate::ui::current;
use leptos::html::Form;
use leptos::prelude::*;

/// The form; `on_added` gets each server added, as the add answered it.
#[component]
pub fn AddServer<F>(on_added: F) -> impl IntoView
where
    F: Fn(ServerView) + Copy + Send + Sync + 'static,
{
    let add = ServerAction::<AddMcpServer>::new();
    let form = NodeRef::<Form>::new();
    Effect::new(move |_| {
        if let Some(Ok(server)) = current(&add.value()) {
            if let Some(form) = form.get_untracked() {
                form.reset();
            }
            on_added(server);
        }
    });
    // The refusal of `field` (or of one of its parts, `headers.<name>`),
    // naming the field.
    let problem = move |field: &'static str| {
        move || match current(&add.value()) {
            Some(Err(ApiError::Invalid(e)))
                if e.field == field || e.field.starts_with(&format!("{field}.")) =>
            {
                Some(e.to_string())
            }
            _ => None,
        }
    };
    let other = move || match current(&add.value()) {
        Some(Err(ApiError::Invalid(_))) | Some(Ok(_)) | None => None,
        Some(Err(e)) => Some(e.to_string()),
    };
    view! {
        <section class="panel" data-testid="add-mcp-server">
            <h2>"Add a server"</h2>
            <ActionForm action=add node_ref=form>
                <div class="row3">
                    <div class="field">
                        <label for="mcp-name">"Name"</label>
                        <input id="mcp-name" type="text" name="name" required placeholder="everything"
                            maxlength=MCP_SERVER_NAME_MAX_CHARS.to_string() />
                        <FieldProblem message=problem("name") testid="add-error-name" />
                    </div>
                    <div class="field">
                        <label for="mcp-url">"URL"</label>
                        <input id="mcp-url" type="text" inputmode="url" name="url" required placeholder="http://127.0.0.1:3001/mcp"
                            maxlength=MCP_URL_MAX_BYTES.to_string() />
                        <FieldProblem message=problem("url") testid="add-error-url" />
                    </div>
                </div>
                <div class="field">
                    <label for="mcp-headers">"Headers"</label>
                    <textarea id="mcp-headers" name="headers" rows="2" autocomplete="off"
                        placeholder="Authorization: Bearer …"></textarea>
                    <small class="muted">"One “Name: value” a line, sent with every request to the server; never shown again."</small>
                    <FieldProblem message=problem("headers") testid="add-error-headers" />
                </div>
                <button type="submit" class="button primary" disabled=move || add.pending().get()>
                    "Add server"
                </button>
                {move || other().map(|e| view! { <p class="error" role="alert" data-testid="add-status">{e}</p> })}
            </ActionForm>
        </section>
    }
}
