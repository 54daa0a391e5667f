//! Who may delete or export a student's data: the one rule of who may see
//! a student (`domain::student::Viewer::may_see`, asked through
//! `server::students::visible`: their teacher, or an admin), so these
//! doors cannot drift from the student's page and API. A student someone
//! may not see is answered as one that does not exist (404), so ids
//! cannot be probed.

pub use crate::domain::student::Viewer;
use crate::error::ApiError;
use crate::server::store::student_data::{self as store, StudentRow};
use crate::server::{students, AppState, ServerError};

/// Student `id`'s stored row, if `viewer` may see them; 404 `Student {id}`
/// if there is no such student or they are another teacher's.
pub async fn may_see(
    state: &AppState,
    viewer: &Viewer,
    id: i64,
) -> Result<StudentRow, ServerError> {
    students::visible(state, *viewer, id).await?;
    store::find(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Student {id}")).into())
}
