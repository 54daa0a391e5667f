//! The one executor: every tool Switchboard runs itself belongs to one
//! family, and every family registers in one table keyed by tool id.
//!
//! A family is one file here with a `FAMILY` constant (its tool ids, which
//! sessions have Switchboard run them, and how to run one) and one line in
//! [`FAMILIES`]. A call that `decide` allowed runs here when its tool's
//! family runs for the session ([`executes`]); otherwise the agent backend
//! (or the session's plugin) executes it and reports the result.
//!
//! A built-in only produces a result (and keeps the verified account and
//! the failed-check count); what that result does to the session's step
//! and checks is the tool's catalogue `effects`, exactly as for a result a
//! backend reports. `Ok(Ok(ran))` ran; `Ok(Err(reason))` refused by the
//! tool itself (identity checks locked, an unknown todo, …); `Err` is a
//! server failure.

mod banking;
mod session;
pub mod todos;
mod tutor;
mod upstream;
mod vibe;

use crate::domain::lesson::outcome::Recorded;
use crate::domain::workflow_state::WorkflowState;
use crate::server::store::agent_sessions::SessionRow;
use crate::server::{AppState, ServerError};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Every family of built-in tools. Adding one: a file with its `FAMILY`,
/// and a line here.
const FAMILIES: [&Family; 6] = [
    &session::FAMILY,
    &banking::FAMILY,
    &tutor::FAMILY,
    &vibe::FAMILY,
    &todos::FAMILY,
    &upstream::FAMILY,
];

/// What kind of session a call is in, which decides the families that run
/// for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// Opened with the demo's built-ins on (`runBuiltins`).
    pub builtins: bool,
    /// A tutor session (it runs a lesson).
    pub lesson: bool,
    /// A vibe session (it talks to an agent).
    pub vibe: bool,
}

impl Kind {
    /// The kind of session `row` in state `ws`.
    pub fn of(row: &SessionRow, ws: &WorkflowState) -> Self {
        Self {
            builtins: row.runs_builtins,
            lesson: row.lesson_tools.is_some(),
            vibe: ws.agent.is_some(),
        }
    }
}

/// One call being run: the session, its state (which the tool may change)
/// and the call.
pub struct Ctx<'a> {
    /// The server.
    pub state: &'a AppState,
    /// The session, as read under its call lock.
    pub row: &'a SessionRow,
    /// Its state, changed in place by tools that move it.
    pub ws: &'a mut WorkflowState,
    /// The account whose holder passed the identity check, if any.
    pub verified: &'a mut Option<String>,
    /// The tool called.
    pub tool: &'a str,
    /// Its arguments (already checked against its schema).
    pub arguments: &'a Value,
}

/// What running a built-in gave: its result, why it did not do what was
/// asked, or a server failure.
pub type Outcome = Result<Result<Recorded, Declined>, ServerError>;

/// Why a built-in did not do what was asked; either way the model is told
/// honestly, and the call's record says so.
#[derive(Debug, Clone, PartialEq)]
pub enum Declined {
    /// The tool refused before acting (identity checks locked, a deleted
    /// lesson): recorded as refused, the reason the model reads.
    Refused(String),
    /// The tool ran and answered that it failed (the todo tools' seed
    /// shape `{"success": false, "error", "toolResultText"}`): recorded as
    /// allowed with status `failed` and this answer as its result, which
    /// is what the model reads; the tool's effects do not apply.
    Failed(Value),
}

impl From<String> for Declined {
    fn from(reason: String) -> Self {
        Self::Refused(reason)
    }
}

/// How a family runs one of its tools.
pub type Run = for<'a> fn(Ctx<'a>) -> BoxFuture<'a, Outcome>;

/// A family of tools Switchboard runs itself.
pub struct Family {
    /// Its name, for people (and duplicate-id messages).
    pub name: &'static str,
    /// Its tool ids.
    pub tools: fn() -> Vec<&'static str>,
    /// Whether Switchboard runs its tools for a session of this kind (if
    /// not, the backend does).
    pub runs_for: fn(Kind) -> bool,
    /// Whether it runs a tool its `tools` do not list: one whose id only
    /// the server knows (a tool imported from a connected MCP server).
    pub claims: fn(&AppState, &str) -> bool,
    /// Runs one of its tools.
    pub run: Run,
}

/// The table: each built-in tool id and its family, built once.
fn table() -> &'static HashMap<&'static str, &'static Family> {
    static TABLE: OnceLock<HashMap<&'static str, &'static Family>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        for family in FAMILIES {
            for tool in (family.tools)() {
                if let Some(other) = table.insert(tool, family) {
                    panic!("`{tool}` is in families {} and {}", other.name, family.name);
                }
            }
        }
        table
    })
}

/// [`Family::claims`] of a family whose tools are all in its `tools`.
fn by_id_only(_: &AppState, _: &str) -> bool {
    false
}

/// The family that runs `tool` for a session of `kind`, if Switchboard
/// runs it there: by the table, else the family that claims it.
fn family(state: &AppState, tool: &str, kind: Kind) -> Option<&'static Family> {
    table()
        .get(tool)
        .copied()
        .or_else(|| FAMILIES.into_iter().find(|f| (f.claims)(state, tool)))
        .filter(|family| (family.runs_for)(kind))
}

/// Whether Switchboard executes `tool` for a session of `kind`; if not,
/// the backend does and reports the result.
pub fn executes(state: &AppState, tool: &str, kind: Kind) -> bool {
    family(state, tool, kind).is_some()
}

/// Runs `cx.tool` (one that [`executes`] for `kind`).
pub async fn run(cx: Ctx<'_>, kind: Kind) -> Outcome {
    match family(cx.state, cx.tool, kind) {
        Some(family) => (family.run)(cx).await,
        None => Ok(Err(Declined::Refused(format!(
            "`{}` is not a built-in tool",
            cx.tool
        )))),
    }
}

/// A result with nothing for the teacher, or the tool's refusal.
fn plain(result: Result<Value, String>) -> Result<Recorded, Declined> {
    result.map(Recorded::plain).map_err(Declined::Refused)
}

/// String argument `name` (empty when missing or not a string).
fn arg<'a>(arguments: &'a Value, name: &str) -> &'a str {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO: Kind = Kind {
        builtins: true,
        lesson: false,
        vibe: false,
    };

    #[test]
    fn every_tool_belongs_to_one_family() {
        assert!(table().len() >= 25, "{}", table().len());
    }

    #[test]
    fn a_family_runs_only_for_the_sessions_it_serves() {
        let executes = |tool: &str, kind: Kind| {
            table()
                .get(tool)
                .is_some_and(|family| (family.runs_for)(kind))
        };
        let backend = Kind {
            builtins: false,
            ..DEMO
        };
        let lesson = Kind {
            lesson: true,
            ..backend
        };
        let vibe = Kind {
            vibe: true,
            ..backend
        };
        for kind in [DEMO, backend, lesson, vibe] {
            assert!(executes("end_session", kind), "session tools run for all");
        }
        assert!(executes("check_balance", DEMO) && !executes("check_balance", backend));
        assert!(executes("mark_for_review", lesson) && !executes("mark_for_review", DEMO));
        assert!(executes("switchAgent", vibe) && executes("createTodo", vibe));
        assert!(!executes("createTodo", DEMO) && !executes("hangUp", lesson));
        assert!(
            !executes("createGraph", DEMO),
            "plugin tools are never built in"
        );
    }
}
