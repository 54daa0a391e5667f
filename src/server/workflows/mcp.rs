//! The workflow-editing MCP server at `/mcp` (Streamable HTTP, `rmcp`):
//! the hands of the workflow-editing agent, and of any MCP client an admin
//! connects (an IDE, MCP Inspector). Exactly eleven tools, described for a
//! model, each acting through `server::workflows` — the same code as the
//! settings page and the JSON API. Who acts comes from authentication (an
//! API key with `workflows:write`, or the signed-in admin), never from an
//! argument; a refused edit is a tool error the model can read.

use crate::domain::actor::Actor;
use crate::domain::limits::excerpt;
use crate::domain::workflow_def::{trigger_types, Edit, StepType};
use crate::error::ApiError;
use crate::server::http::mcp_sessions::McpSessions;
use crate::server::{workflows, AppState, ServerError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Extensions,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Who is editing: put into the HTTP request's extensions once the API key
/// or the admin's sign-in was checked.
#[derive(Debug, Clone)]
pub struct Editor {
    /// Who acts: attributed by name (`Ada Admin`, `API key “ide”`), and
    /// held to the bindings for step tools if a key.
    pub actor: Actor,
}

/// The service mounted at `/mcp`.
pub type WorkflowMcpService = StreamableHttpService<WorkflowMcp, McpSessions>;

/// Builds the service (authentication happens before it; see `service` in
/// `agent::mcp` for why the Host check is off); its sessions are the
/// state's `workflow_mcp`, capped per API key or admin.
pub fn service(state: AppState, shutdown: CancellationToken) -> WorkflowMcpService {
    let sessions = state.workflow_mcp.clone();
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(crate::domain::limits::API_BODY_MAX_BYTES)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown);
    StreamableHttpService::new(
        move || {
            Ok(WorkflowMcp {
                state: state.clone(),
                acting: None,
            })
        },
        sessions,
        config,
    )
}

/// One MCP session's handler.
pub struct WorkflowMcp {
    state: AppState,
    /// Who acts when there is no HTTP request to say (the in-process
    /// client of the chat step, made for the signed-in admin).
    acting: Option<Editor>,
}

impl WorkflowMcp {
    /// Who edits: the one the HTTP request was authenticated as, or the
    /// in-process client's admin.
    fn editor(&self, ext: &Extensions) -> Result<Actor, McpError> {
        ext.get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Editor>())
            .or(self.acting.as_ref())
            .map(|e| e.actor.clone())
            .ok_or_else(|| McpError::invalid_request("unauthenticated request", None))
    }
}

/// The in-process MCP client the workflow chat lists and calls its tools
/// through: a handler of this server acting as `editor`, joined to rmcp's
/// client over an in-memory pipe (no HTTP, no second registry of tools).
pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Bytes the in-memory pipe between client and handler buffers.
const PIPE_BYTES: usize = 256 * 1024;

/// Connects a [`Client`] acting as `editor` (initialised, ready to call).
pub async fn client(state: &AppState, editor: Editor) -> Result<Client, ServerError> {
    use rmcp::ServiceExt;
    let (server_end, client_end) = tokio::io::duplex(PIPE_BYTES);
    let handler = WorkflowMcp {
        state: state.clone(),
        acting: Some(editor),
    };
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end)
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))
}

