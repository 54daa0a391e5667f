//! The teacher's lessons: the list, and the editor with its lesson form,
//! tool panel and live prompt preview.
//!
//! One file per part of the page; what they do to a draft (smart defaults,
//! tasks, presets, tool settings) lives in `edit` (pure, with tests), so these
//! files only route events and show state.
//!
//! The list and a lesson's runs are in the `pages-start` group; the editor
//! and its parts are a group of their own (`pages-editor`): the largest
//! island, with the lesson domain code its preview runs in the browser.

#[cfg(feature = "pages-start")]
pub mod list;
#[cfg(feature = "pages-start")]
pub mod runs;
#[cfg(feature = "pages-start")]
pub use list::LessonsPage;
#[cfg(feature = "pages-start")]
pub use runs::LessonRunsPage;

#[cfg(feature = "pages-editor")]
pub mod advice;
#[cfg(feature = "pages-editor")]
pub mod advice_rules;
#[cfg(feature = "pages-editor")]
pub mod edit;
#[cfg(feature = "pages-editor")]
pub mod editor;
#[cfg(feature = "pages-editor")]
pub mod form;
#[cfg(feature = "pages-editor")]
pub mod history;
#[cfg(feature = "pages-editor")]
pub mod keyword_chips;
#[cfg(feature = "pages-editor")]
pub mod preview;
#[cfg(feature = "pages-editor")]
pub mod review_items;
#[cfg(feature = "pages-editor")]
pub mod tool_panel;
#[cfg(feature = "pages-editor")]
pub mod tool_row;
#[cfg(feature = "pages-editor")]
#[cfg(feature = "pages-editor")]
pub use editor::LessonEditorPage;
