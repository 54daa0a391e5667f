//! The session API agent backends drive, and the event streams watchers
//! subscribe to.
//!
//! A session's own calls authenticate with its session token
//! (`Authorization: Bearer st_…`, or `?token=` where a browser's
//! `EventSource` cannot set headers), or for what a plugin may do with its
//! plugin token (`pt_…`); every route asks `sessions::admit` which of them
//! may do what, through its `extract::Session<Act>` argument. People and
//! API keys list and watch only the sessions `domain::ownership` lets them
//! see (`extract::Viewing`, `extract::Watching`, one door:
//! `sessions::watchable`); another teacher's session is 404.

use crate::domain::agent_session::{SessionEvent, StatePatch};
use crate::domain::api_key::Scope;
use crate::domain::declaration::ultravox::with_credential;
use crate::domain::declaration::DeclarationFormat;
use crate::domain::lesson::nudge::{Speaker, TURN_TEXT_MAX_BYTES};
use crate::domain::limits::{bytes_in_words, CALLS_PAGE_MAX, STUDENT_MAX_CHARS};
use crate::domain::session_origin::Opener;
use crate::domain::student::StudentLabel;
use crate::error::ApiError;
use crate::server::agent::hub::Frame;
use crate::server::agent::listing::Listing;
use crate::server::agent::sessions;
use crate::server::http::extract::{
    self, BearerToken, CallId, CallTool, ChangeState, End, IssuePluginToken, JsonBody, Key,
    ReadTools, ReportResult, ReportTurn, Session, Viewing, Watching,
};
pub(crate) use crate::server::http::rest::event_streams::event_stream;
use crate::server::http::rest::event_streams::{list_stream, session_stream};
use crate::server::students;
use crate::server::{AppState, ServerError};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Session routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions", post(open).get(list))
        .route("/api/sessions/events", get(list_events))
        .route(
            "/api/sessions/{id}/tools",
            get(tools).patch(super::plugins::patch_tools),
        )
        .route("/api/sessions/{id}/tool-calls", post(call))
        .route(
            "/api/sessions/{id}/tool-calls/{call_id}/result",
            post(report_result),
        )
        .route("/api/sessions/{id}/state", patch(patch_state))
        .route("/api/sessions/{id}/turns", post(report_turn))
        .route("/api/sessions/{id}/end", post(end))
        .route("/api/sessions/{id}/plugin-token", post(plugin_token))
        .route("/api/sessions/{id}/events", get(events))
        .route("/api/sessions/{id}/calls", get(calls))
}

/// `?format=`, and for paging calls `?before=` and `?limit=` (an event
/// stream's `?token=` is read by [`StreamToken`]).
#[derive(Debug, Deserialize, Default)]
pub struct SessionQuery {
    format: Option<String>,
    before: Option<i64>,
    limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenRequest {
    /// The workflow to start in, for an agent session…
    #[serde(default)]
    workflow_id: Option<String>,
    /// …or the lesson to run, for a tutor session.
    #[serde(default)]
    lesson_id: Option<i64>,
    /// Who a tutor session is for: a name, which finds or makes the lesson
    /// owner's student record of that name…
    #[serde(default)]
    student: Option<String>,
    /// …or the id of one of the lesson owner's student records.
    #[serde(default)]
    student_id: Option<i64>,
    /// …or the vibe to run in, for a session with agents.
    #[serde(default)]
    vibe_id: Option<String>,
    /// The vibe's agent to start with (default: its default agent).
    #[serde(default)]
    agent_id: Option<String>,
    /// Whether Switchboard runs the demo's built-in tools (default yes);
    /// `false` for a backend that executes its own and reports results.
    #[serde(default = "yes")]
    run_builtins: bool,
}

fn yes() -> bool {
    true
}

/// What opening a session answers: its id and its two credentials.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OpenedBody {
    session_id: String,
    session_token: String,
    plugin_token: String,
}

