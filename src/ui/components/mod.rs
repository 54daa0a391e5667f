//! Pieces every page shares, each written once: the loading / error / empty
//! states of loaded data, the save status line, the one-field create form,
//! the message under a field, a text box that follows saves until edited,
//! whole-number inputs that keep what is typed,
//! times in the watcher's zone, status icons, the live event feed and the
//! chat with a model that acts through tools (`chat`), a student's data
//! rights (download, delete) for the student's page.
//!
//! Small on purpose: a page reads as what it shows, and a change to how,
//! say, a failed load looks is made in one place for every page.

pub mod chat;
pub mod create_form;
pub mod draft;
pub mod events;
pub mod fetched;
pub mod field_problem;
pub mod file_input;
pub mod http;
pub mod leave_guard;
pub mod loaded;
pub mod local_time;
pub mod number_field;
pub mod save_status;
pub mod status_icon;
pub mod student_data_rights;
pub mod tool_checks;

pub use create_form::CreateForm;
pub use draft::{Draft, DraftArea};
pub use fetched::{fetched, read_json, Fetched, JsonProp};
pub use field_problem::FieldProblem;
pub use leave_guard::guard_unsaved;
pub use loaded::{Loaded, MaybeEmpty};
pub use local_time::LocalTime;
pub use number_field::{typing, whole_number};
pub use save_status::{SaveMessage, SaveStatus};
pub use status_icon::{Status, StatusIcon};
pub use student_data_rights::StudentDataRights;
