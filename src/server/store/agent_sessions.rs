//! Agent sessions: one row per session an agent backend opened, holding its
//! workflow state as JSON, the account whose identity it verified, and when
//! it was last active or ended; and each session's plugin token (migration
//! `0018_plugin_tokens.sql`), kept as a hash like the session token (the
//! plugin tokens exchanged for join codes are `join_codes`').
//!
//! The session engine (`server::agent::sessions`) decides; this module only
//! reads and writes rows.

use crate::domain::lesson::nudge::{Timing, TurnLog};
use crate::domain::ownership::{SessionOwners, Viewer};
use crate::domain::session_origin::{Opener, StartedBy};
use crate::domain::workflow_state::WorkflowState;
use crate::server::platform::db::now;
use crate::server::platform::db::Db;
use crate::server::ServerError;

/// A session row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRow {
    /// Id.
    pub id: String,
    /// SHA-256 of the session token.
    pub token_hash: String,
    /// JSON WorkflowState.
    pub state: String,
    /// Account whose identity was verified, if any.
    pub verified_account: Option<String>,
    /// Set once ended.
    pub ended_at: Option<i64>,
    /// Last call or open, Unix seconds.
    pub last_activity: i64,
    /// Opened, Unix seconds.
    pub created_at: i64,
    /// Whether Switchboard runs the built-in demo tools for this session
    /// (otherwise the backend executes every tool but the session tools).
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub runs_builtins: bool,
    /// The tools the backend was last told (comma-separated), to tell it
    /// when they change.
    pub tools_seen: Option<String>,
    /// The lesson it runs, for a tutor session.
    pub lesson_id: Option<i64>,
    /// A tutor session's tools (comma-separated): the lesson's enabled
    /// tutor tools when it opened.
    pub lesson_tools: Option<String>,
    /// Who a tutor session is for.
    pub student: Option<String>,
    /// A tutor session's planned length.
    pub planned_minutes: Option<i64>,
    /// JSON TurnLog: the turns reported and the nudges given.
    pub turns: Option<String>,
    /// The API key that opened it (none for a page's own sessions).
    pub api_key_id: Option<i64>,
    /// Calls recorded for it so far (its budget's count).
    pub calls_stored: i64,
    /// Bytes of arguments and results recorded for it so far.
    pub bytes_stored: i64,
    /// The signed-in user who opened it (a trial or a manual start).
    pub opened_by: Option<i64>,
    /// A user trying their configuration, listed apart from real runs.
    #[sqlx(try_from = "crate::server::platform::db::Flag")]
    pub trial: bool,
    /// JSON `StartedBy`: the start trigger that opened it.
    pub started_by: Option<String>,
    /// The student record a tutor session runs for.
    pub student_id: Option<i64>,
}

impl SessionRow {
    /// The parsed workflow state.
    pub fn workflow_state(&self) -> Result<WorkflowState, ServerError> {
        serde_json::from_str(&self.state).map_err(|e| {
            ServerError::Config(format!("session {} has an unreadable state: {e}", self.id))
        })
    }

    /// What started it, when a start trigger did.
    pub fn started_by(&self) -> Option<StartedBy> {
        serde_json::from_str(self.started_by.as_deref()?).ok()
    }

    /// The turns reported so far (none yet: an empty log).
    pub fn turn_log(&self) -> Result<TurnLog, ServerError> {
        self.turns.as_deref().map_or(Ok(TurnLog::default()), |t| {
            serde_json::from_str(t).map_err(|e| {
                ServerError::Config(format!(
                    "session {} has an unreadable turn log: {e}",
                    self.id
                ))
            })
        })
    }

    /// When it started and how long it should run.
    pub fn timing(&self) -> Timing {
        Timing {
            started_at: self.created_at,
            planned_minutes: self
                .planned_minutes
                .map(|m| m.clamp(0, u32::MAX.into()) as u32),
        }
    }
}

const SELECT: &str = "SELECT id, token_hash, state, verified_account, ended_at, last_activity, created_at, runs_builtins, tools_seen, lesson_id, lesson_tools, student, planned_minutes, turns, api_key_id, calls_stored, bytes_stored, opened_by, trial, started_by, student_id FROM agent_sessions";

/// The session with this id, if any.
pub async fn find(db: &Db, id: &str) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE id = $1"))
            .bind(id)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose token hashes to `token_hash`, if any.
pub async fn find_by_token_hash(
    db: &Db,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(
        sqlx::query_as::<_, SessionRow>(&format!("{SELECT} WHERE token_hash = $1"))
            .bind(token_hash)
            .fetch_optional(db)
            .await?,
    )
}

