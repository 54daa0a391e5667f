//! `/sessions` and `/sessions/{id}`: live agent sessions as they change,
//! pushed by server-sent events (`ui::components::events`), the list (`list`), one session's
//! visualiser (`visualiser`, its checks panel in `checks`, elapsed time,
//! turns and nudges in `progress`, a plugin's tools in `plugin_panel`, the
//! workflow's steps in `workflow_steps`, what started it in `started_by`), the admins'
//! console for trying the rules without an LLM (`console`) and their "End
//! session" (`end_button`), and a join code for a plugin (`join_code`). A trial (`try_it`) shows the same visualiser
//! beside a chat in which the signed-in user plays the other side: on
//! its own page for a lesson (`try_lesson`, `/lessons/{id}/try`, linked
//! from the editor), and under the workflow settings and the agents
//! pages, so this module is compiled for their groups too (the list and
//! the lesson's trial page only for its own).

pub mod agent_panel;
pub mod call_row;
pub mod checks;
pub mod console;
pub mod console_form;
pub mod end_button;
pub mod join_code;
#[cfg(feature = "pages-sessions")]
pub mod list;
pub mod plugin_panel;
pub mod progress;
#[cfg(feature = "pages-sessions")]
pub mod session_filter;
pub mod started_by;
pub mod try_it;
#[cfg(feature = "pages-sessions")]
pub mod try_lesson;
pub mod visualiser;
pub mod workflow_steps;

#[cfg(feature = "pages-sessions")]
pub use list::SessionsPage;
pub use visualiser::SessionPage;
