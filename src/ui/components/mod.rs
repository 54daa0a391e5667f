//! Pieces every page shares, each written once: the loading / error / empty
//! states of loaded data, the save status line, the one-field create form
//! and the message under a field.
//!
//! Small on purpose: a page reads as what it shows, and a change to how,
//! say, a failed load looks is made in one place for every page.

pub mod create_form;
pub mod field_problem;
pub mod loaded;
pub mod save_status;

pub use create_form::CreateForm;
pub use field_problem::FieldProblem;
pub use loaded::{Loaded, MaybeEmpty};
pub use save_status::{SaveMessage, SaveStatus};
