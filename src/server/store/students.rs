//! Students (migration 0027), their review queue and saved profile facts
//! (0030), and what a session opened for one knows of them. Who may see a
//! student is decided by `server::students`, never here.

use crate::domain::lesson::outcome::{StudentChange, TutorOutcome};
use crate::domain::review_queue::{QueueItem, Schedule, DUE_ITEMS_PER_LESSON};
use crate::domain::student::{
    KnownFact, Student, StudentContext, StudentLabel, StudentSummary, Viewer,
};
use crate::domain::student_view::RunRow;
use crate::error::ApiError;
use crate::server::platform::db::{Conn, Db};
use crate::server::store::is_unique_violation;
use crate::server::ServerError;

/// Most students one list answers: a school's teacher has a few hundred.
pub const STUDENTS_LISTED: i64 = 2_000;

#[derive(sqlx::FromRow)]
struct StudentRow {
    id: i64,
    teacher_id: i64,
    name: String,
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pseudonymous: bool,
    created_at: i64,
}

impl From<StudentRow> for Student {
    fn from(r: StudentRow) -> Self {
        Student {
            id: r.id,
            teacher_id: r.teacher_id,
            name: r.name,
            pseudonymous: r.pseudonymous,
            created_at: r.created_at,
        }
    }
}

const STUDENT: &str = "SELECT id, teacher_id, name, pseudonymous, created_at FROM students";

