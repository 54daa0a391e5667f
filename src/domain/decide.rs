//! Whether a session may make a tool call now: the one decision every door
//! (REST, MCP, the admins' console) goes through before anything runs.
//!
//! Pure: the server gathers what the decision needs (the tools the session
//! may call now, where it is, its state, the call's plugin tool if any, and
//! the rules in force behind [`Rulebook`]) and this module answers with
//! `None` (go ahead) or a typed [`Refusal`]. Each refusal's `Display` is the
//! reason the agent is told and the call is recorded with, word for word,
//! so the model can act on it (call the named tool first, pick a real
//! workflow, …).

use crate::domain::catalogue::WORKFLOW_SWITCH_TOOL;
use crate::domain::limits::excerpt;
use crate::domain::plugin::ToolStatus;
use crate::domain::workflow_state::WorkflowState;
use serde_json::Value;
use std::fmt;

/// Where a session is, for a refusal of a tool it cannot call there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A tutor session running lesson `0`: its lesson's enabled tools.
    Lesson(i64),
    /// A vibe session talking to agent `0`: its vibe's and agent's tools.
    Agent(String),
    /// A workflow session in workflow `0`: the workflow's (and step's) tools.
    Workflow(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lesson(lesson) => write!(f, "enabled in lesson {lesson}"),
            Self::Agent(agent) => write!(f, "available to agent `{agent}`"),
            Self::Workflow(workflow) => write!(f, "available in workflow `{workflow}`"),
        }
    }
}

/// The rules in force, as far as a decision needs them (the server's
/// compiled rules implement it; tests use a small table).
pub trait Rulebook {
    /// The checks catalogue tool `tool` requires, or `None` when the
    /// catalogue has no such tool.
    fn requires(&self, tool: &str) -> Option<&[String]>;
    /// Whether workflow `workflow` exists.
    fn has_workflow(&self, workflow: &str) -> bool;
    /// Every workflow id, in catalogue order (named in a refusal).
    fn workflow_ids(&self) -> Vec<&str>;
    /// Checks `arguments` against catalogue tool `tool`'s schema; the error
    /// names the field and the rule it broke.
    fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), String>;
    /// The tools whose effects can set `check`, in id order.
    fn setters_of(&self, check: &str) -> Vec<&str>;
    /// Why catalogue tool `tool` is withheld from every session, if it is
    /// (an imported tool its MCP server no longer offers).
    fn withheld(&self, tool: &str) -> Option<&Withheld>;
}

/// Why a catalogue tool imported from a connected MCP server is withheld:
/// it stays in the catalogue (bindings, agents and history may name it)
/// but no session is offered it, and a call of it is refused saying this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withheld {
    /// Its server no longer lists it.
    Unlisted {
        /// Its name upstream.
        upstream_name: String,
    },
    /// Its server was removed.
    ServerRemoved,
}

impl Withheld {
    /// Why an imported tool is withheld, from its link: whether its server
    /// still exists, its name upstream and whether that server still lists
    /// it; `None` while it is offered.
    pub fn of(server_exists: bool, upstream_name: &str, listed: bool) -> Option<Self> {
        match (server_exists, listed) {
            (false, _) => Some(Self::ServerRemoved),
            (true, false) => Some(Self::Unlisted {
                upstream_name: upstream_name.to_owned(),
            }),
            (true, true) => None,
        }
    }
}

impl fmt::Display for Withheld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unlisted { upstream_name } => write!(
                f,
                "its MCP server no longer lists `{}`",
                excerpt(upstream_name)
            ),
            Self::ServerRemoved => f.write_str("its MCP server was removed"),
        }
    }
}

/// The session's plugin tool a call names (a plugin tool takes precedence
/// over a catalogue tool of the same name).
pub struct PluginTool<'a> {
    /// The plugin's type, e.g. `codap`.
    pub plugin: &'a str,
    /// The tool's status: only an active tool may be called.
    pub status: ToolStatus,
    /// Whether the plugin is listening for relayed calls now.
    pub connected: bool,
    /// Checks arguments against the tool's schema, as the plugin declared it.
    pub check_arguments: &'a dyn Fn(&Value) -> Result<(), String>,
}

