//! The tools Switchboard executes itself: the session tools (switching
//! workflow, ending, the time) for every session, and the banking demo's,
//! acting on the demo accounts in SQLite, for sessions that want them.
//! A lesson (tutor) session's tutor tools run here too, storing what they
//! record for the teacher. Every other tool is executed by the agent
//! backend, which reports its result.
//!
//! A built-in only produces a result (and keeps the verified account and
//! the failed-check count); what that result does to the session's step
//! and checks is the tool's catalogue `effects`, exactly as for a result a
//! backend reports.
//!
//! `Ok(Ok(result))` ran; `Ok(Err(reason))` refused by the tool itself
//! (e.g. identity checks locked); `Err` is a server failure.

use crate::domain::lesson::outcome::{self, is_tutor_tool, Recorded};
use crate::domain::limits::{excerpt, IDV_FAILURES_PER_ACCOUNT_PER_HOUR};
use crate::domain::vibe::{find_agent, HANG_UP_TOOL, SWITCH_AGENT_TOOL};
use crate::domain::workflow_state::AgentContext;
use crate::domain::workflow_state::{WorkflowState, MAX_FAILED_IDENTITY_CHECKS};
use crate::server::agent::todos;
use crate::server::db::now;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::{bank_accounts, lesson_outcomes, lessons};
use crate::server::{AppState, ServerError};
use serde_json::{json, Value};

type Outcome = Result<Result<Value, String>, ServerError>;

fn arg<'a>(arguments: &'a Value, name: &str) -> &'a str {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn pounds(pence: i64) -> String {
    format!(
        "{}£{}.{:02}",
        if pence < 0 { "-" } else { "" },
        pence.abs() / 100,
        pence.abs() % 100
    )
}

/// Switchboard's own tools, run for every session.
const SESSION_TOOLS: [&str; 3] = ["get_server_time", "start_workflow", "end_session"];

/// The banking demo's tools, run for sessions opened with built-ins on.
const DEMO_TOOLS: [&str; 7] = [
    "perform_idv_check",
    "lookup_account",
    "check_balance",
    "lookup_transaction",
    "create_dispute_case",
    "manage_recent_interactions",
    "mortgage_calculator",
];

/// Whether Switchboard executes `tool` for a session (`demo`: one that runs
/// the demo's built-ins; `lesson`: a tutor session); if not, the backend
/// does and reports the result.
pub fn executes(tool: &str, demo: bool, lesson: bool, vibe: bool) -> bool {
    SESSION_TOOLS.contains(&tool)
        || (demo && DEMO_TOOLS.contains(&tool))
        || (lesson && is_tutor_tool(tool))
        || (vibe && (VIBE_TOOLS.contains(&tool) || todos::is_todo_tool(tool)))
}

/// A vibe session's own tools: moving to another agent and ending the call.
const VIBE_TOOLS: [&str; 2] = [SWITCH_AGENT_TOOL, HANG_UP_TOOL];

