//! The session's tools over MCP: `/api/sessions/{id}/mcp` is a Streamable
//! HTTP MCP server (the `rmcp` crate) for agents that speak MCP. It lists
//! exactly the tools the session may call now (the one rule engine:
//! workflow or agent tools, then the plugin's), sends
//! `notifications/tools/list_changed` whenever they change (workflow or
//! agent switch, a bindings or agents save, a plugin's registration), and
//! `tools/call` goes through the same enforcement, recording and relay as
//! `POST …/tool-calls`. Its one prompt, `system`, is the system prompt the
//! session's `Listing` gives every door (a lesson's, an agent's, or a
//! workflow's with its current step's instructions);
//! `notifications/prompts/list_changed` says when it may have changed.
//!
//! The session token authenticates every request before rmcp sees it; the
//! MCP session is bound to the Switchboard session it was opened on, so
//! its id cannot be replayed on another session's URL.

use crate::domain::agent_session::{CallResponse, CallStatus};
use crate::server::agent::listing::Listing;
use crate::server::agent::sessions;
use crate::server::http::mcp_sessions::McpSessions;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::AppState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Extensions,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The `event:` names on a session's stream after which its tool list may
/// differ: the list itself, or a plugin tool's definition.
const TOOL_EVENTS: [&str; 2] = ["tools_changed", crate::domain::plugin::AVAILABILITY_EVENT];
/// The `event:` names after which the session's prompt may differ: a step
/// change, an agent change.
const PROMPT_EVENTS: [&str; 2] = ["workflow_update", "agent_changed"];
/// The name of the session's one MCP prompt.
const SYSTEM_PROMPT: &str = "system";

/// Which list a notification is about.
#[derive(Debug, Clone, Copy)]
enum Changed {
    Tools,
    Prompts,
}

/// Who is calling: put into the HTTP request's extensions once the session
/// token was checked for `session`.
#[derive(Debug, Clone)]
pub struct McpCaller {
    /// The Switchboard session.
    pub session: String,
    /// That session as the door-keeper read it for this request: a call
    /// starts from it (and re-reads it under the session's call lock, as
    /// every door's call does) instead of reading it once more.
    pub row: SessionRow,
}

/// The MCP service mounted at `/api/sessions/{id}/mcp`.
pub type McpService = StreamableHttpService<SessionMcp, McpSessions>;

/// Builds the service. Every request carries a session token, which a
/// page on another site cannot attach, so the Host check (DNS rebinding
/// defence for unauthenticated local servers) is off and the server works
/// behind any public name; `shutdown` ends open streams on shutdown. The
/// sessions are the state's `session_mcp` (capped per agent session,
/// closed after `MCP_SESSION_IDLE_SECS` idle and when the session ends).
pub fn service(state: AppState, shutdown: CancellationToken) -> McpService {
    let sessions = state.session_mcp.clone();
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(crate::domain::limits::API_BODY_MAX_BYTES)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown);
    StreamableHttpService::new(move || Ok(SessionMcp::new(state.clone())), sessions, config)
}

/// One MCP session's handler.
pub struct SessionMcp {
    state: AppState,
    bound: OnceLock<String>,
    alive: CancellationToken,
    _guard: DropGuard,
}

fn caller(ext: &Extensions) -> Option<&McpCaller> {
    ext.get::<axum::http::request::Parts>()?
        .extensions
        .get::<McpCaller>()
}

impl SessionMcp {
    fn new(state: AppState) -> Self {
        let alive = CancellationToken::new();
        Self {
            state,
            bound: OnceLock::new(),
            _guard: alive.clone().drop_guard(),
            alive,
        }
    }

    /// The Switchboard session of this request: the caller's, which must be
    /// the one this MCP session was opened on.
    fn session(&self, ext: &Extensions) -> Result<String, McpError> {
        Ok(self.caller(ext)?.session.clone())
    }