/// What a new plugin token answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PluginTokenBody {
    session_id: String,
    plugin_token: String,
}

async fn open(
    key: Key<extract::Sessions>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<OpenRequest>,
) -> Result<Response, ServerError> {
    if body.agent_id.is_some() && body.vibe_id.is_none() {
        return Err(ApiError::invalid("agentId", "is only for vibe sessions").into());
    }
    if body.student.is_some() && body.lesson_id.is_none() {
        return Err(ApiError::invalid("student", "is only for lesson sessions").into());
    }
    if body.student_id.is_some() && body.lesson_id.is_none() {
        return Err(ApiError::invalid("studentId", "is only for lesson sessions").into());
    }
    let opened = match (&body.workflow_id, body.lesson_id, &body.vibe_id) {
        (Some(workflow), None, None) => {
            sessions::open(&state, workflow, &Opener::key(key.id()), body.run_builtins).await?
        }
        (None, None, Some(vibe)) => {
            sessions::open_vibe(
                &state,
                vibe,
                body.agent_id.as_deref(),
                &Opener::key(key.id()),
            )
            .await?
        }
        (_, _, Some(_)) => {
            return Err(ApiError::invalid(
                "vibeId",
                "give exactly one of workflowId, lessonId and vibeId",
            )
            .into())
        }
        (None, Some(lesson_id), None) => {
            key.require(Scope::LessonsRead)?;
            open_lesson(&state, &key, lesson_id, &body).await?
        }
        _ => {
            return Err(ApiError::invalid(
                "workflowId",
                "give exactly one of workflowId, lessonId and vibeId",
            )
            .into())
        }
    };
    Ok((
        StatusCode::CREATED,
        Json(OpenedBody {
            session_id: opened.id,
            session_token: opened.token,
            plugin_token: opened.plugin_token,
        }),
    )
        .into_response())
}

/// Opens a tutor session of lesson `lesson_id` with key `key`, for the
/// student `body` names (`student`, a name; or `studentId`), if any.
async fn open_lesson(
    state: &AppState,
    key: &crate::server::http::extract::ApiKey,
    lesson_id: i64,
    body: &OpenRequest,
) -> Result<sessions::Opened, ServerError> {
    let name = body
        .student
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if name.is_some_and(|s| s.chars().count() > STUDENT_MAX_CHARS) {
        return Err(ApiError::invalid(
            "student",
            format!("must be at most {STUDENT_MAX_CHARS} characters"),
        )
        .into());
    }
    let label = name
        .map(|n| StudentLabel::name(n, "student"))
        .transpose()
        .map_err(ApiError::Invalid)?;
    if label.is_some() && body.student_id.is_some() {
        return Err(ApiError::invalid("studentId", "give studentId or student, not both").into());
    }
    let lesson =
        crate::server::store::lessons::get_for_key(&state.db, key.viewer(), lesson_id).await?;
    let opener = key
        .0
        .maker
        .map(|(id, role)| crate::domain::student::Viewer::of(id, role));
    let record =
        students::for_lesson(state, opener, &lesson, body.student_id, label.as_ref()).await?;
    let context = match &record {
        Some(student) => Some(students::context(state, &lesson, student).await?),
        None => None,
    };
    let shown = record.as_ref().map(|s| s.name.as_str());
    let run = sessions::lesson_run(lesson_id, &lesson.draft, shown, context);
    sessions::open_lesson(state, run, &Opener::key(key.id())).await
}

/// `POST /api/sessions/{id}/plugin-token` (session token): a new plugin
/// token for the session, replacing the one it had.
async fn plugin_token(
    State(state): State<AppState>,
    session: Session<IssuePluginToken>,
) -> Result<Response, ServerError> {
    let plugin_token = sessions::issue_plugin_token(&state, &session.row).await?;
    Ok((
        StatusCode::CREATED,
        Json(PluginTokenBody {
            session_id: session.into_inner().row.id,
            plugin_token,
        }),
    )
        .into_response())
}

