//! The teacher's lessons: the list, and the editor with its lesson form,
//! tool panel and live prompt preview.
//!
//! One file per part of the page; what they do to a draft (smart defaults,
//! tasks, presets, tool settings) lives in `domain::lesson::edit`, so these
//! files only route events and show state.

pub mod advice;
pub mod editor;
pub mod form;
pub mod history;
pub mod keyword_chips;
pub mod list;
pub mod preview;
pub mod review_items;
pub mod runs;
pub mod tool_panel;
pub mod tool_row;

pub use editor::LessonEditorPage;
pub use list::LessonsPage;
pub use runs::LessonRunsPage;