    /// This request's caller, whose session must be the one this MCP
    /// session was opened on.
    fn caller<'a>(&self, ext: &'a Extensions) -> Result<&'a McpCaller, McpError> {
        let caller = caller(ext)
            .ok_or_else(|| McpError::invalid_request("unauthenticated request", None))?;
        match self.bound.get() {
            Some(bound) if *bound != caller.session => Err(McpError::invalid_request(
                "this MCP session belongs to another Switchboard session",
                None,
            )),
            _ => Ok(caller),
        }
    }

    /// The session's [`Listing`] now.
    async fn listing(&self, session: &str) -> Result<Listing, McpError> {
        let row = sessions::get(&self.state, session).await.map_err(|e| {
            McpError::invalid_request(crate::error::ApiError::from(e).to_string(), None)
        })?;
        Listing::of(&self.state, &row)
            .await
            .map_err(|_| McpError::internal_error("unreadable session", None))
    }

    /// The session's tools now: its [`Listing`], as MCP tools.
    async fn tools(&self, session: &str) -> Result<Vec<Tool>, McpError> {
        let listing = self.listing(session).await?;
        Ok(listing
            .tools
            .into_iter()
            .map(|t| {
                let d = t.declaration;
                let schema = match d.parameters {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect())
    }

    /// Waits for `session`'s tool changes and tells the client, until
    /// `stop` or the session's stream closes (it ended).
    async fn forward_changes(
        state: AppState,
        session: String,
        stop: CancellationToken,
        notify: impl Fn(Changed) -> futures_util::future::BoxFuture<'static, bool> + Send + 'static,
    ) {
        let mut sub = state.hub.listen(&session);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                frame = sub.recv() => match frame {
                    Ok(f) if PROMPT_EVENTS.contains(&f.name.as_str()) => {
                        if !notify(Changed::Prompts).await {
                            break;
                        }
                    }
                    Ok(f) if !TOOL_EVENTS.contains(&f.name.as_str()) => {}
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if !notify(Changed::Tools).await {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
            }
        }
    }
}

/// A `tools/call` answer from Switchboard's: the result as JSON text (and
/// structured), or the refusal, or a built-in's failed answer, as a tool
/// error the model can read.
fn call_result(response: CallResponse) -> CallToolResult {
    let structured = serde_json::to_value(&response).unwrap_or_default();
    let mut result = match (response.allowed, response.status, response.result, response.reason) {
        (true, CallStatus::Awaiting, _, _) => CallToolResult::success(vec![ContentBlock::text(format!(
            "Allowed; this tool is executed by the agent backend: report its result for call {} at POST /api/sessions/{{id}}/tool-calls/{}/result.",
            response.call_id, response.call_id
        ))]),
        // A built-in that ran and failed (a todo tool's `{"success": false, …}`):
        // its answer, flagged as a tool error.
        (true, CallStatus::Failed, Some(result), _) => CallToolResult::error(vec![ContentBlock::text(result.to_string())]),
        (true, _, Some(result), _) => CallToolResult::success(vec![ContentBlock::text(result.to_string())]),
        (true, _, None, _) => CallToolResult::success(vec![ContentBlock::text("done")]),
        (false, _, _, reason) => CallToolResult::error(vec![ContentBlock::text(
            reason.unwrap_or_else(|| "refused".into()),
        )]),
    };
    result.structured_content = Some(structured);
    result
}

impl ServerHandler for SessionMcp {
    /// A request for a method this server serves whose params rmcp could
    /// not read: invalid params saying why, not "method not found".
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(crate::server::http::mcp_requests::refused(
            &request,
            crate::server::http::mcp_requests::SESSION_METHODS,
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("switchboard", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "The tools this agent session may call now. The list changes as the session moves (workflow or agent switch, a plugin's registration): follow notifications/tools/list_changed. The prompt `system` is the system prompt to follow now (a workflow step's instructions included); it changes with the session (notifications/prompts/list_changed). A refused call answers with a tool error saying why.",
        )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let caller = caller(&context.extensions)
            .ok_or_else(|| McpError::invalid_request("unauthenticated request", None))?;
        let _ = self.bound.set(caller.session.clone());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Some(session) = self.bound.get().cloned() else {
            return;
        };
        let peer = context.peer.clone();
        tokio::spawn(Self::forward_changes(
            self.state.clone(),
            session,
            self.alive.clone(),
            move |changed| {
                let peer = peer.clone();
                Box::pin(async move {
                    match changed {
                        Changed::Tools => peer.notify_tool_list_changed().await.is_ok(),
                        Changed::Prompts => peer.notify_prompt_list_changed().await.is_ok(),
                    }
                })
            },
        ));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let session = self.session(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(self.tools(&session).await?))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            SYSTEM_PROMPT,
            Some("The system prompt this session's model follows now: its lesson's, its agent's, or its workflow's with the current step's instructions."),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != SYSTEM_PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt `{}`; this session has one: `{SYSTEM_PROMPT}`",
                    crate::domain::limits::excerpt(&request.name)
                ),
                None,
            ));
        }
        let session = self.session(&context.extensions)?;
        let listing = self.listing(&session).await?;
        let text = listing.system_prompt().unwrap_or_default().to_owned();
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("The session's system prompt now")
                .into(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let row = self.caller(&context.extensions)?.row.clone();
        let arguments = request.arguments.map_or_else(|| json!({}), Value::Object);
        match sessions::call(&self.state, row, &request.name, arguments).await {
            Ok(response) => Ok(call_result(response).into()),
            // Bad input (a name that is no tool id, arguments too large, an
            // ended session): the model reads why.
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(
                crate::error::ApiError::from(e).to_string(),
            )])
            .into()),
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let Some(session) =
            caller(&context.request_context().extensions).map(|c| c.session.clone())
        else {
            return Ok(());
        };
        let stop = CancellationToken::new();
        let sink = context.sink().clone();
        let forward =
            Self::forward_changes(self.state.clone(), session, stop.clone(), move |changed| {
                let sink = sink.clone();
                Box::pin(async move {
                    match changed {
                        Changed::Tools => sink.notify_tool_list_changed().await.is_ok(),
                        Changed::Prompts => sink.notify_prompt_list_changed().await.is_ok(),
                    }
                })
            });
        tokio::select! {
            _ = context.cancelled() => stop.cancel(),
            _ = forward => {}
        }
        Ok(())
    }
}
