//! Join codes over the API: a session's backend makes a short one-use
//! code (`POST /api/sessions/{id}/join-codes`, session token only), and a
//! plugin exchanges it for a plugin token of that session
//! (`POST /api/plugins/join`, no credential: the code is one), so the
//! session token never has to be pasted into a plugin. The rules are in
//! `server::agent::join` and `domain::join_code`.

use crate::domain::limits::{JOIN_BODY_MAX_BYTES, JOIN_CODE_LIFETIME_SECS};
use crate::server::agent::sessions;
use crate::server::http::extract::{ClientAddress, IssueJoinCode, JsonBody, Session};
use crate::server::store::join_codes::CreatedBy;
use crate::server::{AppState, ServerError};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// Join-code routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions/{id}/join-codes", post(issue))
        .route(
            "/api/plugins/join",
            post(join).layer(DefaultBodyLimit::max(JOIN_BODY_MAX_BYTES)),
        )
}

/// `POST /api/sessions/{id}/join-codes` (session token): 201
/// `{"code","expiresAt"}`.
async fn issue(
    State(state): State<AppState>,
    session: Session<IssueJoinCode>,
) -> Result<Response, ServerError> {
    let code = sessions::issue_code(&state, &session.row, CreatedBy::SessionToken).await?;
    Ok((StatusCode::CREATED, Json(code)).into_response())
}

/// `{"code"}`: the code as typed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinRequest {
    code: String,
}

/// The plugin API's 404 for a code that does not (or no longer) work.
#[derive(Serialize)]
struct CodeNotFound {
    error: &'static str,
    message: String,
}

/// `POST /api/plugins/join {"code"}`: 200 `{"sessionId","pluginToken"}`,
/// or 404 `{"error":"join_code_not_found",…}` for a code that is unknown,
/// used, expired or of an ended session (counted against the caller).
async fn join(
    ClientAddress(address): ClientAddress,
    State(state): State<AppState>,
    JsonBody(body): JsonBody<JoinRequest, JOIN_BODY_MAX_BYTES>,
) -> Result<Response, ServerError> {
    Ok(match sessions::join(&state, &body.code, address).await? {
        Some(joined) => Json(joined).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(CodeNotFound {
                error: "join_code_not_found",
                message: format!(
                    "No join code like this one works: a code works once, for {} minutes, \
                     while its session is open.",
                    JOIN_CODE_LIFETIME_SECS / 60
                ),
            }),
        )
            .into_response(),
    })
}
