//! A backend that tracks the conversation itself sets the session's step
//! and checks, within the rules (declared checks, the workflow's steps).

use super::access::{admit_write, get};
use super::listing::tools_now;
use super::watch::publish_state_change;
use crate::domain::agent_session::own_checks_problem;
use crate::domain::agent_session::{SessionEvent, StatePatch};
use crate::domain::workflow_state::WorkflowState;
use crate::error::ApiError;
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::{AppState, ServerError};

/// A backend that tracks the conversation itself sets the session's step
/// and checks; watchers get the same `workflow_update` as for any change.
pub async fn patch_state(
    state: &AppState,
    row: SessionRow,
    patch: &StatePatch,
) -> Result<WorkflowState, ServerError> {
    let change = patch.change().map_err(ApiError::Invalid)?;
    let _guard = state.lock_session(&row.id).await?;
    let row = get(state, &row.id).await?;
    row.still_open()?;
    let before = row.workflow_state()?;
    let mut ws = before.clone();
    change.apply(&mut ws);
    let rules = state.rules();
    if let Some(problem) = own_checks_problem(&before, &ws, |c| rules.declares_check(c)) {
        return Err(ApiError::Invalid(problem).into());
    }
    if let Some(step) = &patch.workflow_step {
        let steps: Vec<String> = rules
            .definition(&ws.current_workflow)
            .map(|d| d.steps.iter().map(|s| s.uuid.clone()).collect())
            .unwrap_or_default();
        if !steps.contains(step) {
            return Err(ApiError::invalid(
                "workflowStep",
                format!(
                    "is not a step of workflow `{}`; its steps: {}",
                    ws.current_workflow,
                    if steps.is_empty() {
                        "none".to_owned()
                    } else {
                        steps.join(", ")
                    }
                ),
            )
            .into());
        }
        ws.workflow_step = Some(step.clone());
    }
    if ws != before {
        admit_write(state, &row.id).await?;
        let tools_before = tools_now(state, &row.id, row.lesson_tools.as_deref(), &before);
        rows::set_state(&state.db, &row.id, &ws).await?;
        publish_state_change(state, &row, &before, &ws);
        let tools = tools_now(state, &row.id, row.lesson_tools.as_deref(), &ws);
        if tools != tools_before {
            state
                .hub
                .publish(&row.id, &SessionEvent::ToolsChanged { tools });
        }
    }
    Ok(ws)
}