/// The session whose plugin token hashes to `token_hash`, if any: its own
/// plugin token, or one a plugin got by exchanging a join code
/// (`store::join_codes`).
pub async fn find_by_plugin_token_hash(
    db: &Db,
    token_hash: &str,
) -> Result<Option<SessionRow>, ServerError> {
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "{SELECT} WHERE id IN (SELECT session_id FROM session_plugin_tokens WHERE token_hash = $1
                               UNION ALL
                               SELECT session_id FROM session_joined_tokens WHERE token_hash = $2)"
    ))
    .bind(token_hash)
    .bind(token_hash)
    .fetch_optional(db)
    .await?)
}

/// Makes `token_hash` session `id`'s plugin token, replacing the one it
/// had (which stops working).
pub async fn set_plugin_token<'e, E>(
    db: E,
    id: &str,
    token_hash: &str,
    at: i64,
) -> Result<(), ServerError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query(
        "INSERT INTO session_plugin_tokens (session_id, token_hash, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (session_id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at",
    )
    .bind(id)
    .bind(token_hash)
    .bind(at)
    .execute(db)
    .await?;
    Ok(())
}

/// A session to store.
pub struct NewSession<'a> {
    /// Id.
    pub id: &'a str,
    /// SHA-256 of its token.
    pub token_hash: &'a str,
    /// SHA-256 of its first plugin token.
    pub plugin_token_hash: &'a str,
    /// Who or what opened it.
    pub opener: &'a Opener,
    /// Its first state.
    pub state: &'a WorkflowState,
    /// Whether Switchboard runs the built-in demo tools for it.
    pub runs_builtins: bool,
    /// The tools its backend is told at opening (comma-separated).
    pub tools_seen: &'a str,
    /// For a tutor session: the lesson and what it runs with.
    pub lesson: Option<LessonFields<'a>>,
    /// Opened, Unix seconds.
    pub at: i64,
}

/// What a tutor session stores about its lesson.
#[derive(Debug, Clone, Copy)]
pub struct LessonFields<'a> {
    /// The lesson.
    pub lesson_id: i64,
    /// Its tools when the session opened (comma-separated).
    pub tools: &'a str,
    /// Who it is for.
    pub student: Option<&'a str>,
    /// Its planned length.
    pub planned_minutes: Option<u32>,
    /// The student record it runs for, and what it knows of them (JSON
    /// `StudentContext`, fixed at opening).
    pub student_record: Option<(i64, &'a str)>,
}

/// Stores a newly opened session, active as of its opening, with its
/// plugin token.
pub async fn insert(db: &Db, session: &NewSession<'_>) -> Result<(), ServerError> {
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO agent_sessions (id, token_hash, api_key_id, state, runs_builtins, tools_seen,
                                     lesson_id, lesson_tools, student, planned_minutes, created_at, last_activity,
                                     opened_by, trial, started_by, student_id, student_context)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(session.id)
    .bind(session.token_hash)
    .bind(session.opener.api_key)
    .bind(serde_json::to_string(session.state).unwrap_or_default())
    .bind(i64::from(session.runs_builtins))
    .bind(session.tools_seen)
    .bind(session.lesson.map(|l| l.lesson_id))
    .bind(session.lesson.map(|l| l.tools))
    .bind(session.lesson.and_then(|l| l.student))
    .bind(session.lesson.and_then(|l| l.planned_minutes).map(i64::from))
    .bind(session.at)
    .bind(session.at)
    .bind(session.opener.user)
    .bind(i64::from(session.opener.trial))
    .bind(
        session
            .opener
            .started_by
            .as_ref()
            .map(|s| serde_json::to_string(s).unwrap_or_default()),
    )
    .bind(session.lesson.and_then(|l| l.student_record).map(|(id, _)| id))
    .bind(session.lesson.and_then(|l| l.student_record).map(|(_, context)| context))
    .execute(&mut *tx)
    .await?;
    set_plugin_token(&mut *tx, session.id, session.plugin_token_hash, session.at).await?;
    tx.commit().await?;
    Ok(())
}

