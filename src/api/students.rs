//! Students for the app's pages: a teacher's students (an admin: all) and
//! one student's view, through the same one lookup as the API
//! (`server::students::visible`).

use crate::domain::student::StudentSummary;
use crate::domain::student_view::StudentView;
use crate::error::ApiError;
use leptos::prelude::*;

/// The signed-in teacher's students (an admin: every teacher's), with
/// their runs and what is due in their queues.
#[server(prefix = "/rpc", endpoint = "list_students")]
pub async fn list_students() -> Result<Vec<StudentSummary>, ApiError> {
    use crate::server::{http::ctx, store, students};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::students::list(&state.db, students::viewer_of(&user), state.clock.now()).await
    })
    .await
}

/// One student the signed-in teacher may see (404 otherwise).
#[server(prefix = "/rpc", endpoint = "get_student")]
pub async fn get_student(id: i64) -> Result<StudentView, ApiError> {
    use crate::server::{http::ctx, students};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        students::view(&state, students::viewer_of(&user), id).await
    })
    .await
}
