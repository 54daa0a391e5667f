//! A student's data as their rights reach it: the record, deleting it with
//! everything of theirs in one transaction, and reading it back page by
//! page for an export (tables of migration `0027_students.sql`; the
//! student records themselves are made where sessions open for them).

use crate::server::platform::db::{Db, Flag};
use crate::server::store::retention::{purge, Purged};
use crate::server::ServerError;
use serde::Serialize;
use serde_json::value::RawValue;

/// A student record.
#[derive(Debug, Clone, sqlx::FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentRow {
    /// Id.
    pub id: i64,
    /// The teacher whose student it is.
    pub teacher_id: i64,
    /// A name, or a pseudonymous code.
    pub name: String,
    /// Whether `name` is a code rather than a name.
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub pseudonymous: bool,
    /// Unix seconds.
    pub created_at: i64,
}

/// Student `id`, if there is one.
pub async fn find(db: &Db, id: i64) -> Result<Option<StudentRow>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT id, teacher_id, name, pseudonymous, created_at FROM students WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?)
}

/// Ids of student `id`'s sessions that have not ended.
pub async fn open_sessions(db: &Db, id: i64) -> Result<Vec<String>, ServerError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM agent_sessions WHERE student_id = $1 AND ended_at IS NULL",
    )
    .bind(id)
    .fetch_all(db)
    .await?)
}

/// What deleting a student removed.
#[derive(Debug, Clone, Default)]
pub struct Deleted {
    /// Their sessions, with everything of those (`review_items_kept`
    /// counts other students' items only, which there should be none of).
    pub purged: Purged,
    /// Their review items.
    pub review_items: u64,
    /// How many sessions were removed.
    pub sessions: usize,
    /// The removed sessions that were still open (opened after the caller
    /// ended the open ones), whose live parts the caller frees.
    pub still_open: Vec<String>,
}

/// Deletes student `id` with their review items and their sessions (and
/// so the sessions' calls, outcomes, todos and plugin rows) in one write
/// transaction; `None` if there was no such student.
pub async fn delete(db: &Db, id: i64) -> Result<Option<Deleted>, ServerError> {
    let mut tx = crate::server::platform::db::begin_write(db).await?;
    let rows: Vec<(String, Flag)> =
        sqlx::query_as("SELECT id, ended_at IS NULL FROM agent_sessions WHERE student_id = $1")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
    let sessions: Vec<String> = rows.iter().map(|(sid, _)| sid.clone()).collect();
    let still_open = rows
        .into_iter()
        .filter_map(|(sid, open)| open.0.then_some(sid))
        .collect();
    let review_items = sqlx::query("DELETE FROM review_queue WHERE student_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let purged = purge(&mut tx, &sessions).await?;
    let gone = sqlx::query("DELETE FROM students WHERE id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if gone == 0 {
        return Ok(None);
    }
    tx.commit().await?;
    Ok(Some(Deleted {
        purged,
        review_items,
        sessions: sessions.len(),
        still_open,
    }))
}

/// Where a page of a student's sessions ends: the last one's opening and
/// row number (ties in the opening second go by insertion order).
pub type SessionCursor = (i64, i64);

/// Up to `limit` of student `id`'s sessions after `after`, oldest first:
/// each one's cursor and id.
pub async fn session_ids(
    db: &Db,
    id: i64,
    after: Option<SessionCursor>,
    limit: usize,
) -> Result<Vec<(SessionCursor, String)>, ServerError> {
    let (at, row) = after.unwrap_or((i64::MIN, i64::MIN));
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT created_at, rowid, id FROM agent_sessions
         WHERE student_id = $1 AND (created_at, rowid) > ($2, $3)
         ORDER BY created_at, rowid LIMIT $4",
    )
    .bind(id)
    .bind(at)
    .bind(row)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(at, row, sid)| ((at, row), sid))
        .collect())
}

/// A session as exported: its lesson, times and what was said in it
/// (`student`, `turns`); the calls and outcomes follow it.
#[derive(Debug, sqlx::FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportSession {
    /// Id.
    pub id: String,
    /// The lesson it ran (none once the lesson was deleted).
    pub lesson_id: Option<i64>,
    /// That lesson's title.
    pub lesson_title: Option<String>,
    /// The name or code it was opened for.
    pub student: Option<String>,
    /// Opened, Unix seconds.
    pub created_at: i64,
    /// Last activity, Unix seconds.
    pub last_activity: i64,
    /// Ended, Unix seconds.
    pub ended_at: Option<i64>,
    /// Why it ended.
    pub end_reason: Option<String>,
    /// A teacher trying the lesson.
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub trial: bool,
    /// Its planned length.
    pub planned_minutes: Option<i64>,
    /// Turns taken and nudges given (JSON, as stored).
    #[sqlx(try_from = "Option<String>")]
    pub turns: Json,
}

