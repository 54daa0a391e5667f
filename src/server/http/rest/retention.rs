//! Retention for admins: `GET /api/retention` (the setting, the cut-off,
//! the last sweep and when the next is due) and `POST
//! /api/retention/sweep` (sweep now). For a signed-in admin (a `POST`
//! from the app's own pages), or an API key scoped `students` made by an
//! admin (it acts as its maker, [`ActingUser`]); a teacher gets 403.

use crate::domain::retention::{RetentionStatus, SweepStarter};
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::http::extract::{ActingUser, Students};
use crate::server::{retention, AppState, ServerError};
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

/// Retention routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/retention", get(show))
        .route("/api/retention/sweep", post(sweep_now))
}

/// 403 unless the caller acts as an admin.
fn admin_only(who: &ActingUser<Students>) -> Result<(), ApiError> {
    if who.viewer.admin {
        Ok(())
    } else {
        Err(ApiError::Forbidden {
            needed: Role::Admin.to_string(),
        })
    }
}

/// `GET /api/retention`: `{"enabled", "days", "cutoff", "nextSweepAt",
/// "lastSweep"}`.
async fn show(
    who: ActingUser<Students>,
    State(state): State<AppState>,
) -> Result<Json<RetentionStatus>, ServerError> {
    admin_only(&who)?;
    Ok(Json(retention::status(&state).await?))
}

/// `POST /api/retention/sweep`: sweeps now (whether or not the daily
/// sweep is due) and answers as `GET /api/retention` does, `lastSweep`
/// being this one; with retention off nothing is touched and `enabled`
/// says so.
async fn sweep_now(
    who: ActingUser<Students>,
    State(state): State<AppState>,
) -> Result<Json<RetentionStatus>, ServerError> {
    admin_only(&who)?;
    retention::sweep(&state, SweepStarter::Admin).await?;
    Ok(Json(retention::status(&state).await?))
}
