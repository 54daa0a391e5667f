//! Lessons, with optimistic concurrency on every change, and their history:
//! each save (create, edit, restore, duplicate) also stores the content as a
//! numbered version in the same transaction.

mod history;
mod rows;
mod writes;

pub use history::{history, version_content};
pub use rows::{get, get_any, get_for_key, list, LessonRow};
pub use writes::{create, create_with, delete, duplicate, restore, stale_message, update};
