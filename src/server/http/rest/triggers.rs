//! Start triggers over HTTP: starting a workflow by hand (the admin's
//! button, an API key), a chat message, and the hooks platforms call — a
//! webhook and an inbound phone call, authenticated by the workflow's hook
//! secret in the URL — plus the admin's rotation of that secret. Each
//! decides through `domain::start_trigger` and opens through
//! `server::triggers::start`, so the session keeps what started it.

use crate::domain::declaration::DeclarationFormat;
use crate::domain::limits::API_BODY_MAX_BYTES;
use crate::domain::session_origin::{Opener, StartedBy};
use crate::domain::start_trigger::{
    self as decide, Decision, CHANNELS, CHAT_MESSAGE, CHAT_TEXT_MAX_CHARS, DEFAULT_CHANNEL,
    HOOK_BODY_MAX_BYTES, MANUAL,
};
use crate::domain::user::Role;
use crate::domain::workflow_chat::ChatMessage;
use crate::error::ApiError;
use crate::server::http::extract::{
    self, is_json, user_with_role, Admin, ApiKey, BytesBody, CallHook, Hook, JsonBody, Key,
    SignedIn, WebhookHook,
};
use crate::server::{triggers, workflows, AppState, ServerError};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest phone number (or caller id) an inbound call may name.
pub const CALL_NUMBER_MAX_CHARS: usize = 32;

/// Start-trigger routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/workflows/{id}/start", post(start))
        .route("/api/workflows/{id}/hook-secret", post(rotate_secret))
        .route("/api/workflows/{id}/messages", post(message))
        .route(
            "/api/hooks/{workflow}/{secret}",
            post(webhook).layer(DefaultBodyLimit::max(HOOK_BODY_MAX_BYTES)),
        )
        .route(
            "/api/hooks/{workflow}/{secret}/inbound-call",
            post(inbound_call).layer(DefaultBodyLimit::max(HOOK_BODY_MAX_BYTES)),
        )
}

/// A session a start opened: its id and both credentials.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StartedBody {
    session_id: String,
    session_token: String,
    plugin_token: String,
}

/// What a webhook that started the workflow answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AcceptedBody {
    session_id: String,
}

/// A new hook secret, shown this once.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SecretBody {
    workflow_id: String,
    secret: String,
    url: String,
}

/// What a chat message that started the workflow answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChatStartedBody {
    session_id: String,
    session_token: String,
    messages: Vec<ChatMessage>,
}

/// What an inbound call that started the workflow answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CallStartedBody {
    session_id: String,
    session_token: String,
    platform: DeclarationFormat,
    call_config: Value,
}

/// `POST /api/workflows/{id}/start`'s optional body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartOptions {
    /// A signed-in admin trying the workflow: the session is a trial
    /// (listed as one). Ignored for an API key, whose sessions are real.
    #[serde(default)]
    trial: bool,
}

/// Reads a start's body: none (or empty) is no options; otherwise a JSON
/// object of [`StartOptions`], sent as `application/json`: 400 for a body
/// that is not JSON (or not sent as JSON), 422 naming the field for JSON
/// of the wrong shape, as every JSON body is refused.
fn start_options(headers: &HeaderMap, raw: &[u8]) -> Result<StartOptions, ServerError> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(StartOptions::default());
    }
    if !is_json(headers) {
        return Err(ApiError::BadRequest(
            "Expected request with `Content-Type: application/json`".into(),
        )
        .into());
    }
    serde_json::from_slice(raw).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            return ApiError::BadRequest(crate::domain::limits::excerpt(&e.to_string())).into();
        }
        let rule = e.to_string();
        // A wrong type of `trial` names it; an unknown field or bad JSON
        // is the body's.
        let field = if rule.starts_with("invalid type") {
            "trial"
        } else {
            "body"
        };
        ApiError::invalid(field, crate::domain::limits::excerpt(&rule)).into()
    })
}

