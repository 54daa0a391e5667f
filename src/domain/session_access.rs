//! Who may do what on a live session: the one table every session route
//! asks (through `server::agent::sessions::admit`), so a new route cannot
//! forget it and a reader finds the whole policy here.
//!
//! A session has two credentials. The session token (`st_…`) is the agent
//! backend's: it drives the session and may do everything. The plugin
//! token (`pt_…`) is for an app embedding the agent (a CODAP plugin, the
//! `/playground` page): it may register and change its own tools, read the
//! session's plugin metadata, listen to the session's events and to the
//! calls relayed to it, and answer those calls — nothing that changes
//! what the agent may do (state, checks), acts as the agent (tool calls),
//! reports a result of a call it was not relayed, ends the session, or
//! lets others in (new plugin tokens, join codes). A plugin token got by
//! exchanging a join code (`POST /api/plugins/join`) is a plugin token
//! like the first: the same rights, one row of this table.

use serde::{Deserialize, Serialize};

/// Which of a session's credentials a request came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Credential {
    /// The session token (`st_…`), the agent backend's.
    Session,
    /// The plugin token (`pt_…`), with plugin rights only.
    Plugin,
}

/// The prefix of a session token.
pub const SESSION_TOKEN_PREFIX: &str = "st_";
/// The prefix of a plugin token.
pub const PLUGIN_TOKEN_PREFIX: &str = "pt_";

/// What a request on a session does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// `GET …/tools`: the tools as declarations (and records what the
    /// backend was told, for `toolsChanged`).
    ReadTools,
    /// `POST …/tool-calls`, or MCP: call a tool as the agent.
    CallTool,
    /// `POST …/tool-calls/{callId}/result`: the backend's result of a call
    /// it executed (never one relayed to a plugin).
    ReportResult,
    /// `PATCH …/state`: set the step and checks.
    ChangeState,
    /// `POST …/turns`: count a conversation turn.
    ReportTurn,
    /// `POST …/end`.
    End,
    /// `POST …/plugin-token`: issue a new plugin token.
    IssuePluginToken,
    /// `POST …/join-codes`: make a one-use join code a plugin exchanges
    /// for a plugin token of its own (another plugin's way in, so the
    /// backend's alone).
    IssueJoinCode,
    /// `GET …/events`, `GET …/calls`: watch the session.
    Watch,
    /// `POST …/register-tools`, `PATCH …/tools`.
    ChangePluginTools,
    /// `GET …/metadata`.
    ReadMetadata,
    /// `GET …/plugin-events`: the calls relayed to the plugin.
    ListenForCalls,
    /// `POST …/tool-results/{callId}`: answer a call; `relayed` says
    /// whether it is one the session relayed to its plugin.
    AnswerCall {
        /// The call was relayed to the plugin.
        relayed: bool,
    },
}

/// What a plugin token is told it lacks (`Forbidden.needed`).
pub const SESSION_TOKEN_NEEDED: &str = "session token (st_…): a plugin token (pt_…) may only register and update its tools, read metadata, listen to the session's events and answer the calls relayed to it";

/// Whether `credential` may do `act`; `Err` carries what is needed.
pub fn permits(credential: Credential, act: Act) -> Result<(), &'static str> {
    let plugin_may = match act {
        Act::Watch
        | Act::ChangePluginTools
        | Act::ReadMetadata
        | Act::ListenForCalls
        | Act::AnswerCall { relayed: true } => true,
        Act::ReadTools
        | Act::CallTool
        | Act::ReportResult
        | Act::ChangeState
        | Act::ReportTurn
        | Act::End
        | Act::IssuePluginToken
        | Act::IssueJoinCode
        | Act::AnswerCall { relayed: false } => false,
    };
    match credential {
        Credential::Session => Ok(()),
        Credential::Plugin if plugin_may => Ok(()),
        Credential::Plugin => Err(SESSION_TOKEN_NEEDED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Act; 14] = [
        Act::ReadTools,
        Act::CallTool,
        Act::ReportResult,
        Act::ChangeState,
        Act::ReportTurn,
        Act::End,
        Act::IssuePluginToken,
        Act::IssueJoinCode,
        Act::Watch,
        Act::ChangePluginTools,
        Act::ReadMetadata,
        Act::ListenForCalls,
        Act::AnswerCall { relayed: true },
        Act::AnswerCall { relayed: false },
    ];

    #[test]
    fn the_session_token_may_do_everything_it_did_before() {
        for act in ALL {
            assert_eq!(permits(Credential::Session, act), Ok(()), "{act:?}");
        }
    }

    #[test]
    fn a_plugin_token_may_only_manage_its_tools_listen_and_answer_its_relayed_calls() {
        let allowed: Vec<Act> = ALL
            .into_iter()
            .filter(|a| permits(Credential::Plugin, *a).is_ok())
            .collect();
        assert_eq!(
            allowed,
            [
                Act::Watch,
                Act::ChangePluginTools,
                Act::ReadMetadata,
                Act::ListenForCalls,
                Act::AnswerCall { relayed: true },
            ]
        );
        let refused = permits(Credential::Plugin, Act::ChangeState).unwrap_err();
        assert!(refused.starts_with("session token"), "{refused}");
        // A plugin (one that joined with a code, too) cannot let others in.
        assert_eq!(
            permits(Credential::Plugin, Act::IssueJoinCode),
            Err(SESSION_TOKEN_NEEDED)
        );
    }
}
