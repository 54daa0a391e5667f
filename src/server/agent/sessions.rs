//! The engine's public face for the doors (REST, server functions, MCP,
//! start-up): a session's life, step by step, re-exported from the modules
//! that do each step. Nothing inside `agent` imports this module, so no
//! step depends on it.

pub use super::access::{
    admit, get, issue_plugin_token, may_drive, owners, sees, viewer_of, watchable, Admitted,
};
pub use super::call::call;
#[cfg(test)]
pub(crate) use super::call::check_call_size;
pub use super::complete::{complete, complete_after};
pub use super::end::{end, end_opened_by_key, expire_idle};
pub use super::join::{
    issue_code, join, may_make_code as may_make_join_code,
    purge_expired as purge_expired_join_codes, Joined,
};
pub use super::listing::{agent_view, declarations, tools_now, tools_told};
pub use super::open::{lesson_run, open, open_lesson, open_vibe, LessonRun, Opened};
pub use super::patch::patch_state;
pub use super::turns::{turn, TurnAnswer};
pub use super::watch::{calls_page, list, outline, snapshot, snapshot_of};
