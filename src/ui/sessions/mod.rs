//! `/sessions` and `/sessions/{id}`: live agent sessions as they change,
//! pushed by server-sent events (`ui::components::events`), the list (`list`), one session's
//! visualiser (`visualiser`, its checks panel in `checks`, elapsed time,
//! turns and nudges in `progress`, a plugin's tools in `plugin_panel`, the
//! workflow's steps in `workflow_steps`, what started it in `started_by`), the admins'
//! console for trying the rules without an LLM (`console`) and their "End
//! session" (`end_button`).

pub mod agent_panel;
pub mod checks;
pub mod console;
pub mod console_form;
pub mod end_button;
pub mod list;
pub mod plugin_panel;
pub mod progress;
pub mod session_filter;
pub mod started_by;
pub mod visualiser;
pub mod workflow_steps;

pub use list::SessionsPage;
pub use visualiser::SessionPage;
