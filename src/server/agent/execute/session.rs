//! Switchboard's own tools, run for every session: the time, switching
//! workflow, moving between a workflow's steps and ending the session.

use super::{arg, plain, Ctx, Family, Outcome};
use crate::domain::agent_runner::GO_TO_STEP_TOOL;
use crate::domain::limits::excerpt;
use crate::server::platform::db::now;
use futures_util::future::BoxFuture;
use serde_json::json;

/// The session tools.
pub const FAMILY: Family = Family {
    name: "session",
    tools: || {
        vec![
            "get_server_time",
            "start_workflow",
            GO_TO_STEP_TOOL,
            "end_session",
        ]
    },
    runs_for: |_| true,
    claims: super::by_id_only,
    run,
};

fn run(cx: Ctx<'_>) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        Ok(plain(match cx.tool {
            "get_server_time" => Ok(json!({
                "unix": now(),
                "utc": crate::domain::time::format_utc(now()),
            })),
            "start_workflow" => start_workflow(cx),
            GO_TO_STEP_TOOL => go_to_step(cx),
            _ => Ok(json!({"status": "ended", "message": "The session is closing; say goodbye."})),
        }))
    })
}

/// `start_workflow {"workflowId"}`: moves the session to the workflow's
/// first step and tells the model its tools there.
fn start_workflow(cx: Ctx<'_>) -> Result<serde_json::Value, String> {
    let target = arg(cx.arguments, "workflowId");
    let rules = cx.state.rules();
    if !rules.has_workflow(target) {
        return Err(format!(
            "there is no workflow `{}`; valid workflow ids: {}",
            excerpt(target),
            rules.workflow_ids().join(", ")
        ));
    }
    let ws = cx.ws;
    ws.current_workflow = target.to_owned();
    ws.current_step = "started".into();
    ws.workflow_step = rules.first_step(target);
    let tools = rules.available_at(target, ws.workflow_step.as_deref());
    Ok(json!({
        "workflow": target,
        "tools": tools,
        "message": format!("You are now in the `{target}` workflow. The tools you can use now are: {}.", tools.join(", ")),
    }))
}

/// `go_to_step {"step"}`: moves the session to the step of its workflow
/// with that name (any case) or uuid, and tells the model the step's
/// instructions and its tools there.
fn go_to_step(cx: Ctx<'_>) -> Result<serde_json::Value, String> {
    let wanted = arg(cx.arguments, "step").trim();
    let rules = cx.state.rules();
    let workflow = cx.ws.current_workflow.clone();
    let steps = rules
        .definition(&workflow)
        .map(|d| d.steps.clone())
        .unwrap_or_default();
    let Some(step) = steps
        .iter()
        .find(|s| s.uuid == wanted || s.name.trim().eq_ignore_ascii_case(wanted))
    else {
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "workflow `{workflow}` has no step \"{}\"; its steps: {}",
            excerpt(wanted),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ));
    };
    cx.ws.workflow_step = Some(step.uuid.clone());
    let tools = rules.available_at(&workflow, Some(&step.uuid));
    Ok(json!({
        "step": step.name,
        "instructions": step.system_prompt,
        "tools": tools,
        "message": format!("You are now in step “{}”. Follow its instructions; the tools you can use now are: {}.", step.name, tools.join(", ")),
    }))
}
