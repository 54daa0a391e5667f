//! Sessions by what they are tied to: the ones a viewer may see (the same
//! rule as `domain::ownership`, in SQL), a session's owners, the open ones,
//! a teacher's open trials, a key's open sessions, the idle ones.

use super::rows::SessionRow;
use super::rows::SELECT;
use crate::domain::ownership::{SessionOwners, Viewer};
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// The sessions `viewer` may see, as SQL: `domain::ownership::may_see`
/// over the session's columns (`$1` is 1 for an admin, `$2` the teacher,
/// `$3` an orphan key; a NULL compares false). A test holds the two to
/// the same answer on every combination of ties.
const VISIBLE_TO: &str = "($1 = 1
     OR opened_by = $2
     OR lesson_id IN (SELECT id FROM lessons WHERE owner_id = $2)
     OR api_key_id IN (SELECT id FROM api_keys WHERE created_by = $2)
     OR student_id IN (SELECT id FROM students WHERE teacher_id = $2)
     OR api_key_id = $3)";

/// [`VISIBLE_TO`]'s three parameters for `viewer`.
fn viewer_params(viewer: Viewer) -> (i64, Option<i64>, Option<i64>) {
    match viewer {
        Viewer::Admin => (1, None, None),
        Viewer::User(id) => (0, Some(id), None),
        Viewer::Key(key) => (0, None, Some(key)),
    }
}

/// Open sessions first, then recently ended ones (at most 200), of those
/// `viewer` may see: filtered before the limit, so another teacher's busy
/// day cannot push one's own sessions off the list.
pub async fn recent(db: &Db, viewer: Viewer) -> Result<Vec<SessionRow>, ServerError> {
    let (admin, user, key) = viewer_params(viewer);
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} WHERE {VISIBLE_TO} ORDER BY ended_at IS NOT NULL, last_activity DESC LIMIT 200"
    ))
    .bind(admin)
    .bind(user)
    .bind(key)
    .fetch_all(db)
    .await?)
}

/// What ties session `id` to people (`domain::ownership`): its lesson's
/// owner, its opener, its key and the key's maker, its student record's
/// teacher; `None` for an unknown session.
pub async fn owners(db: &Db, id: &str) -> Result<Option<SessionOwners>, ServerError> {
    type Row = (
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT l.owner_id, s.opened_by, s.api_key_id, k.created_by, st.teacher_id
         FROM agent_sessions s
         LEFT JOIN lessons l ON l.id = s.lesson_id
         LEFT JOIN api_keys k ON k.id = s.api_key_id
         LEFT JOIN students st ON st.id = s.student_id
         WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(lesson_owner, opened_by, key, key_maker, student_teacher)| SessionOwners {
            lesson_owner,
            opened_by,
            key,
            key_maker,
            student_teacher,
        },
    ))
}

/// Every session that has not ended.
pub async fn open(db: &Db) -> Result<Vec<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE ended_at IS NULL"))
            .fetch_all(db)
            .await?,
    )
}

/// Ids of user `user`'s open trials, newest first.
pub async fn open_trials_of(db: &Db, user: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE opened_by = $1 AND trial = 1 AND ended_at IS NULL
         ORDER BY created_at DESC, rowid DESC",
    )
    .bind(user)
    .fetch_all(db)
    .await?)
}

/// Ids of the open sessions opened with API key `key_id`.
pub async fn open_for_key(db: &Db, key_id: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE api_key_id = $1 AND ended_at IS NULL",
    )
    .bind(key_id)
    .fetch_all(db)
    .await?)
}

/// Ids of open sessions last active before `cutoff` (Unix seconds).
pub async fn idle_since(db: &Db, cutoff: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE ended_at IS NULL AND last_activity < $1",
    )
    .bind(cutoff)
    .fetch_all(db)
    .await?)
}
