//! Opening a session: in a workflow, in a vibe with one of its agents, or
//! running a lesson (a tutor session). Each is stored with its credentials
//! and the tools it starts with, and announced to watchers.

use super::access::new_plugin_token;
use super::end::end;
use super::listing::{lesson_prompt, tools_under};
use super::watch::summary_of;
use crate::domain::agent_session::{SessionEvent, SessionSummary};
use crate::domain::lesson::LessonDraft;
use crate::domain::limits::{excerpt, OPEN_TRIALS_PER_USER};
use crate::domain::session_access::SESSION_TOKEN_PREFIX;
use crate::domain::session_origin::Opener;
use crate::domain::student::StudentContext;
use crate::domain::vibe::find_agent;
use crate::domain::workflow_state::{AgentContext, WorkflowState};
use crate::error::ApiError;
use crate::server::auth::{random_token, token_hash};
use crate::server::store::agent_sessions::{self as rows, LessonFields, NewSession};
use crate::server::{AppState, ServerError};
use serde_json::json;

/// A session just opened: its id and both credentials.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The session's id.
    pub id: String,
    /// The session token (`st_…`), for the agent backend.
    pub token: String,
    /// The plugin token (`pt_…`), for a plugin of the session.
    pub plugin_token: String,
}

/// Opens a session in `workflow`; returns its id and credentials. With
/// `runs_builtins` off, Switchboard executes only the session tools and the
/// backend executes (and reports the result of) every other allowed call.
pub async fn open(
    state: &AppState,
    workflow: &str,
    opener: &Opener,
    runs_builtins: bool,
) -> Result<Opened, ServerError> {
    if !state.rules().has_workflow(workflow) {
        return Err(ApiError::invalid(
            "workflowId",
            format!(
                "unknown workflow \"{}\"; valid workflow ids: {}",
                excerpt(workflow),
                state.rules().workflow_ids().join(", ")
            ),
        )
        .into());
    }
    let mut ws = WorkflowState::start(workflow);
    ws.workflow_step = state.rules().first_step(workflow);
    // A new session has no plugin yet.
    let tools = tools_under(&state.rules(), None, &ws).join(",");
    start(state, ws, opener, runs_builtins, &tools, None).await
}