/// `switchAgent {"agentName"}`: moves the session to the vibe's agent of
/// that name or id (any case) and answers in Ultravox's stage-change shape
/// with the new agent's prompt, voice and tools; an agent outside the vibe
/// is refused naming the choices.
fn switch_agent(
    state: &AppState,
    ws: &mut WorkflowState,
    arguments: &Value,
) -> Result<Value, String> {
    let Some(ctx) = ws.agent.clone() else {
        return Err("this session does not run in a vibe".into());
    };
    let rules = state.rules();
    let vibe = rules
        .vibe(&ctx.vibe)
        .ok_or_else(|| format!("vibe `{}` no longer exists", ctx.vibe))?;
    let agents = rules.agents_of(vibe);
    let wanted = arg(arguments, "agentName");
    let Some(agent) = find_agent(&agents, wanted) else {
        return Err(format!(
            "there is no agent `{}` in vibe `{}`; agents: {}",
            excerpt(wanted),
            vibe.id,
            agents
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let next = AgentContext {
        vibe: ctx.vibe.clone(),
        agent: agent.id.to_string(),
    };
    let stage = rules
        .stage(&next)
        .ok_or_else(|| format!("agent `{}` cannot be staged", agent.id))?;
    let text = if ctx.agent == next.agent {
        format!("You are already talking to {}.", agent.name)
    } else {
        format!("I'm now switching you to {}...", agent.name)
    };
    ws.agent = Some(next);
    Ok(stage.change(&text))
}

/// Runs `tool` (one that [`executes`]) for `row`: a tutor tool records its
/// outcome against the lesson; the others switch the workflow or change the
/// verified account and failed-check count as they do.
pub async fn run(
    state: &AppState,
    row: &SessionRow,
    ws: &mut WorkflowState,
    verified: &mut Option<String>,
    tool: &str,
    arguments: &Value,
) -> Result<Result<Recorded, String>, ServerError> {
    if ws.agent.is_some() && VIBE_TOOLS.contains(&tool) {
        let result = if tool == SWITCH_AGENT_TOOL {
            switch_agent(state, ws, arguments)
        } else {
            Ok(json!({"status": "ended", "message": "The call is ending; say goodbye."}))
        };
        return Ok(result.map(|result| Recorded {
            result,
            outcome: None,
        }));
    }
    if ws.agent.is_some() && todos::is_todo_tool(tool) {
        return Ok(todos::run(state, &row.id, tool, arguments)
            .await?
            .map(|result| Recorded {
                result,
                outcome: None,
            }));
    }
    if row.lesson_tools.is_some() && is_tutor_tool(tool) {
        let Some(lesson_id) = row.lesson_id else {
            return Ok(Err("the lesson this session runs has been deleted".into()));
        };
        let lesson = lessons::get_any(&state.db, lesson_id).await?;
        let before = lesson_outcomes::for_session(&state.db, &row.id).await?;
        return Ok(outcome::record(tool, arguments, &lesson.draft, &before));
    }
    Ok(run_tool(state, &row.id, ws, verified, tool, arguments)
        .await?
        .map(|result| Recorded {
            result,
            outcome: None,
        }))
}

async fn run_tool(
    state: &AppState,
    session: &str,
    ws: &mut WorkflowState,
    verified: &mut Option<String>,
    tool: &str,
    arguments: &Value,
) -> Outcome {
    let db = &state.db;
    match tool {
        "get_server_time" => Ok(Ok(json!({
            "unix": now(),
            "utc": crate::domain::time::format_utc(now()),
        }))),
        "start_workflow" => {
            let target = arg(arguments, "workflowId");
            let rules = state.rules();
            if !rules.has_workflow(target) {
                return Ok(Err(format!(
                    "there is no workflow `{}`; valid workflow ids: {}",
                    excerpt(target),
                    rules.workflow_ids().join(", ")
                )));
            }
            ws.current_workflow = target.to_owned();
            ws.current_step = "started".into();
            ws.workflow_step = rules.first_step(target);
            let tools = rules.available_at(target, ws.workflow_step.as_deref());
            Ok(Ok(json!({
                "workflow": target,
                "tools": tools,
                "message": format!("You are now in the `{target}` workflow. The tools you can use now are: {}.", tools.join(", ")),
            })))
        }
        "end_session" => Ok(Ok(
            json!({"status": "ended", "message": "The session is closing; say goodbye."}),
        )),
        "perform_idv_check" => {
            if ws.failed_identity_checks >= MAX_FAILED_IDENTITY_CHECKS {
                return Ok(Err(format!(
                    "identity checks are locked for this session after {MAX_FAILED_IDENTITY_CHECKS} failed attempts; hand the caller to a colleague"
                )));
            }
            let account = arg(arguments, "accountNumber");
            let at = state.clock.now();
            if state.budgets.idv_locked(account, at) {
                return Ok(Err(format!(
                    "identity checks for account {} are locked after {IDV_FAILURES_PER_ACCOUNT_PER_HOUR} failed attempts within an hour; hand the caller to a colleague",
                    excerpt(account)
                )));
            }
            let row = bank_accounts::identity_details(db, account).await?;
            let passed = row.is_some_and(|(sort, dob)| {
                sort == arg(arguments, "sortCode") && dob == arg(arguments, "dateOfBirth")
            });
            if passed {
                *verified = Some(account.to_owned());
                Ok(Ok(
                    json!({"verified": true, "message": "Identity verified."}),
                ))
            } else {
                *verified = None;
                ws.failed_identity_checks += 1;
                state.budgets.idv_failed(account, at);
                Ok(Ok(
                    json!({"verified": false, "message": "The details do not match our records."}),
                ))
            }
        }
        "lookup_account" => {
            let account = arg(arguments, "accountNumber");
            let holder = bank_accounts::holder(db, account).await?;
            Ok(Ok(
                json!({"found": holder.is_some(), "accountNumber": account}),
            ))
        }
        "check_balance" => {
            let account = arg(arguments, "accountNumber");
            if verified.as_deref() != Some(account) {
                return Ok(Err(format!(
                    "identity was not verified for account {account}"
                )));
            }
            let balance = bank_accounts::balance_pence(db, account).await?;
            Ok(Ok(
                json!({"accountNumber": account, "balancePence": balance, "balance": pounds(balance)}),
            ))
        }
        "lookup_transaction" | "create_dispute_case" => {
            let id = arg(arguments, "transactionId");
            let Some(bank_accounts::Transaction {
                account_number: account,
                booked_on,
                description,
                amount_pence: amount,
            }) = bank_accounts::transaction(db, id).await?
            else {
                return Ok(Err(format!("there is no transaction `{}`", excerpt(id))));
            };
            if verified.as_deref() != Some(account.as_str()) {
                return Ok(Err(format!(
                    "transaction `{id}` is not on the verified account"
                )));
            }
            if tool == "lookup_transaction" {
                return Ok(Ok(
                    json!({"transactionId": id, "bookedOn": booked_on, "description": description, "amount": pounds(amount)}),
                ));
            }
            let case = bank_accounts::open_dispute(
                db,
                session,
                &account,
                id,
                arg(arguments, "reason"),
                arguments.get("details").and_then(Value::as_str),
            )
            .await?;
            Ok(Ok(
                json!({"caseId": format!("DC-{case:05}"), "transactionId": id, "status": "open"}),
            ))
        }
        "manage_recent_interactions" => {
            let Some(account) = verified.clone() else {
                return Ok(Err("identity was not verified".into()));
            };
            if arg(arguments, "action") == "add" {
                bank_accounts::add_interaction(db, &account, arg(arguments, "note")).await?;
            }
            let notes = bank_accounts::recent_interactions(db, &account).await?;
            Ok(Ok(json!({
                "interactions": notes.into_iter().map(|(at, note)| json!({"at": crate::domain::time::format_utc(at), "note": note})).collect::<Vec<_>>()
            })))
        }
        "mortgage_calculator" => {
            let principal = arguments
                .get("principal")
                .and_then(Value::as_f64)
                .unwrap_or_default();
            let rate = arguments
                .get("annualRatePercent")
                .and_then(Value::as_f64)
                .unwrap_or_default()
                / 1200.0;
            let months = arguments
                .get("years")
                .and_then(Value::as_f64)
                .unwrap_or(1.0)
                * 12.0;
            let monthly = if rate == 0.0 {
                principal / months
            } else {
                principal * rate / (1.0 - (1.0 + rate).powf(-months))
            };
            Ok(Ok(
                json!({"monthlyPayment": (monthly * 100.0).round() / 100.0}),
            ))
        }
        _ => Ok(Err(format!("`{tool}` is not a built-in tool"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pounds_are_formatted_with_sign_and_pence() {
        assert_eq!(pounds(254399), "£2543.99");
        assert_eq!(pounds(-450), "-£4.50");
        assert_eq!(pounds(5), "£0.05");
    }
}