/// Session `sid`, for the export.
pub async fn export_session(db: &Db, sid: &str) -> Result<Option<ExportSession>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT s.id, s.lesson_id, l.title AS lesson_title, s.student, s.created_at,
                s.last_activity, s.ended_at, s.end_reason, s.trial, s.planned_minutes, s.turns
         FROM agent_sessions s LEFT JOIN lessons l ON l.id = s.lesson_id WHERE s.id = $1",
    )
    .bind(sid)
    .fetch_optional(db)
    .await?)
}

/// Stored JSON text passed through as JSON (`null` if it does not parse).
#[derive(Debug)]
pub struct Json(pub Box<RawValue>);

impl From<String> for Json {
    fn from(text: String) -> Self {
        Json(RawValue::from_string(text).unwrap_or_else(|_| null()))
    }
}

impl From<Option<String>> for Json {
    fn from(text: Option<String>) -> Self {
        text.map_or_else(|| Json(null()), Json::from)
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

impl Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A call as exported: the tool, its arguments, its result and whether it
/// was allowed.
#[derive(Debug, sqlx::FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportCall {
    /// Id.
    pub id: i64,
    /// When, Unix milliseconds.
    pub at_ms: i64,
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    #[sqlx(try_from = "String")]
    pub arguments: Json,
    /// `allowed` or `refused`.
    pub outcome: String,
    /// Why it was refused.
    pub reason: Option<String>,
    /// Its result.
    #[sqlx(try_from = "Option<String>")]
    pub result: Json,
    /// `done`, `awaiting`, …
    pub status: String,
}

/// Up to `limit` calls of session `sid` after call `after`, oldest first.
pub async fn calls_page(
    db: &Db,
    sid: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<ExportCall>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT id, at_ms, tool, arguments, outcome, reason, result, status FROM tool_calls
         WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(sid)
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?)
}

/// An outcome a tutor tool recorded, as exported.
#[derive(Debug, sqlx::FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportOutcome {
    /// Id.
    pub id: i64,
    /// The call that recorded it.
    pub call_id: i64,
    /// `error`, `fact`, `task`, `mastered` or `summary`.
    pub kind: String,
    /// What was recorded.
    #[sqlx(try_from = "String")]
    pub data: Json,
    /// Unix seconds.
    pub at: i64,
}

/// Up to `limit` outcomes of session `sid` after outcome `after`.
pub async fn outcomes_page(
    db: &Db,
    sid: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<ExportOutcome>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT id, call_id, kind, data, at FROM lesson_outcomes
         WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(sid)
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?)
}

/// A review item as exported.
#[derive(Debug, sqlx::FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReviewItem {
    /// Id.
    pub id: i64,
    /// The session it was logged in (none once that was purged).
    pub session_id: Option<String>,
    /// The kind of error.
    pub error_type: String,
    /// The student's own words.
    pub student_said: String,
    /// The correct form.
    pub correct_form: String,
    /// Why.
    pub explanation: Option<String>,
    /// 1–5.
    pub severity: i64,
    /// Its spaced-repetition box.
    #[serde(rename = "box")]
    #[sqlx(rename = "box")]
    pub leitner_box: i64,
    /// When it is next due, Unix seconds.
    pub due_at: i64,
    /// Last reviewed, Unix seconds.
    pub last_reviewed_at: Option<i64>,
    /// Mastered, Unix seconds.
    pub mastered_at: Option<i64>,
    /// Logged, Unix seconds.
    pub created_at: i64,
}

/// Up to `limit` of student `id`'s review items after item `after`.
pub async fn review_page(
    db: &Db,
    id: i64,
    after: i64,
    limit: usize,
) -> Result<Vec<ExportReviewItem>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT id, session_id, error_type, student_said, correct_form, explanation, severity,
                box, due_at, last_reviewed_at, mastered_at, created_at
         FROM review_queue WHERE student_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(id)
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?)
}

/// One profile fact learnt about the student, as exported.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct ExportFact {
    /// Id.
    pub id: i64,
    /// The session that last learnt it (`None` once that session is
    /// purged).
    pub session_id: Option<String>,
    /// interest, goal, preference, personal_detail or learning_style.
    pub category: String,
    /// The fact.
    pub value: String,
    /// How sure the tutor was, 0–1.
    pub confidence: Option<f64>,
    /// Learnt, Unix seconds.
    pub learnt_at: i64,
}

/// Up to `limit` of student `id`'s profile facts after fact `after`.
pub async fn facts_page(
    db: &Db,
    id: i64,
    after: i64,
    limit: usize,
) -> Result<Vec<ExportFact>, ServerError> {
    Ok(sqlx::query_as(
        "SELECT id, session_id, category, value, confidence, learnt_at
         FROM student_facts WHERE student_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(id)
    .bind(after)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?)
}