/// `POST /api/workflows/{id}/start`: opens a session in workflow `id` now,
/// for a signed-in admin (from the app's own pages) or an API key with
/// `sessions`, whatever the workflow's trigger: a person may always start
/// a workflow by hand. 201 with the session and its credentials.
async fn start(
    key: Option<ApiKey>,
    SignedIn(user): SignedIn,
    State(state): State<AppState>,
    method: Method,
    headers: HeaderMap,
    Path(id): Path<String>,
    BytesBody(raw): BytesBody<{ API_BODY_MAX_BYTES }>,
) -> Result<Response, ServerError> {
    let mut opener = match key {
        Some(key) => {
            key.require_any(<extract::Sessions as extract::KeyScope>::SCOPES)?;
            Opener {
                started_by: Some(StartedBy::new(
                    MANUAL,
                    &format!("by API key “{}”", key.name()),
                )),
                ..Opener::key(key.id())
            }
        }
        None => {
            let admin = user_with_role(&state, user.as_ref(), Role::Admin, &method, &headers)?;
            Opener {
                user: Some(admin.0.id),
                started_by: Some(StartedBy::new(
                    MANUAL,
                    &format!("by {}", admin.0.display_name),
                )),
                ..Opener::default()
            }
        }
    };
    // Read once the caller is known. A key's start takes the same options
    // (and is refused for the same bodies), but only a page's start, the
    // signed-in admin's, may be a trial.
    let options = start_options(&headers, &raw)?;
    opener.trial = opener.user.is_some() && options.trial;
    workflows::get(&state, &id).await?;
    let opened = triggers::start(&state, &id, &opener).await?;
    let body = StartedBody {
        session_id: opened.id,
        session_token: opened.token,
        plugin_token: opened.plugin_token,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// `POST /api/workflows/{id}/hook-secret` (the signed-in admin): a new
/// hook secret for the workflow's webhook and inbound-call URLs, replacing
/// the old one at once; 201 with the secret and the URL, shown only now.
async fn rotate_secret(
    _: Admin,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let secret = triggers::rotate_hook_secret(&state, &id).await?;
    let body = SecretBody {
        url: triggers::hook_url(&state, &id, &secret),
        workflow_id: id,
        secret,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// A webhook's body must be an object whose `type` and `event`, when
/// present, are strings (the event type is read from them).
fn check_webhook_body(body: &Value) -> Result<(), ApiError> {
    let Some(fields) = body.as_object() else {
        return Err(ApiError::invalid("body", "must be a JSON object"));
    };
    for name in ["type", "event"] {
        if fields.get(name).is_some_and(|v| !v.is_string()) {
            return Err(ApiError::invalid(name, "must be a string (the event type)"));
        }
    }
    Ok(())
}

/// `POST /api/hooks/{workflow}/{secret}`: a webhook. 202 with the session
/// it opened, or 204 when the trigger's `eventTypes` leave the event out.
async fn webhook(
    hook: Hook<WebhookHook>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<Value, HOOK_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    check_webhook_body(&body)?;
    let started_by = match decide::webhook(&hook.trigger.filter_rules, &body) {
        Decision::Start(s) => s,
        Decision::Skip(why) => {
            tracing::debug!(workflow = %hook.workflow, %why, "webhook filtered out");
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
    };
    let opener = Opener {
        started_by: Some(started_by),
        ..Opener::default()
    };
    let opened = triggers::start(&state, &hook.workflow, &opener).await?;
    let body = AcceptedBody {
        session_id: opened.id,
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// An inbound call, as the platform reports it.
#[derive(Debug, Deserialize)]
struct CallRequest {
    from: String,
    to: String,
    #[serde(default)]
    platform: Option<String>,
}

/// A phone number field: present, at most [`CALL_NUMBER_MAX_CHARS`], one
/// line.
fn check_number(field: &str, value: &str) -> Result<(), ApiError> {
    if value.trim().is_empty() {
        return Err(ApiError::invalid(field, "is required"));
    }
    if value.chars().count() > CALL_NUMBER_MAX_CHARS {
        return Err(ApiError::invalid(
            field,
            format!("must be at most {CALL_NUMBER_MAX_CHARS} characters"),
        ));
    }
    // A number or SIP address is one line: it is shown in lists and logs.
    if value.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            field,
            "may not contain control characters",
        ));
    }
    Ok(())
}

/// `POST /api/hooks/{workflow}/{secret}/inbound-call` `{"from","to",
/// "platform"?}`: a call came in. 201 with the session it opened, its
/// token and the call's configuration in the platform's shape (default
/// Ultravox), or 204 when the trigger's rules leave the call out.
async fn inbound_call(
    hook: Hook<CallHook>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<CallRequest, HOOK_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    check_number("from", &body.from)?;
    check_number("to", &body.to)?;
    let platform = DeclarationFormat::parse(body.platform.as_deref().unwrap_or("ultravox"))
        .map_err(|_| {
            ApiError::invalid("platform", "must be ultravox, gemini, openai or anthropic")
        })?;
    let started_by = match decide::inbound_call(&hook.trigger.filter_rules, &body.from, &body.to) {
        Decision::Start(s) => s,
        Decision::Skip(why) => {
            tracing::debug!(workflow = %hook.workflow, %why, "inbound call filtered out");
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
    };
    let opener = Opener {
        started_by: Some(started_by),
        ..Opener::default()
    };
    let opened = triggers::start(&state, &hook.workflow, &opener).await?;
    let call_config = triggers::call_config(&state, &opened, platform).await?;
    let body = CallStartedBody {
        session_id: opened.id,
        session_token: opened.token,
        platform,
        call_config,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// A chat message for a workflow.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatRequest {
    text: String,
    #[serde(default)]
    channel: Option<String>,
}

/// `POST /api/workflows/{id}/messages` `{"text","channel"?}` (API key with
/// `sessions`): a chat message to a workflow whose trigger is
/// `chat_message`. 201 with the session it opened and the history after
/// the agent runner's whole turn (the message, tool calls and results, the
/// answer), 204 when the trigger's channels or keywords leave it out, 409
/// when the workflow does not start on chat messages, 503 without a model.
async fn message(
    key: Key<extract::Sessions>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ChatRequest>,
) -> Result<Response, ServerError> {
    workflows::get(&state, &id).await?;
    let text = body.text.trim();
    if text.is_empty() {
        return Err(ApiError::invalid("text", "is required").into());
    }
    if text.chars().count() > CHAT_TEXT_MAX_CHARS {
        return Err(ApiError::TooLarge {
            field: "text".into(),
            limit: format!("{CHAT_TEXT_MAX_CHARS} characters"),
        }
        .into());
    }
    let channel = body.channel.as_deref().unwrap_or(DEFAULT_CHANNEL);
    if !CHANNELS.contains(&channel) {
        return Err(ApiError::invalid(
            "channel",
            format!("must be one of {}", CHANNELS.join(", ")),
        )
        .into());
    }
    let Some(trigger) =
        triggers::trigger_of(&state, &id).filter(|t| t.trigger_type_id == CHAT_MESSAGE)
    else {
        return Err(ApiError::Conflict(format!(
            "workflow {id} does not start on chat messages: set its start trigger to chat_message"
        ))
        .into());
    };
    let started_by = match decide::chat_message(&trigger.filter_rules, text, channel) {
        Decision::Start(s) => s,
        Decision::Skip(why) => {
            tracing::debug!(workflow = %id, %why, "chat message filtered out");
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
    };
    // Nothing is opened that no model could answer.
    if let Err(unavailable) = crate::server::workflows::llm::configured(&state.config.llm) {
        return Err(unavailable.into());
    }
    let opener = Opener {
        started_by: Some(started_by),
        ..Opener::key(key.id())
    };
    let opened = triggers::start(&state, &id, &opener).await?;
    let messages = triggers::answer_message(&state, &opened, text).await?;
    let body = ChatStartedBody {
        session_id: opened.id,
        session_token: opened.token,
        messages,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}