fn schema(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    let value = json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

const WORKFLOW: &str =
    "The workflow's id (its uuid), e.g. `idv`; from get_workflow_details or the page address.";

/// The eleven tools, in the order a model would use them.
pub fn tools() -> Vec<Tool> {
    let wf = json!({"type": "string", "description": WORKFLOW});
    let step =
        json!({"type": "string", "description": "The step's uuid, from get_workflow_details."});
    vec![
        Tool::new("get_workflow_details", "Returns the workflow: name, version, start trigger (uuid, type, filter rules) and its steps in order (uuid, type, name, system prompt, tools). Call this first, and again after changes, to get the uuids other tools need.", schema(json!({"workflow_uuid": wf}), &["workflow_uuid"])),
        Tool::new("list_available_triggers", "Lists the start trigger types (id, name, description, and the JSON Schema their filter rules must satisfy). Call before set_trigger.", schema(json!({}), &[])),
        Tool::new("set_trigger", "Sets (or replaces) what starts the workflow, with empty filter rules. Returns the workflow with the new trigger's uuid; then call update_trigger_settings to set its filter rules.", schema(json!({"workflow_uuid": wf, "trigger_type_id": {"type": "string", "description": "An id from list_available_triggers, e.g. `inbound_call`."}}), &["workflow_uuid", "trigger_type_id"])),
        Tool::new("update_trigger_settings", "Replaces the filter rules of a trigger (the trigger's uuid from get_workflow_details). The rules must satisfy the trigger type's schema (list_available_triggers); a refusal says which rule failed.", schema(json!({"trigger_uuid": {"type": "string"}, "filter_rules": {"type": "object", "description": "The rules, e.g. {\"calledNumbers\": [\"+441234567890\"]} for inbound_call."}}), &["trigger_uuid", "filter_rules"])),
        Tool::new("list_available_step_types", "Lists the step types: `custom_llm` (a model turn with its own system prompt, no tools) and `custom_agent` (an agent with a system prompt and tools). Call before add_step.", schema(json!({}), &[])),
        Tool::new("add_step", "Adds a step at the end of the workflow. Returns the workflow with the new step's uuid; use reorder_steps to move it, update_system_prompt_for_step and update_step_mcp_tools to fill it in.", schema(json!({"workflow_uuid": wf, "step_type": {"type": "string", "enum": ["custom_llm", "custom_agent"]}, "name": {"type": "string", "description": "What people call the step, e.g. `Verify identity`."}}), &["workflow_uuid", "step_type", "name"])),
        Tool::new("remove_step", "Removes a step (its uuid from get_workflow_details). Returns the workflow.", schema(json!({"workflow_uuid": wf, "step_uuid": step}), &["workflow_uuid", "step_uuid"])),
        Tool::new("reorder_steps", "Puts the steps in a new order. Pass every current step's uuid exactly once, in the order wanted (get_workflow_details lists them). Returns the workflow.", schema(json!({"workflow_uuid": wf, "ordered_step_uuids": {"type": "array", "items": {"type": "string"}}}), &["workflow_uuid", "ordered_step_uuids"])),
        Tool::new("update_system_prompt_for_step", "Replaces a step's system prompt (custom_llm and custom_agent steps). Returns the workflow.", schema(json!({"workflow_uuid": wf, "step_uuid": step, "system_prompt": {"type": "string"}}), &["workflow_uuid", "step_uuid", "system_prompt"])),
        Tool::new("list_available_mcp_tools", "Lists the tools a custom_agent step may be given: the catalogue (id, category, description), tools from connected MCP servers included (with `mcpServer`, the server's name, and `available`, whether it still lists the tool). Call before update_step_mcp_tools. Through an API key, a step may only get tools the workflow's bindings allow (get_workflow_details' bound_tools).", schema(json!({}), &[])),
        Tool::new("update_step_mcp_tools", "Sets the tools of a custom_agent step: the full list of tool ids (from list_available_mcp_tools) it may call; tools left out are removed. Returns the workflow.", schema(json!({"workflow_uuid": wf, "step_uuid": step, "enabled_tools": {"type": "array", "items": {"type": "string"}}}), &["workflow_uuid", "step_uuid", "enabled_tools"])),
    ]
}

fn text_arg(args: &Map<String, Value>, key: &str) -> Result<String, String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("`{key}` is required (a string)"))
}

fn list_arg(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| format!("`{key}` is required (an array of strings)"))
}

/// The workflow as a tool returns it.
async fn details(state: &AppState, id: &str) -> Result<Value, ServerError> {
    let found = workflows::get(state, id).await?;
    let rules = state.rules();
    let workflow = rules.workflows().iter().find(|w| w.id.as_str() == id);
    Ok(json!({
        "workflow_uuid": id,
        "name": workflow.map(|w| w.name.clone()),
        "description": workflow.map(|w| w.description.clone()),
        "version": found.version,
        "bound_tools": rules.available(id),
        "trigger": found.definition.trigger,
        "steps": found.definition.steps,
    }))
}

/// The workflow whose trigger is `trigger_uuid`.
fn workflow_of_trigger(state: &AppState, trigger_uuid: &str) -> Result<String, String> {
    let rules = state.rules();
    rules
        .workflow_ids()
        .into_iter()
        .find(|id| {
            rules
                .definition(id)
                .and_then(|d| d.trigger.as_ref())
                .is_some_and(|t| t.uuid == trigger_uuid)
        })
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "there is no trigger `{}`; get_workflow_details shows a workflow's trigger uuid",
                excerpt(trigger_uuid)
            )
        })
}

