//! Switchboard's own tools, run for every session: the time, switching
//! workflow and ending the session.

use super::{arg, plain, Ctx, Family, Outcome};
use crate::domain::limits::excerpt;
use crate::server::platform::db::now;
use futures_util::future::BoxFuture;
use serde_json::json;

/// The session tools.
pub const FAMILY: Family = Family {
    name: "session",
    tools: || vec!["get_server_time", "start_workflow", "end_session"],
    runs_for: |_| true,
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
