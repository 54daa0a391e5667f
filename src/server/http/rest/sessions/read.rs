//! Reading sessions: the list a person or key may see, a session's tools
//! in any declaration format, and its calls page by page.

use super::SessionQuery;
use crate::domain::declaration::DeclarationFormat;
use crate::domain::limits::CALLS_PAGE_MAX;
use crate::error::ApiError;
use crate::server::agent::listing::Listing;
use crate::server::agent::sessions;
use crate::server::http::extract::{QueryParams, ReadTools, Session, Viewing, Watching};
use crate::server::{AppState, ServerError};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// `GET /api/sessions` (the signed-in account, or an API key with
/// `sessions`): the sessions the caller may see (`domain::ownership`).
pub(super) async fn list(
    viewing: Viewing,
    State(state): State<AppState>,
) -> Result<Response, ServerError> {
    Ok(Json(sessions::list(&state, viewing.viewer).await?).into_response())
}

pub(super) async fn tools(
    State(state): State<AppState>,
    session: Session<ReadTools>,
    QueryParams(query): QueryParams<SessionQuery>,
) -> Result<Response, ServerError> {
    let row = session.into_inner().row;
    // An ended session has no tools to declare: a reconnecting backend is
    // told so, as by every other door of the session.
    row.still_open()?;
    let format = DeclarationFormat::parse(query.format.as_deref().unwrap_or("gemini"))?;
    let listing = Listing::of(&state, &row).await?;
    sessions::tools_told(&state, &row, &listing.available).await?;
    Ok(Json(listing.rest(format)).into_response())
}

/// `GET /api/sessions/{id}/calls?before=&limit=`: the calls older than call
/// `before` (default: the newest), oldest first, in full; `before` in the
/// answer is what to ask for next, `null` when there is nothing older.
pub(super) async fn calls(
    State(state): State<AppState>,
    watching: Watching<false>,
    QueryParams(query): QueryParams<SessionQuery>,
) -> Result<Response, ServerError> {
    let id = watching.row.id;
    let limit = query.limit.unwrap_or(CALLS_PAGE_MAX);
    if !(1..=CALLS_PAGE_MAX).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("must be between 1 and {CALLS_PAGE_MAX} (got {limit})"),
        )
        .into());
    }
    let page = sessions::calls_page(&state, &id, query.before, limit).await?;
    let next = (page.len() == limit)
        .then(|| page.first().map(|c| c.id))
        .flatten();
    Ok(Json(json!({"calls": page, "before": next})).into_response())
}
