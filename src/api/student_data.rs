//! A student's rights from the app's pages: delete a student with all
//! their data, download their data (a plain link to the JSON API's
//! export, which the sign-in cookie opens), and, for admins, the
//! retention setting and its last sweep. Who may touch a student is
//! `server::student_data::access::may_see`, the same rule the JSON API
//! asks.

use crate::domain::retention::RetentionStatus;
use crate::error::ApiError;
use leptos::prelude::*;

/// Where a student's data is downloaded as a JSON file
/// (`GET /api/students/{id}/export`, an attachment).
pub fn export_href(student: i64) -> String {
    format!("/api/students/{student}/export")
}

/// Deletes student `id` with all their data (their sessions, calls,
/// outcomes and review items), after ending their live sessions — their
/// teacher or an admin; 404 for anyone else.
#[server(prefix = "/rpc", endpoint = "delete_student")]
pub async fn delete_student(id: i64) -> Result<(), ApiError> {
    use crate::server::http::ctx;
    use crate::server::student_data;
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        student_data::delete(&state, &crate::server::students::viewer_of(&user), id).await
    })
    .await
}

/// `DATA_RETENTION_DAYS`, the cut-off, when the next sweep is due and the
/// last sweep's counts (admins only).
#[server(prefix = "/rpc", endpoint = "get_retention")]
pub async fn get_retention() -> Result<RetentionStatus, ApiError> {
    use crate::server::{http::ctx, retention};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        retention::status(&state).await
    })
    .await
}
