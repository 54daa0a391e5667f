//! Start-trigger state per workflow (migration `0021_start_triggers.sql`):
//! the hook secret's hash and when it was made, and the schedule's mark
//! (the last due time fired for).

use crate::server::platform::db::Db;
use crate::server::ServerError;

/// Replaces workflow `id`'s hook secret with the one hashing to `hash`
/// (made at `at`); the previous secret stops working at once.
pub async fn set_hook_secret(db: &Db, id: &str, hash: &str, at: i64) -> Result<(), ServerError> {
    sqlx::query(
        "INSERT INTO workflow_triggers (workflow_id, hook_secret_hash, hook_secret_at) VALUES ($1, $2, $3)
         ON CONFLICT (workflow_id) DO UPDATE SET hook_secret_hash = excluded.hook_secret_hash,
                                                 hook_secret_at = excluded.hook_secret_at",
    )
    .bind(id)
    .bind(hash)
    .bind(at)
    .execute(db)
    .await?;
    Ok(())
}

/// Whether workflow `id`'s hook secret hashes to `hash`.
pub async fn hook_secret_matches(db: &Db, id: &str, hash: &str) -> Result<bool, ServerError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM workflow_triggers WHERE workflow_id = $1 AND hook_secret_hash = $2",
    )
    .bind(id)
    .bind(hash)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

/// When workflow `id`'s hook secret was made, if it has one.
pub async fn hook_secret_at(db: &Db, id: &str) -> Result<Option<i64>, ServerError> {
    let at: Option<Option<i64>> =
        sqlx::query_scalar("SELECT hook_secret_at FROM workflow_triggers WHERE workflow_id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(at.flatten())
}

/// Workflow `id`'s schedule mark, setting it to `now` when it has none
/// (a schedule seen for the first time fires only for due times after
/// that).
pub async fn schedule_mark(db: &Db, id: &str, now: i64) -> Result<i64, ServerError> {
    sqlx::query(
        "INSERT INTO workflow_triggers (workflow_id, schedule_mark) VALUES ($1, $2)
         ON CONFLICT (workflow_id) DO UPDATE SET schedule_mark = COALESCE(workflow_triggers.schedule_mark, excluded.schedule_mark)",
    )
    .bind(id)
    .bind(now)
    .execute(db)
    .await?;
    let mark: i64 =
        sqlx::query_scalar("SELECT schedule_mark FROM workflow_triggers WHERE workflow_id = $1")
            .bind(id)
            .fetch_one(db)
            .await?;
    Ok(mark)
}

/// Moves workflow `id`'s schedule mark from `seen` to `due`, if no one
/// moved it meanwhile: true for the one caller that claims this due time
/// (one statement, so two schedulers or a restart cannot both claim it).
pub async fn claim_due(db: &Db, id: &str, seen: i64, due: i64) -> Result<bool, ServerError> {
    let done = sqlx::query(
        "UPDATE workflow_triggers SET schedule_mark = $1 WHERE workflow_id = $2 AND schedule_mark = $3",
    )
    .bind(due)
    .bind(id)
    .bind(seen)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
