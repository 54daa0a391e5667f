//! What tutor sessions' tools recorded, and the runs of a lesson read back
//! for its teacher. An outcome is written in the same transaction as the
//! call that produced it (see `tool_calls::record`).

use crate::domain::lesson::outcome::TutorOutcome;
use crate::domain::lesson::run_report::RunFacts;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;
use std::collections::HashMap;

/// Stores `outcome` of call `call_id` of `session`.
pub async fn insert(
    tx: &mut Conn,
    session: &str,
    call_id: i64,
    outcome: &TutorOutcome,
) -> Result<(), ServerError> {
    let data = serde_json::to_string(outcome)
        .map_err(|e| ServerError::Config(format!("an outcome did not serialise: {e}")))?;
    sqlx::query(
        "INSERT INTO lesson_outcomes (session_id, call_id, kind, data, at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(session)
    .bind(call_id)
    .bind(outcome.kind())
    .bind(data)
    .bind(now())
    .execute(tx)
    .await?;
    Ok(())
}

fn parse(session: &str, data: &str) -> Result<TutorOutcome, ServerError> {
    serde_json::from_str(data).map_err(|e| {
        ServerError::Config(format!("session {session} has an unreadable outcome: {e}"))
    })
}

/// Everything `session` recorded, oldest first.
pub async fn for_session(db: &Db, session: &str) -> Result<Vec<TutorOutcome>, ServerError> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT data FROM lesson_outcomes WHERE session_id = $1 ORDER BY id")
            .bind(session)
            .fetch_all(db)
            .await?;
    rows.iter().map(|(data,)| parse(session, data)).collect()
}

/// What student `student`'s runs opened at or after `since` recorded:
/// session, time and outcome, oldest first.
pub async fn of_student(
    db: &Db,
    student: i64,
    since: i64,
) -> Result<Vec<(String, i64, TutorOutcome)>, ServerError> {
    let rows: Vec<(String, i64, String)> = sqlx::query_as(
        "SELECT o.session_id, o.at, o.data FROM lesson_outcomes o JOIN agent_sessions s ON s.id = o.session_id
         WHERE s.student_id = $1 AND s.created_at >= $2 ORDER BY o.id",
    )
    .bind(student)
    .bind(since)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(session, at, data)| Ok((session.clone(), at, parse(&session, &data)?)))
        .collect()
}

#[derive(sqlx::FromRow)]
struct RunRow {
    id: String,
    student: Option<String>,
    created_at: i64,
    ended_at: Option<i64>,
    last_activity: i64,
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    trial: bool,
}

/// The newest `limit` runs of lesson `lesson_id`, newest first, each with
/// what it recorded (oldest first).
pub async fn runs_of_lesson(
    db: &Db,
    lesson_id: i64,
    limit: usize,
) -> Result<Vec<(RunFacts, Vec<TutorOutcome>)>, ServerError> {
    let runs: Vec<RunRow> = sqlx::query_as(
        "SELECT id, student, created_at, ended_at, last_activity, trial FROM agent_sessions
         WHERE lesson_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(lesson_id)
    .bind(limit as i64)
    .fetch_all(db)
    .await?;
    let Some(oldest) = runs.last().map(|r| r.created_at) else {
        return Ok(Vec::new());
    };
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT o.session_id, o.data FROM lesson_outcomes o JOIN agent_sessions s ON s.id = o.session_id
         WHERE s.lesson_id = $1 AND s.created_at >= $2 ORDER BY o.id",
    )
    .bind(lesson_id)
    .bind(oldest)
    .fetch_all(db)
    .await?;
    let mut by_session: HashMap<String, Vec<TutorOutcome>> = HashMap::new();
    for (session, data) in rows {
        let outcome = parse(&session, &data)?;
        by_session.entry(session).or_default().push(outcome);
    }
    Ok(runs
        .into_iter()
        .map(|r| {
            let outcomes = by_session.remove(&r.id).unwrap_or_default();
            (
                RunFacts {
                    session_id: r.id,
                    student: r.student,
                    started_at: r.created_at,
                    ended_at: r.ended_at,
                    last_activity: r.last_activity,
                    trial: r.trial,
                },
                outcomes,
            )
        })
        .collect())
}