/// One call to decide on, and where the session stands.
pub struct Ask<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// Its arguments.
    pub arguments: &'a Value,
    /// The tools the session may call now (its listing's names).
    pub available: &'a [String],
    /// The tools the session would have where it is but that are
    /// [`Withheld`] (left out of `available`).
    pub withheld: &'a [String],
    /// Where the session is.
    pub place: Place,
    /// Its state (the checks it has passed).
    pub state: &'a WorkflowState,
    /// The session's plugin tool of that name, if there is one.
    pub plugin: Option<PluginTool<'a>>,
}

/// Why a call may not run: one variant per reason, each saying what the
/// model needs to do better.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The tool is the plugin's but the plugin turned it off (or reported
    /// it broken).
    PluginToolInactive {
        /// The tool.
        tool: String,
        /// Its status (not active).
        status: ToolStatus,
        /// The plugin's type.
        plugin: String,
        /// What the session may call instead.
        available: Vec<String>,
    },
    /// The arguments break the tool's schema.
    InvalidArguments {
        /// The tool.
        tool: String,
        /// The fields and the rules they broke.
        problem: String,
    },
    /// The plugin that runs the tool is not listening.
    PluginNotConnected {
        /// The plugin's type.
        plugin: String,
    },
    /// Neither the catalogue nor the session's plugin has such a tool.
    NotInCatalogue {
        /// The tool.
        tool: String,
        /// What the session may call instead.
        available: Vec<String>,
    },
    /// A catalogue tool the session would have where it is, withheld
    /// because its MCP server no longer offers it.
    Withheld {
        /// The tool.
        tool: String,
        /// Why.
        why: Withheld,
    },
    /// A catalogue tool the session may not call where it is.
    NotAvailableHere {
        /// The tool.
        tool: String,
        /// Where the session is.
        place: Place,
        /// What the session may call there.
        available: Vec<String>,
    },
    /// The workflow switch names a workflow that does not exist.
    UnknownWorkflow {
        /// The workflow asked for (as given, possibly missing).
        wanted: String,
        /// The workflows that exist.
        workflows: Vec<String>,
    },
    /// The tool requires a check the session has not passed.
    MissingCheck {
        /// The tool.
        tool: String,
        /// The first check it lacks.
        check: String,
        /// The tools whose effects can set that check.
        setters: Vec<String>,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PluginToolInactive {
                tool,
                status,
                plugin,
                available,
            } => write!(
                f,
                "`{tool}` is {} by plugin `{plugin}`; available: {}",
                status.as_str(),
                available.join(", ")
            ),
            Self::InvalidArguments { tool, problem } => {
                write!(f, "invalid arguments for `{tool}`: {problem}")
            }
            Self::PluginNotConnected { plugin } => write!(
                f,
                "plugin `{plugin}` is not connected; its tools cannot run now"
            ),
            Self::NotInCatalogue { tool, available } => write!(
                f,
                "`{tool}` is not available in this session; available: {}",
                available.join(", ")
            ),
            Self::Withheld { tool, why } => write!(f, "`{tool}` is unavailable: {why}"),
            Self::NotAvailableHere {
                tool,
                place,
                available,
            } => write!(
                f,
                "`{tool}` is not {place}; available: {}",
                available.join(", ")
            ),
            Self::UnknownWorkflow { wanted, workflows } => write!(
                f,
                "there is no workflow `{}`; valid workflow ids: {}",
                excerpt(wanted),
                workflows.join(", ")
            ),
            Self::MissingCheck {
                tool,
                check,
                setters,
            } => {
                write!(
                    f,
                    "`{tool}` needs check `{check}`, which this session has not passed"
                )?;
                if !setters.is_empty() {
                    write!(f, "; call `{}` first", setters.join("` or `"))?;
                }
                Ok(())
            }
        }
    }
}