/// Runs tool `name` for `by`: its result as JSON, or why not (read by the
/// model).
pub async fn run(
    state: &AppState,
    name: &str,
    args: &Map<String, Value>,
    by: &Actor,
) -> Result<Value, String> {
    let readable = |e: ServerError| ApiError::from(e).to_string();
    let edit = |id: String, change: Edit| async move {
        workflows::edit(state, &id, &change, None, by)
            .await
            .map_err(readable)?;
        details(state, &id).await.map_err(readable)
    };
    match name {
        "get_workflow_details" => details(state, &text_arg(args, "workflow_uuid")?)
            .await
            .map_err(readable),
        "list_available_triggers" => Ok(json!(trigger_types())),
        "list_available_step_types" => Ok(json!(StepType::ALL
            .iter()
            .map(|t| json!({"id": t.as_str(), "description": t.description()}))
            .collect::<Vec<_>>())),
        "list_available_mcp_tools" => available_tools(state).await.map_err(readable),
        "set_trigger" => {
            let change = Edit::SetTrigger {
                trigger_type_id: text_arg(args, "trigger_type_id")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        "update_trigger_settings" => {
            let trigger_uuid = text_arg(args, "trigger_uuid")?;
            let filter_rules = args
                .get("filter_rules")
                .cloned()
                .ok_or("`filter_rules` is required (an object)")?;
            let id = workflow_of_trigger(state, &trigger_uuid)?;
            edit(
                id,
                Edit::UpdateTriggerSettings {
                    trigger_uuid,
                    filter_rules,
                },
            )
            .await
        }
        "add_step" => {
            let change = Edit::AddStep {
                step_type: text_arg(args, "step_type")?,
                name: text_arg(args, "name")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        "remove_step" => {
            let change = Edit::RemoveStep {
                step_uuid: text_arg(args, "step_uuid")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        "reorder_steps" => {
            let change = Edit::ReorderSteps {
                ordered_step_uuids: list_arg(args, "ordered_step_uuids")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        "update_system_prompt_for_step" => {
            let change = Edit::UpdateSystemPrompt {
                step_uuid: text_arg(args, "step_uuid")?,
                system_prompt: text_arg(args, "system_prompt")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        "update_step_mcp_tools" => {
            let change = Edit::UpdateStepTools {
                step_uuid: text_arg(args, "step_uuid")?,
                enabled_tools: list_arg(args, "enabled_tools")?,
            };
            edit(text_arg(args, "workflow_uuid")?, change).await
        }
        other => Err(format!(
            "there is no tool `{}`; tools: {}",
            excerpt(other),
            tools()
                .iter()
                .map(|t| t.name.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

impl ServerHandler for WorkflowMcp {
    /// A request for a method this server serves whose params rmcp could
    /// not read: invalid params saying why, not "method not found".
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(crate::server::http::mcp_requests::refused(
            &request,
            crate::server::http::mcp_requests::WORKFLOW_METHODS,
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("switchboard-workflows", env!("CARGO_PKG_VERSION")))
            .with_instructions("Edits Switchboard workflow definitions: start trigger and ordered steps. Start with get_workflow_details; every change is versioned and attributed to the signed-in user or API key.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.editor(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let by = self.editor(&context.extensions)?;
        let args = request.arguments.unwrap_or_default();
        Ok(match run(&self.state, &request.name, &args, &by).await {
            Ok(value) => {
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
                result.structured_content = Some(json!({"result": value}));
                result
            }
            Err(reason) => CallToolResult::error(vec![ContentBlock::text(reason)]),
        }
        .into())
    }
}

/// The catalogue as `list_available_mcp_tools` answers it: each tool's id,
/// category and description, and for a tool imported from a connected MCP
/// server that server's name and whether it still lists the tool.
async fn available_tools(state: &AppState) -> Result<Value, ServerError> {
    let catalogue = crate::server::store::bindings::tools(&state.db).await?;
    let servers = crate::server::mcp_servers::list(state).await?;
    let upstream = |id: &str| {
        servers.iter().find_map(|s| {
            let tool = s.tools.iter().find(|t| t.id == id)?;
            Some((s.name.as_str(), tool.available))
        })
    };
    Ok(json!(catalogue
        .iter()
        .map(|t| {
            let mut entry =
                json!({"id": t.id, "category": t.category, "description": t.description});
            if let Some((server, available)) = upstream(t.id.as_str()) {
                entry["mcpServer"] = json!(server);
                entry["available"] = json!(available);
            }
            entry
        })
        .collect::<Vec<_>>()))
}