/// Sets a session's state (a backend's `PATCH …/state`) and marks it active.
pub async fn set_state(db: &Db, id: &str, state: &WorkflowState) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET state = $1, last_activity = $2 WHERE id = $3")
        .bind(serde_json::to_string(state).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Stores a session's turn log (a turn was reported) and marks it active.
pub async fn set_turns(db: &Db, id: &str, log: &TurnLog) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET turns = $1, last_activity = $2 WHERE id = $3")
        .bind(serde_json::to_string(log).unwrap_or_default())
        .bind(now())
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Records which tools the session's backend has now been told.
pub async fn set_tools_seen(db: &Db, id: &str, tools: &str) -> Result<(), ServerError> {
    sqlx::query("UPDATE agent_sessions SET tools_seen = $1 WHERE id = $2")
        .bind(tools)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

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

/// Marks the session ended now with `reason`; `false` if it had already
/// ended (or does not exist), so ending is idempotent.
pub async fn end(db: &Db, id: &str, reason: &str) -> Result<bool, ServerError> {
    let done = sqlx::query(
        "UPDATE agent_sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 AND ended_at IS NULL",
    )
    .bind(now())
    .bind(reason)
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ownership::may_see;

    /// Every combination of ties a session can have to teachers 1 and 2
    /// (a lesson, an opener, a key made by either or by nobody, a student
    /// record), for each viewer: the list's SQL filter keeps exactly the
    /// sessions the pure rule lets the viewer see, and `owners` reads the
    /// ties as they were stored.
    #[tokio::test]
    async fn the_list_filter_and_the_ownership_rule_agree_on_every_combination_of_ties() {
        let db = crate::server::platform::db::memory().await;
        sqlx::migrate!("./migrations/sqlite")
            .run(&db)
            .await
            .unwrap();
        for sql in [
            "INSERT INTO users (id, email, display_name, role, password_hash, created_at) VALUES
               (1, 'a@x.org', 'A', 'teacher', 'h', 0), (2, 'b@x.org', 'B', 'teacher', 'h', 0),
               (3, 'c@x.org', 'C', 'teacher', 'h', 0)",
            "INSERT INTO lessons (id, owner_id, title, created_at, updated_at) VALUES
               (11, 1, 'L1', 0, 0), (12, 2, 'L2', 0, 0)",
            "INSERT INTO api_keys (id, name, key_hash, prefix, created_by, created_at) VALUES
               (21, 'k1', 'h21', 'sb_', 1, 0), (22, 'k2', 'h22', 'sb_', 2, 0),
               (23, 'orphan', 'h23', 'sb_', NULL, 0)",
            "INSERT INTO students (id, teacher_id, name, created_at) VALUES
               (31, 1, 'Ana', 0), (32, 2, 'Ben', 0)",
        ] {
            sqlx::query(sql).execute(&db).await.unwrap();
        }
        let mut expected = Vec::new();
        let mut n = 0;
        for lesson in [None, Some(11i64), Some(12)] {
            for opener in [None, Some(1i64), Some(2)] {
                for key in [None, Some(21i64), Some(22), Some(23)] {
                    for student in [None, Some(31i64), Some(32)] {
                        n += 1;
                        let id = format!("s{n}");
                        sqlx::query(
                            "INSERT INTO agent_sessions (id, token_hash, state, created_at, last_activity,
                                                         lesson_id, opened_by, api_key_id, student_id)
                             VALUES ($1, $2, '{}', 0, $3, $4, $5, $6, $7)",
                        )
                        .bind(&id)
                        .bind(format!("t{n}"))
                        .bind(n)
                        .bind(lesson)
                        .bind(opener)
                        .bind(key)
                        .bind(student)
                        .execute(&db)
                        .await
                        .unwrap();
                        let ties = SessionOwners {
                            lesson_owner: lesson.map(|l| l - 10),
                            opened_by: opener,
                            key,
                            key_maker: key.and_then(|k| (k < 23).then_some(k - 20)),
                            student_teacher: student.map(|s| s - 30),
                        };
                        assert_eq!(owners(&db, &id).await.unwrap(), Some(ties), "{id}");
                        expected.push((id, ties));
                    }
                }
            }
        }
        assert!(expected.len() < 200, "all fit in one list");
        let viewers = [
            Viewer::Admin,
            Viewer::User(1),
            Viewer::User(2),
            Viewer::User(3),
            Viewer::Key(23),
            Viewer::Key(21),
        ];
        for viewer in viewers {
            let mut listed: Vec<String> = recent(&db, viewer)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            let mut seen: Vec<String> = expected
                .iter()
                .filter(|(_, o)| may_see(viewer, o))
                .map(|(id, _)| id.clone())
                .collect();
            listed.sort();
            seen.sort();
            assert_eq!(listed, seen, "{viewer:?}");
        }
        // Not vacuous: teacher 3 has nothing, teacher 1 some, the admin all.
        assert!(recent(&db, Viewer::User(3)).await.unwrap().is_empty());
        assert_eq!(
            recent(&db, Viewer::Admin).await.unwrap().len(),
            expected.len()
        );
        assert_eq!(owners(&db, "nope").await.unwrap(), None);
    }
}