/// `GET /api/sessions` (the signed-in account, or an API key with
/// `sessions`): the sessions the caller may see (`domain::ownership`).
async fn list(viewing: Viewing, State(state): State<AppState>) -> Result<Response, ServerError> {
    Ok(Json(sessions::list(&state, viewing.viewer).await?).into_response())
}

async fn tools(
    State(state): State<AppState>,
    Query(query): Query<SessionQuery>,
    session: Session<ReadTools>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let format = DeclarationFormat::parse(query.format.as_deref().unwrap_or("gemini"))?;
    let listing = Listing::of(&state, &row).await?;
    sessions::tools_told(&state, &row, &listing.available).await?;
    Ok(Json(listing.rest(format)).into_response())
}

#[derive(Debug, Deserialize)]
struct CallRequest {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// `POST /api/sessions/{id}/tool-calls`: the agent calls a tool. A
/// `switchAgent` answer's HTTP tools get this request's credential (the
/// record keeps a placeholder).
async fn call(
    State(state): State<AppState>,
    session: Session<CallTool>,
    BearerToken(token): BearerToken,
    JsonBody(body): JsonBody<CallRequest>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    if body.name.trim().is_empty() {
        return Err(ApiError::invalid("name", "is required").into());
    }
    let arguments = if body.arguments.is_null() {
        json!({})
    } else {
        body.arguments
    };
    let mut response = sessions::call(&state, row, &body.name, arguments).await?;
    if let (Some(result), Some(token)) = (response.result.as_mut(), token.as_deref()) {
        with_credential(result, token);
    }
    Ok(Json(response).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultReport {
    ok: bool,
    #[serde(default)]
    result: Value,
}

/// `POST /api/sessions/{id}/tool-calls/{callId}/result`: the backend that
/// executed an allowed call reports how it went.
async fn report_result(
    State(state): State<AppState>,
    session: Session<ReportResult>,
    CallId(call_id): CallId,
    JsonBody(body): JsonBody<ResultReport>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let (reported, ws) = sessions::complete(&state, row, call_id, body.ok, body.result).await?;
    Ok(Json(json!({
        "callId": reported.call_id,
        "status": reported.status,
        "state": ws,
    }))
    .into_response())
}

/// `PATCH /api/sessions/{id}/state`: `{"activeStep"?, "checks"?}`.
async fn patch_state(
    State(state): State<AppState>,
    session: Session<ChangeState>,
    JsonBody(body): JsonBody<StatePatch>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let ws = sessions::patch_state(&state, row, &body).await?;
    Ok(Json(json!({"state": ws})).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnReport {
    role: String,
    #[serde(default)]
    text: Option<String>,
}

/// `POST /api/sessions/{id}/turns` `{"role":"student"|"tutor","text"?}`:
/// the backend reports a turn and gets the nudges due now.
async fn report_turn(
    State(state): State<AppState>,
    session: Session<ReportTurn>,
    JsonBody(body): JsonBody<TurnReport>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    let speaker = Speaker::parse(&body.role)
        .ok_or_else(|| ApiError::invalid("role", "must be \"student\" or \"tutor\""))?;
    if body
        .text
        .as_ref()
        .is_some_and(|t| t.len() > TURN_TEXT_MAX_BYTES)
    {
        return Err(ApiError::TooLarge {
            field: "text".into(),
            limit: bytes_in_words(TURN_TEXT_MAX_BYTES),
        }
        .into());
    }
    let answer = sessions::turn(&state, row, speaker, body.text.as_deref()).await?;
    Ok(Json(answer).into_response())
}

async fn end(
    State(state): State<AppState>,
    session: Session<End>,
) -> Result<StatusCode, ServerError> {
    sessions::end(&state, &session.row.id, "ended by agent").await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/sessions/{id}/calls?before=&limit=`: the calls older than call
/// `before` (default: the newest), oldest first, in full; `before` in the
/// answer is what to ask for next, `null` when there is nothing older.
async fn calls(
    State(state): State<AppState>,
    Query(query): Query<SessionQuery>,
    watching: Watching,
) -> Result<Response, ServerError> {
    let id = watching.row.id;
    let limit = query.limit.unwrap_or(CALLS_PAGE_MAX);
    let page = sessions::calls_page(&state, &id, query.before, limit).await?;
    let next = (page.len() == limit.clamp(1, CALLS_PAGE_MAX))
        .then(|| page.first().map(|c| c.id))
        .flatten();
    Ok(Json(json!({"calls": page, "before": next})).into_response())
}

/// The `snapshot` event of `row`'s session, as event `id`.
async fn snapshot_frame(
    state: &AppState,
    row: crate::server::store::agent_sessions::SessionRow,
    id: u64,
) -> Result<Bytes, ServerError> {
    let snapshot = sessions::snapshot_of(state, row).await?;
    let json =
        serde_json::to_string(&SessionEvent::Snapshot(Box::new(snapshot))).unwrap_or_default();
    Ok(Frame::new(id, "snapshot", &json).sse)
}

/// `GET /api/sessions/{id}/events`: the session's own token or plugin
/// token, or a person or API key who may see it ([`Watching`]).
async fn events(
    State(state): State<AppState>,
    Query(_): Query<SessionQuery>,
    watching: Watching,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    let id = watching.row.id;
    let permit = state
        .streams
        .acquire(&stream_limits(&state, Some(&id), &watching.listeners))
        .await?;
    let last_seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Across instances, the replay may come from the database.
    let sub = crate::server::cluster::subscribe(&state, &id, last_seen).await?;
    // Read after subscribing: a session that ended before this point gets
    // its final snapshot and a closed stream (and no channel is kept for
    // it); one that ends after will send `ended` on the live stream.
    // The same read gives the snapshot, when one is needed. The session's
    // end already told every instance to close its channel; the one the
    // subscription may have just made here is closed here, at once (a
    // relayed close would leave it until its notification came back, and
    // cost a notification per watch of an ended session).
    let row = sessions::get(&state, &id).await?;
    if row.ended_at.is_some() {
        state.hub.close_here(&id);
        let frame = snapshot_frame(&state, row, sub.snapshot_id).await?;
        return Ok(event_stream(vec![frame], None, 0, None));
    }
    let mut first = Vec::with_capacity(sub.replay.len() + sub.history.len() + 1);
    if sub.needs_snapshot {
        first.extend(sub.history.iter().map(|f| f.sse.clone()));
        first.push(snapshot_frame(&state, row, sub.snapshot_id).await?);
    }
    let last_replayed = sub.replay.last().map_or(sub.snapshot_id, |f| f.id);
    first.extend(sub.replay.iter().map(|f| f.sse.clone()));
    // The snapshot or replay stands for everything up to `last_replayed`;
    // the sink was made at `snapshot_id` and the replay ends there too.
    debug_assert_eq!(last_replayed, sub.snapshot_id);
    Ok(session_stream(first, sub.sink, permit))
}

/// The caps a new stream counts against: its session's, and the signed-in
/// user's or API key's (`listener`) if there is one.
fn stream_limits(
    state: &AppState,
    session: Option<&str>,
    listeners: &[String],
) -> Vec<(String, usize)> {
    let mut limits = Vec::new();
    if let Some(id) = session {
        limits.push((
            format!("session:{id}"),
            state.config.max_streams_per_session,
        ));
    }
    for listener in listeners {
        limits.push((listener.clone(), state.config.max_streams_per_user));
    }
    limits
}

/// `GET /api/sessions/events` (the signed-in account, or an API key with
/// `sessions`): the list's changes, only of sessions the caller may see.
async fn list_events(
    viewing: Viewing,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    let permit = state
        .streams
        .acquire(&stream_limits(&state, None, &viewing.listeners))
        .await?;
    let rx = state.hub.subscribe_list();
    Ok(list_stream(state, viewing.viewer, rx, permit))
}
