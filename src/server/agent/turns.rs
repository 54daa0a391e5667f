//! A tutor session's turns: the backend reports each, the lesson's
//! triggers are evaluated on the session's clock, and the nudges that
//! fired come back.

use super::access::{admit_write, get};
use crate::domain::agent_session::{SessionEvent, TurnUpdate};
use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::nudge::{evaluate, Nudge, Speaker};
use crate::error::ApiError;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::store::lessons;
use crate::server::{AppState, ServerError};

/// What a reported turn gets back.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnAnswer {
    /// Turns the student has taken.
    pub student_turns: u32,
    /// Turns the tutor has taken.
    pub tutor_turns: u32,
    /// Seconds since the session opened.
    pub elapsed_seconds: i64,
    /// Seconds left of the planned length (negative once overdue), if the
    /// session has one.
    pub remaining_seconds: Option<i64>,
    /// Instructions for the model, from the triggers that fired now.
    pub nudges: Vec<Nudge>,
}

/// The tool settings whose triggers a tutor session evaluates: the lesson's
/// enabled tools that the session opened with (none for a workflow session
/// or a deleted lesson).
async fn trigger_tools(state: &AppState, row: &SessionRow) -> Result<Vec<ToolConfig>, ServerError> {
    let (Some(lesson_id), Some(tools)) = (row.lesson_id, row.lesson_tools.as_deref()) else {
        return Ok(Vec::new());
    };
    let lesson = match lessons::get_any(&state.db, lesson_id).await {
        Ok(lesson) => lesson,
        Err(ServerError::Api(ApiError::NotFound(_))) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let session_tools: Vec<&str> = tools.split(',').collect();
    Ok(lesson
        .draft
        .tool_configuration
        .enabled_in_catalogue_order()
        .into_iter()
        .filter(|t| session_tools.contains(&t.tool_id.as_str()))
        .cloned()
        .collect())
}

/// Counts a turn the backend reports (`speaker` said `text`), evaluates
/// the session's triggers on the session's clock, keeps the turn log and
/// tells watchers; answers with the nudges that fired.
pub async fn turn(
    state: &AppState,
    row: SessionRow,
    speaker: Speaker,
    text: Option<&str>,
) -> Result<TurnAnswer, ServerError> {
    let _guard = state.lock_session(&row.id).await?;
    let row = get(state, &row.id).await?;
    row.still_open()?;
    admit_write(state, &row.id).await?;
    let tools = trigger_tools(state, &row).await?;
    let mut log = row.turn_log()?;
    let now = state.clock.now();
    let timing = row.timing();
    let nudges = evaluate(&tools, &mut log, speaker, text, timing, now);
    rows::set_turns(&state.db, &row.id, &log).await?;
    state.hub.publish(
        &row.id,
        &SessionEvent::Turn(TurnUpdate {
            student: log.student,
            tutor: log.tutor,
            nudges: nudges.clone(),
        }),
    );
    Ok(TurnAnswer {
        student_turns: log.student,
        tutor_turns: log.tutor,
        elapsed_seconds: now - timing.started_at,
        remaining_seconds: timing.remaining(now),
        nudges,
    })
}