/// Why `ask` may not run now, if it may not. A plugin tool: active, valid
/// arguments, plugin connected. A catalogue tool: in the catalogue,
/// available where the session is (one it would have there but that is
/// withheld is refused with the reason why), a workflow switch to a real workflow,
/// valid arguments, every required check passed. The first failing rule
/// is the answer.
pub fn decide(ask: &Ask<'_>, rules: &impl Rulebook) -> Option<Refusal> {
    let tool = ask.tool;
    if let Some(plugin) = &ask.plugin {
        return decide_plugin(ask, plugin);
    }
    let Some(requires) = rules.requires(tool) else {
        return Some(Refusal::NotInCatalogue {
            tool: tool.to_owned(),
            available: ask.available.to_vec(),
        });
    };
    if !ask.available.iter().any(|t| t == tool) {
        let why = rules
            .withheld(tool)
            .filter(|_| ask.withheld.iter().any(|t| t == tool));
        if let Some(why) = why {
            return Some(Refusal::Withheld {
                tool: tool.to_owned(),
                why: why.clone(),
            });
        }
        return Some(Refusal::NotAvailableHere {
            tool: tool.to_owned(),
            place: ask.place.clone(),
            available: ask.available.to_vec(),
        });
    }
    if tool == WORKFLOW_SWITCH_TOOL {
        let target = ask.arguments.get("workflowId").and_then(Value::as_str);
        if !target.is_some_and(|t| rules.has_workflow(t)) {
            return Some(Refusal::UnknownWorkflow {
                wanted: target.unwrap_or_default().to_owned(),
                workflows: owned(rules.workflow_ids()),
            });
        }
    }
    if let Err(problem) = rules.check_arguments(tool, ask.arguments) {
        return Some(Refusal::InvalidArguments {
            tool: tool.to_owned(),
            problem,
        });
    }
    let check = requires.iter().find(|c| !ask.state.passed(c))?;
    Some(Refusal::MissingCheck {
        tool: tool.to_owned(),
        check: check.clone(),
        setters: owned(rules.setters_of(check)),
    })
}

/// [`decide`] for a call of the session's plugin tool `plugin`.
fn decide_plugin(ask: &Ask<'_>, plugin: &PluginTool<'_>) -> Option<Refusal> {
    if plugin.status != ToolStatus::Active {
        return Some(Refusal::PluginToolInactive {
            tool: ask.tool.to_owned(),
            status: plugin.status,
            plugin: plugin.plugin.to_owned(),
            available: ask.available.to_vec(),
        });
    }
    if let Err(problem) = (plugin.check_arguments)(ask.arguments) {
        return Some(Refusal::InvalidArguments {
            tool: ask.tool.to_owned(),
            problem,
        });
    }
    if !plugin.connected {
        return Some(Refusal::PluginNotConnected {
            plugin: plugin.plugin.to_owned(),
        });
    }
    None
}