/// Stores a new session starting in `ws`, announces it to its (future)
/// watchers and the session list, and returns its id and credentials.
async fn start(
    state: &AppState,
    ws: WorkflowState,
    opener: &Opener,
    runs_builtins: bool,
    tools: &str,
    lesson: Option<(LessonFields<'_>, &str)>,
) -> Result<Opened, ServerError> {
    let (lesson, lesson_title) = lesson.unzip();
    if let (true, Some(user)) = (opener.trial, opener.user) {
        make_room_for_trial(state, user).await?;
    }
    let id = format!("s{}", &random_token()[..15]).to_lowercase();
    let token = format!("{SESSION_TOKEN_PREFIX}{}", random_token());
    let plugin_token = new_plugin_token();
    let t = state.clock.now();
    rows::insert(
        &state.db,
        &NewSession {
            id: &id,
            token_hash: &token_hash(&token),
            plugin_token_hash: &token_hash(&plugin_token),
            opener,
            state: &ws,
            runs_builtins,
            tools_seen: tools,
            lesson,
            at: t,
        },
    )
    .await?;
    state
        .hub
        .publish(&id, &SessionEvent::WorkflowUpdate(ws.update()));
    let summary = SessionSummary {
        started_by: opener.started_by.clone(),
        trial: opener.trial,
        lesson_title: lesson_title.map(str::to_owned),
        ..summary_of(&id, &ws, t, t, false, lesson.and_then(|l| l.student))
    };
    // Whose it is, read as stored (its lesson's owner, its key's maker…),
    // so the list's watchers are told only of their own sessions.
    if let Some(owners) = rows::owners(&state.db, &id).await? {
        state.hub.know_owners(&id, owners);
    }
    state
        .hub
        .publish_list(&id, &json!({"type": "opened", "session": summary}));
    Ok(Opened {
        id,
        token,
        plugin_token,
    })
}

/// Ends user `user`'s oldest open trials so that a new one keeps them
/// within [`OPEN_TRIALS_PER_USER`] (watchers see why each ended).
async fn make_room_for_trial(state: &AppState, user: i64) -> Result<(), ServerError> {
    let open = rows::open_trials_of(&state.db, user).await?;
    for id in open.iter().skip(OPEN_TRIALS_PER_USER.saturating_sub(1)) {
        end(state, id, "replaced by a newer trial").await?;
    }
    Ok(())
}

/// Opens a session in vibe `vibe` talking to `agent` (default: the vibe's
/// default agent); its tools are the vibe's core tools and the agent's,
/// through the same checks as any session.
pub async fn open_vibe(
    state: &AppState,
    vibe: &str,
    agent: Option<&str>,
    opener: &Opener,
) -> Result<Opened, ServerError> {
    let rules = state.rules();
    let Some(v) = rules.vibe(vibe) else {
        let ids: Vec<&str> = rules.vibes().iter().map(|v| v.id.as_str()).collect();
        return Err(ApiError::invalid(
            "vibeId",
            format!(
                "unknown vibe \"{}\"; vibes: {}",
                excerpt(vibe),
                ids.join(", ")
            ),
        )
        .into());
    };
    let agent = match agent {
        None => v.default_agent.to_string(),
        Some(wanted) => {
            let agents = rules.agents_of(v);
            match find_agent(&agents, wanted) {
                Some(a) => a.id.to_string(),
                None => {
                    return Err(ApiError::invalid(
                        "agentId",
                        format!(
                            "agent \"{}\" is not in vibe \"{vibe}\"; agents: {}",
                            excerpt(wanted),
                            v.agents
                                .iter()
                                .map(|a| a.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                    .into())
                }
            }
        }
    };
    let mut ws = WorkflowState::start(&format!("vibe-{vibe}"));
    ws.agent = Some(AgentContext {
        vibe: vibe.to_owned(),
        agent,
    });
    // A new session has no plugin yet.
    let tools = tools_under(&state.rules(), None, &ws).join(",");
    start(state, ws, opener, true, &tools, None).await
}

/// A tutor session's tools and whose session it is.
pub struct LessonRun<'a> {
    /// The lesson.
    pub lesson_id: i64,
    /// Its enabled tutor tools, as the prompt declares them.
    pub tools: Vec<String>,
    /// Who it is for (shown in lists).
    pub student: Option<&'a str>,
    /// The lesson's title (shown in lists).
    pub title: &'a str,
    /// The student record it runs for, and what it knows of them.
    pub record: Option<StudentContext>,
    /// How long it should run (the lesson's duration).
    pub planned_minutes: Option<u32>,
}

/// The run of lesson `lesson_id` (its `draft`) for `student` (and their
/// record, with what the session knows of them): the tools its prompt
/// declares and its planned length.
pub fn lesson_run<'a>(
    lesson_id: i64,
    draft: &'a LessonDraft,
    student: Option<&'a str>,
    record: Option<StudentContext>,
) -> LessonRun<'a> {
    LessonRun {
        lesson_id,
        tools: lesson_prompt(draft, record.as_ref())
            .declarations
            .iter()
            .map(|d| d.name.clone())
            .collect(),
        student,
        title: &draft.title,
        record,
        planned_minutes: draft.duration_minutes,
    }
}

/// Opens a tutor session for a lesson: its workflow is `lesson-{id}` and
/// its tools are the lesson's, through the same checks as any session.
pub async fn open_lesson(
    state: &AppState,
    run: LessonRun<'_>,
    opener: &Opener,
) -> Result<Opened, ServerError> {
    let ws = WorkflowState::start(&format!("lesson-{}", run.lesson_id));
    let tools = run.tools.join(",");
    let context = run
        .record
        .as_ref()
        .map(|c| (c.student_id, serde_json::to_string(c).unwrap_or_default()));
    let lesson = LessonFields {
        lesson_id: run.lesson_id,
        tools: &tools,
        student: run.student,
        planned_minutes: run.planned_minutes,
        student_record: context.as_ref().map(|(id, json)| (*id, json.as_str())),
    };
    start(state, ws, opener, true, &tools, Some((lesson, run.title))).await
}
