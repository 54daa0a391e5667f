//! One row of the visualiser's timeline: a tool call as it was decided
//! and, once it ran, its result — kept apart so the timeline reads the
//! same wherever the visualiser is shown (its page, a trial).

use crate::domain::agent_session::{CallOutcome, CallStatus, ToolCallRecord};
use crate::domain::catalogue::{workflow_name, Workflow};
use crate::ui::components::{LocalTime, Status, StatusIcon};
use leptos::prelude::*;

/// One tool call: tool, allowed or refused, where (the workflow's name) and
/// how long, when (in the watcher's time zone), the arguments, and the
/// result or the reason for the refusal.
#[component]
pub fn CallRow(call: ToolCallRecord, workflows: StoredValue<Vec<Workflow>>) -> impl IntoView {
    let allowed = call.outcome == CallOutcome::Allowed;
    let workflow = workflows.with_value(|list| workflow_name(list, &call.workflow));
    let detail = call.detail();
    let status = call.status.as_str();
    let status_badge = (allowed && !call.status.is_done()).then(|| {
        view! {
            <span class=format!("badge status-{status}") data-testid="call-status">
                {if call.status == CallStatus::Awaiting {
                    view! { <StatusIcon status=Status::Waiting decorative=true /> "awaiting result" }.into_any()
                } else {
                    view! { <StatusIcon status=Status::Failed decorative=true /> "failed" }.into_any()
                }}
            </span>
        }
    });
    view! {
        <li class=if allowed { "call allowed" } else { "call refused" } data-call=call.id data-status=status>
            <div class="call-head">
                <code class="call-tool">{call.tool.clone()}</code>
                <span class=if allowed { "badge ok" } else { "badge bad" }>
                    <StatusIcon status=if allowed { Status::Passed } else { Status::Failed } decorative=true />
                    {if allowed { "allowed" } else { "refused" }}
                </span>
                {status_badge}
                <span class="muted small">
                    {format!("in {workflow} · {} µs · ", call.duration_us)}
                    <LocalTime ms=call.at_ms seconds=true />
                </span>
            </div>
            <div class="call-args muted small">{format!("arguments: {}", call.arguments)}</div>
            <div class=if allowed { "call-detail" } else { "call-detail reason" }>{detail}</div>
        </li>
    }
}