fn owned(ids: Vec<&str>) -> Vec<String> {
    ids.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Two catalogue tools: `check_balance` needs `identity_verified`, which
    /// `perform_idv_check` sets; `start_workflow` needs nothing; workflows
    /// `idv` and `disputes`; a `accountNumber` argument must be 8 long.
    struct Book;

    const NEEDS_ID: [String; 0] = [];

    impl Rulebook for Book {
        fn requires(&self, tool: &str) -> Option<&[String]> {
            static CHECKS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
            match tool {
                "check_balance" => {
                    Some(CHECKS.get_or_init(|| vec!["identity_verified".to_owned()]))
                }
                "start_workflow" | "perform_idv_check" | "get_server_time" => Some(&NEEDS_ID),
                _ => None,
            }
        }
        fn has_workflow(&self, workflow: &str) -> bool {
            self.workflow_ids().contains(&workflow)
        }
        fn workflow_ids(&self) -> Vec<&str> {
            vec!["idv", "disputes"]
        }
        fn check_arguments(&self, _tool: &str, arguments: &Value) -> Result<(), String> {
            match arguments.get("accountNumber").and_then(Value::as_str) {
                Some(n) if n.len() != 8 => Err("field `accountNumber`: too short".into()),
                _ => Ok(()),
            }
        }
        fn setters_of(&self, check: &str) -> Vec<&str> {
            if check == "identity_verified" {
                vec!["perform_idv_check"]
            } else {
                Vec::new()
            }
        }
        fn withheld(&self, tool: &str) -> Option<&Withheld> {
            static GONE: std::sync::OnceLock<Withheld> = std::sync::OnceLock::new();
            (tool == "get_server_time").then(|| {
                GONE.get_or_init(|| Withheld::Unlisted {
                    upstream_name: "time".into(),
                })
            })
        }
    }

    fn available() -> Vec<String> {
        ["start_workflow", "check_balance"]
            .map(str::to_owned)
            .to_vec()
    }

    fn ask<'a>(
        tool: &'a str,
        arguments: &'a Value,
        available: &'a [String],
        state: &'a WorkflowState,
    ) -> Ask<'a> {
        Ask {
            tool,
            arguments,
            available,
            withheld: &[],
            place: Place::Workflow("banking-master".into()),
            state,
            plugin: None,
        }
    }

    fn reason(ask: &Ask<'_>) -> Option<String> {
        decide(ask, &Book).map(|r| r.to_string())
    }

    #[test]
    fn an_available_tool_with_valid_arguments_and_its_checks_may_run() {
        let (tools, args) = (available(), json!({"accountNumber": "12345678"}));
        let mut ws = WorkflowState::start("banking-master");
        ws.checks.insert("identity_verified".into(), true);
        assert_eq!(reason(&ask("check_balance", &args, &tools, &ws)), None);
    }

    #[test]
    fn a_tool_outside_the_catalogue_is_not_available_in_this_session() {
        let (tools, args, ws) = (available(), json!({}), WorkflowState::start("idv"));
        assert_eq!(
            reason(&ask("createGraph", &args, &tools, &ws)).unwrap(),
            "`createGraph` is not available in this session; available: start_workflow, check_balance"
        );
    }

    #[test]
    fn a_catalogue_tool_outside_the_session_says_where_the_session_is() {
        let (tools, args, ws) = (available(), json!({}), WorkflowState::start("idv"));
        let mut call = ask("get_server_time", &args, &tools, &ws);
        let cases = [
            (Place::Workflow("idv".into()), "available in workflow `idv`"),
            (Place::Lesson(7), "enabled in lesson 7"),
            (Place::Agent("ada".into()), "available to agent `ada`"),
        ];
        for (place, said) in cases {
            call.place = place;
            assert_eq!(
                reason(&call).unwrap(),
                format!(
                    "`get_server_time` is not {said}; available: start_workflow, check_balance"
                )
            );
        }
    }

    #[test]
    fn a_switch_to_an_unknown_or_missing_workflow_names_the_real_ones() {
        let (tools, ws) = (available(), WorkflowState::start("idv"));
        let args = json!({"workflowId": "nope"});
        assert_eq!(
            reason(&ask("start_workflow", &args, &tools, &ws)).unwrap(),
            "there is no workflow `nope`; valid workflow ids: idv, disputes"
        );
        let args = json!({});
        assert_eq!(
            reason(&ask("start_workflow", &args, &tools, &ws)).unwrap(),
            "there is no workflow ``; valid workflow ids: idv, disputes"
        );
        let args = json!({"workflowId": "disputes"});
        assert_eq!(reason(&ask("start_workflow", &args, &tools, &ws)), None);
    }

    #[test]
    fn invalid_arguments_name_the_field() {
        let (tools, ws) = (available(), WorkflowState::start("idv"));
        let args = json!({"accountNumber": "1"});
        assert_eq!(
            decide(&ask("check_balance", &args, &tools, &ws), &Book),
            Some(Refusal::InvalidArguments {
                tool: "check_balance".into(),
                problem: "field `accountNumber`: too short".into()
            })
        );
        assert_eq!(
            reason(&ask("check_balance", &args, &tools, &ws)).unwrap(),
            "invalid arguments for `check_balance`: field `accountNumber`: too short"
        );
    }

    #[test]
    fn a_missing_check_names_the_tools_that_set_it() {
        let (tools, ws) = (available(), WorkflowState::start("idv"));
        let args = json!({"accountNumber": "12345678"});
        assert_eq!(
            reason(&ask("check_balance", &args, &tools, &ws)).unwrap(),
            "`check_balance` needs check `identity_verified`, which this session has not passed; call `perform_idv_check` first"
        );
        let refusal = Refusal::MissingCheck {
            tool: "t".into(),
            check: "c".into(),
            setters: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            refusal.to_string(),
            "`t` needs check `c`, which this session has not passed; call `a` or `b` first"
        );
        let unset = Refusal::MissingCheck {
            tool: "t".into(),
            check: "c".into(),
            setters: Vec::new(),
        };
        assert_eq!(
            unset.to_string(),
            "`t` needs check `c`, which this session has not passed"
        );
    }

    #[test]
    fn a_plugin_tool_must_be_active_valid_and_its_plugin_connected() {
        let (tools, ws) = (available(), WorkflowState::start("idv"));
        let args = json!({"title": "Counts"});
        fn fine(_: &Value) -> Result<(), String> {
            Ok(())
        }
        fn bad(_: &Value) -> Result<(), String> {
            Err("field `title`: too long".to_owned())
        }
        let plugin = |status, connected, check: &'static dyn Fn(&Value) -> Result<(), String>| {
            Some(PluginTool {
                plugin: "codap",
                status,
                connected,
                check_arguments: check,
            })
        };
        let mut call = ask("createGraph", &args, &tools, &ws);
        call.plugin = plugin(ToolStatus::Disabled, true, &fine);
        assert_eq!(
            reason(&call).unwrap(),
            "`createGraph` is disabled by plugin `codap`; available: start_workflow, check_balance"
        );
        call.plugin = plugin(ToolStatus::Error, true, &fine);
        assert!(reason(&call)
            .unwrap()
            .starts_with("`createGraph` is error by plugin `codap`"));
        call.plugin = plugin(ToolStatus::Active, true, &bad);
        assert_eq!(
            reason(&call).unwrap(),
            "invalid arguments for `createGraph`: field `title`: too long"
        );
        call.plugin = plugin(ToolStatus::Active, false, &fine);
        assert_eq!(
            reason(&call).unwrap(),
            "plugin `codap` is not connected; its tools cannot run now"
        );
        call.plugin = plugin(ToolStatus::Active, true, &fine);
        assert_eq!(
            reason(&call),
            None,
            "a plugin tool needs no catalogue entry"
        );
    }

    #[test]
    fn a_withheld_tool_the_session_would_have_is_refused_saying_why() {
        let (tools, args, ws) = (available(), json!({}), WorkflowState::start("idv"));
        let withheld = ["get_server_time".to_owned()];
        let mut call = ask("get_server_time", &args, &tools, &ws);
        call.withheld = &withheld;
        assert_eq!(
            decide(&call, &Book),
            Some(Refusal::Withheld {
                tool: "get_server_time".into(),
                why: Withheld::Unlisted {
                    upstream_name: "time".into()
                }
            })
        );
        assert_eq!(
            reason(&call).unwrap(),
            "`get_server_time` is unavailable: its MCP server no longer lists `time`"
        );
    }

    #[test]
    fn a_withheld_tool_the_session_would_not_have_is_not_available_where_it_is() {
        let (tools, args, ws) = (available(), json!({}), WorkflowState::start("idv"));
        assert!(reason(&ask("get_server_time", &args, &tools, &ws))
            .unwrap()
            .starts_with("`get_server_time` is not available in workflow `banking-master`"));
    }

    #[test]
    fn an_imported_tool_is_withheld_while_its_server_is_gone_or_no_longer_lists_it() {
        assert_eq!(Withheld::of(true, "echo", true), None);
        assert_eq!(
            Withheld::of(true, "echo", false),
            Some(Withheld::Unlisted {
                upstream_name: "echo".into()
            })
        );
        assert_eq!(
            Withheld::of(false, "echo", true),
            Some(Withheld::ServerRemoved)
        );
        assert_eq!(
            Withheld::of(false, "echo", false),
            Some(Withheld::ServerRemoved)
        );
        let removed = Refusal::Withheld {
            tool: "everything__echo".into(),
            why: Withheld::ServerRemoved,
        };
        assert_eq!(
            removed.to_string(),
            "`everything__echo` is unavailable: its MCP server was removed"
        );
        let long = Withheld::Unlisted {
            upstream_name: "x".repeat(10_000),
        };
        assert!(long.to_string().len() < 400, "an upstream's name is cut");
    }

    #[test]
    fn an_echoed_workflow_id_is_cut_to_an_excerpt() {
        let refusal = Refusal::UnknownWorkflow {
            wanted: "x".repeat(10_000),
            workflows: vec!["idv".into()],
        };
        assert!(refusal.to_string().len() < 1_000);
    }
}
