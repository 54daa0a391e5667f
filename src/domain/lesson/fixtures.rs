//! The café lesson the domain's tests share — two objectives and two
//! review items, one with a recording — so each test spells out only what
//! it changes, and a change to a lesson's shape is made in one place.

use super::review::ReviewItem;
use super::{LessonDraft, LessonTask};

/// A task with `id` and `text`.
pub(crate) fn task(id: &str, text: &str) -> LessonTask {
    LessonTask {
        id: id.into(),
        text: text.into(),
    }
}

/// Greeting the waiter, then ordering a drink.
pub(crate) fn cafe_tasks() -> Vec<LessonTask> {
    vec![
        task("greet", "Greet the waiter"),
        task("order", "Order a drink"),
    ]
}

/// `fui` (recorded) and `comi` (not).
pub(crate) fn review_items() -> Vec<ReviewItem> {
    vec![
        ReviewItem {
            id: "fui".into(),
            text: "Ayer fui al mercado".into(),
            audio: Some("rec/fui.webm".into()),
        },
        ReviewItem {
            id: "comi".into(),
            text: "Comí paella".into(),
            audio: None,
        },
    ]
}

/// "At the café", with [`cafe_tasks`] and [`review_items`].
pub(crate) fn cafe_lesson() -> LessonDraft {
    let mut draft = LessonDraft::new("At the café");
    draft.tasks = cafe_tasks();
    draft.review_items = review_items();
    draft
}