/// A new record `label` of teacher `teacher`: 409 when they already have
/// a student of that name or code.
pub async fn create(
    db: &Db,
    teacher: i64,
    label: &StudentLabel,
    at: i64,
) -> Result<Student, ServerError> {
    let done = sqlx::query_scalar::<_, i64>(
        "INSERT INTO students (teacher_id, name, pseudonymous, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(teacher)
    .bind(label.text())
    .bind(i64::from(label.pseudonymous()))
    .bind(at)
    .fetch_one(db)
    .await;
    match done {
        Ok(done) => Ok(get(db, done)
            .await?
            .ok_or_else(|| ServerError::Config("a new student vanished".into()))?
            .0),
        Err(e) if is_unique_violation(&e, "students.") => Err(ApiError::Conflict(format!(
            "You already have a student called \"{}\".",
            label.text()
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// Teacher `teacher`'s record named `name`, made now if they have none.
pub async fn find_or_create(
    db: &Db,
    teacher: i64,
    name: &StudentLabel,
    at: i64,
) -> Result<Student, ServerError> {
    sqlx::query(
        "INSERT INTO students (teacher_id, name, pseudonymous, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (teacher_id, name) DO NOTHING",
    )
    .bind(teacher)
    .bind(name.text())
    .bind(i64::from(name.pseudonymous()))
    .bind(at)
    .execute(db)
    .await?;
    Ok(
        sqlx::query_as::<_, StudentRow>(&format!("{STUDENT} WHERE teacher_id = $1 AND name = $2"))
            .bind(teacher)
            .bind(name.text())
            .fetch_one(db)
            .await?
            .into(),
    )
}

/// Student `id` and their teacher's name, if it exists.
pub async fn get(db: &Db, id: i64) -> Result<Option<(Student, String)>, ServerError> {
    let row: Option<StudentRow> = sqlx::query_as(&format!("{STUDENT} WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let teacher: Option<String> =
        sqlx::query_scalar("SELECT display_name FROM users WHERE id = $1")
            .bind(row.teacher_id)
            .fetch_optional(db)
            .await?;
    Ok(Some((row.into(), teacher.unwrap_or_default())))
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: i64,
    teacher_id: i64,
    name: String,
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pseudonymous: bool,
    created_at: i64,
    teacher_name: String,
    runs: i64,
    queued: i64,
    due: i64,
    last_run_at: Option<i64>,
}

/// The students `viewer` may see (`Viewer::teacher_filter`, the list form
/// of the one rule: an admin sees all), by teacher and name,
/// with their runs and what waits in their queues at `now`.
pub async fn list(db: &Db, viewer: Viewer, now: i64) -> Result<Vec<StudentSummary>, ServerError> {
    let rows: Vec<SummaryRow> = sqlx::query_as(
        "SELECT s.id, s.teacher_id, s.name, s.pseudonymous, s.created_at, u.display_name AS teacher_name,
                (SELECT COUNT(*) FROM agent_sessions a WHERE a.student_id = s.id) AS runs,
                (SELECT COUNT(*) FROM review_queue q WHERE q.student_id = s.id AND q.mastered_at IS NULL) AS queued,
                (SELECT COUNT(*) FROM review_queue q WHERE q.student_id = s.id AND q.mastered_at IS NULL AND q.due_at <= $1) AS due,
                (SELECT MAX(a.created_at) FROM agent_sessions a WHERE a.student_id = s.id) AS last_run_at
         FROM students s JOIN users u ON u.id = s.teacher_id
         WHERE $2 IS NULL OR s.teacher_id = $3
         ORDER BY u.display_name, s.teacher_id, s.name LIMIT $4",
    )
    .bind(now)
    .bind(viewer.teacher_filter())
    .bind(viewer.teacher_filter())
    .bind(STUDENTS_LISTED)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| StudentSummary {
            student: Student {
                id: r.id,
                teacher_id: r.teacher_id,
                name: r.name,
                pseudonymous: r.pseudonymous,
                created_at: r.created_at,
            },
            teacher_name: r.teacher_name,
            runs: r.runs,
            queued: r.queued,
            due: r.due,
            last_run_at: r.last_run_at,
        })
        .collect())
}

#[derive(sqlx::FromRow)]
struct ItemRow {
    id: i64,
    session_id: Option<String>,
    error_type: String,
    student_said: String,
    correct_form: String,
    explanation: Option<String>,
    severity: i64,
    #[sqlx(rename = "box")]
    leitner_box: i64,
    due_at: i64,
    last_reviewed_at: Option<i64>,
    mastered_at: Option<i64>,
    created_at: i64,
}

impl From<ItemRow> for QueueItem {
    fn from(r: ItemRow) -> Self {
        QueueItem {
            id: r.id,
            session_id: r.session_id,
            error_type: r.error_type,
            student_said: r.student_said,
            correct_form: r.correct_form,
            explanation: r.explanation,
            severity: r.severity.clamp(1, 10) as u8,
            schedule: Schedule {
                leitner_box: r.leitner_box.clamp(1, 255) as u8,
                due_at: r.due_at,
                mastered_at: r.mastered_at,
            },
            last_reviewed_at: r.last_reviewed_at,
            created_at: r.created_at,
        }
    }
}

const ITEM: &str =
    "SELECT id, session_id, error_type, student_said, correct_form, explanation, severity, box,
        due_at, last_reviewed_at, mastered_at, created_at FROM review_queue";

/// The items of student `student` due at `now`, most overdue first, at
/// most [`DUE_ITEMS_PER_LESSON`] (the rule of `review_queue::due_for_lesson`).
pub async fn due_items(db: &Db, student: i64, now: i64) -> Result<Vec<QueueItem>, ServerError> {
    let rows: Vec<ItemRow> = sqlx::query_as(&format!(
        "{ITEM} WHERE student_id = $1 AND mastered_at IS NULL AND due_at <= $2 ORDER BY due_at, id LIMIT $3"
    ))
    .bind(student)
    .bind(now)
    .bind(DUE_ITEMS_PER_LESSON as i64)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(QueueItem::from).collect())
}

/// Student `student`'s items `ids` as they stand now.
pub async fn items_now(db: &Db, student: i64, ids: &[i64]) -> Result<Vec<QueueItem>, ServerError> {
    let mut items = Vec::with_capacity(ids.len());
    for id in ids {
        let row: Option<ItemRow> =
            sqlx::query_as(&format!("{ITEM} WHERE id = $1 AND student_id = $2"))
                .bind(id)
                .bind(student)
                .fetch_optional(db)
                .await?;
        items.extend(row.map(QueueItem::from));
    }
    Ok(items)
}

/// Student `student`'s newest `limit` items, in the queue and out of it.
pub async fn items(db: &Db, student: i64, limit: usize) -> Result<Vec<QueueItem>, ServerError> {
    let rows: Vec<ItemRow> = sqlx::query_as(&format!(
        "{ITEM} WHERE student_id = $1 ORDER BY mastered_at IS NOT NULL, id DESC LIMIT $2"
    ))
    .bind(student)
    .bind(limit as i64)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(QueueItem::from).collect())
}

/// The profile facts student `student`'s record keeps, newest first.
pub async fn facts(db: &Db, student: i64, limit: usize) -> Result<Vec<KnownFact>, ServerError> {
    let rows: Vec<(String, String, Option<f64>, i64)> = sqlx::query_as(
        "SELECT category, value, confidence, learnt_at FROM student_facts WHERE student_id = $1
         ORDER BY learnt_at DESC, id DESC LIMIT $2",
    )
    .bind(student)
    .bind(limit as i64)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(category, value, confidence, learnt_at)| KnownFact {
            category,
            value,
            confidence,
            learnt_at,
        })
        .collect())
}

/// Writes what a tutor call changed on student `student`'s record, in the
/// call's transaction: a queued error, a moved item, a saved fact.
pub async fn apply(
    tx: &mut Conn,
    student: i64,
    session: &str,
    outcome: Option<&TutorOutcome>,
    change: StudentChange,
    at: i64,
) -> Result<(), ServerError> {
    match (change, outcome) {
        (StudentChange::Queue(s), Some(TutorOutcome::Error(e))) => {
            sqlx::query(
                "INSERT INTO review_queue (student_id, session_id, error_type, student_said, correct_form,
                     explanation, severity, box, due_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(student)
            .bind(session)
            .bind(&e.error_type)
            .bind(&e.student_said)
            .bind(&e.correct_form)
            .bind(&e.explanation)
            .bind(i64::from(e.severity))
            .bind(i64::from(s.leitner_box))
            .bind(s.due_at)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        }
        (StudentChange::Move { item, to }, _) => move_item(tx, student, item, to, at).await?,
        (StudentChange::SaveFact, Some(TutorOutcome::Fact(f))) => {
            sqlx::query(
                "INSERT INTO student_facts (student_id, session_id, category, value, confidence, learnt_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (student_id, category, value) DO UPDATE
                 SET session_id = excluded.session_id, confidence = excluded.confidence, learnt_at = excluded.learnt_at",
            )
            .bind(student)
            .bind(session)
            .bind(&f.category)
            .bind(&f.value)
            .bind(f.confidence)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        }
        (change, _) => {
            return Err(ServerError::Config(format!(
                "a student change {change:?} came without its outcome"
            )))
        }
    }
    Ok(())
}

/// Puts student `student`'s item `item` at `to`, reviewed at `at`.
pub async fn move_item(
    tx: &mut Conn,
    student: i64,
    item: i64,
    to: Schedule,
    at: i64,
) -> Result<(), ServerError> {
    sqlx::query(
        "UPDATE review_queue SET box = $1, due_at = $2, mastered_at = $3, last_reviewed_at = $4
         WHERE id = $5 AND student_id = $6",
    )
    .bind(i64::from(to.leitner_box))
    .bind(to.due_at)
    .bind(to.mastered_at)
    .bind(at)
    .bind(item)
    .bind(student)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// What session `session` knows of its student, if it was opened for one.
pub async fn context_of(db: &Db, session: &str) -> Result<Option<StudentContext>, ServerError> {
    let raw: Option<Option<String>> =
        sqlx::query_scalar("SELECT student_context FROM agent_sessions WHERE id = $1")
            .bind(session)
            .fetch_optional(db)
            .await?;
    raw.flatten()
        .map(|json| {
            serde_json::from_str(&json).map_err(|e| {
                ServerError::Config(format!(
                    "session {session} has an unreadable student context: {e}"
                ))
            })
        })
        .transpose()
}

/// Student `student`'s runs, newest first, at most `limit`, with their
/// lessons' titles.
pub async fn runs(db: &Db, student: i64, limit: usize) -> Result<Vec<RunRow>, ServerError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: String,
        lesson_id: Option<i64>,
        title: Option<String>,
        created_at: i64,
        ended_at: Option<i64>,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT a.id, a.lesson_id, l.title, a.created_at, a.ended_at FROM agent_sessions a
         LEFT JOIN lessons l ON l.id = a.lesson_id
         WHERE a.student_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2",
    )
    .bind(student)
    .bind(limit as i64)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| RunRow {
            session_id: r.id,
            lesson_id: r.lesson_id,
            lesson_title: r.title,
            started_at: r.created_at,
            ended_at: r.ended_at,
        })
        .collect())
}
