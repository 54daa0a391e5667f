//! One step of the workflow-editing chat (`POST
//! /api/workflows/{id}/chat/step`): exactly one action per request, so the
//! browser shows each thought and tool call as it happens.
//!
//! Which action is `domain::workflow_chat::next_action`'s decision. The
//! model gets the system prompt (compiled in from
//! `workflow_agent_prompt.md`), the history and the tool list fetched from
//! the `/mcp` server through an MCP client; a tool call runs through the
//! same client, acting as the signed-in admin — so a forged history can do
//! nothing the admin could not do at `/mcp` themselves. Model failures and
//! unusable tool calls become the assistant's message, never a 500.

use crate::domain::workflow_chat::{
    check, is_complete, next_action, stop_message, Action, ChatMessage, ChatRequest, ChatResponse,
    ToolCall,
};
use crate::error::ApiError;
use crate::server::workflows::mcp::{self, Client, Editor};
use crate::server::{workflows, AppState, ServerError};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use serde_json::{json, Map, Value};

/// The agent's instructions: what it is for, its tools, how to work, with
/// short examples. Kept as a file so it reads (and diffs) as prose.
pub const SYSTEM_PROMPT: &str = include_str!("workflow_agent_prompt.md");

/// The system prompt for workflow `id`, named `name`: the file, then
/// which workflow this conversation edits.
pub fn system_prompt(id: &str, name: &str) -> String {
    format!(
        "{SYSTEM_PROMPT}\n## This conversation\nYou are editing the workflow “{name}”; its workflow_uuid is `{id}`."
    )
}

/// Does the next action of `request` on workflow `id` for `editor`.
/// 404 for an unknown workflow, 422 naming the field for a history that
/// does not hold together, 503 (with what to set) without a model.
pub async fn step(
    state: &AppState,
    id: &str,
    editor: Editor,
    request: ChatRequest,
) -> Result<ChatResponse, ServerError> {
    let before = workflows::get(state, id).await?.version;
    check(&request).map_err(|p| ApiError::invalid(p.field, p.message))?;
    let model = workflows::llm::configured(&state.config.llm)?;
    let limit = state.config.chat_step_limit;
    let action =
        next_action(&request.messages, limit).map_err(|p| ApiError::invalid(p.field, p.message))?;
    let added = match action {
        Action::StopTurn => stop_message(limit),
        Action::CallModel => {
            let client = mcp::client(state, editor).await?;
            let tools = model_tools(&client).await;
            client.cancel().await.ok();
            let tools = tools?;
            let name = state
                .rules()
                .workflows()
                .iter()
                .find(|w| w.id.as_str() == id)
                .map(|w| w.name.clone())
                .unwrap_or_default();
            model
                .next_message(
                    Some(&system_prompt(id, &name)),
                    &request.messages,
                    None,
                    &tools,
                )
                .await
        }
        Action::RunTool(call) => {
            let call = call.clone();
            let client = mcp::client(state, editor).await?;
            let result = run_tool(&client, &call).await;
            client.cancel().await.ok();
            ChatMessage::tool_result(&call.id, result)
        }
    };
    let after = workflows::get(state, id).await?.version;
    let is_complete = is_complete(&added);
    let mut messages = request.messages;
    messages.push(added);
    Ok(ChatResponse {
        conversation_id: request.conversation_id,
        messages,
        is_complete,
        workflow_updated: after != before,
    })
}

/// The MCP server's tools, in chat-completions form.
async fn model_tools(client: &Client) -> Result<Vec<Value>, ServerError> {
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    Ok(tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name,
                "description": t.description,
                "parameters": Value::Object((*t.input_schema).clone()),
            }})
        })
        .collect())
}

/// Runs `call` through the MCP client: the tool's text, or `Error: …` with
/// the reason a model can act on.
async fn run_tool(client: &Client, call: &ToolCall) -> String {
    let args: Map<String, Value> = match serde_json::from_str(&call.function.arguments) {
        Ok(Value::Object(args)) => args,
        _ => {
            return format!(
                "Error: the arguments of `{}` are not a JSON object; send them as one.",
                crate::domain::limits::excerpt(&call.function.name)
            )
        }
    };
    let params = CallToolRequestParams::new(call.function.name.clone()).with_arguments(args);
    match client.call_tool(params).await {
        Ok(result) => {
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .map(|t| t.text.clone())
                .collect();
            let text = text.join("\n");
            if result.is_error == Some(true) {
                format!("Error: {text}")
            } else {
                text
            }
        }
        Err(e) => format!("Error: the tool could not be called ({e})."),
    }
}
