//! A review lesson's items: the phrases the student practises again, each
//! with the id the tutor passes to `mark_item_mastered` and, when the
//! student recorded it earlier, the recording `play_student_audio` plays.
//!
//! The prompt lists them with their ids, so the model has real ids to pass;
//! the tutor tools refuse any other id, naming the valid ones.

use crate::domain::error::FieldError;
use crate::domain::review_queue::parse_offer_id;
use serde::{Deserialize, Serialize};

/// Most review items one lesson may list: a review lesson revisits a
/// handful of phrases, and each costs prompt tokens.
pub const MAX_REVIEW_ITEMS: usize = 50;
/// Longest item text, in characters.
pub const MAX_REVIEW_ITEM_CHARS: usize = 300;
/// Longest recording reference (a URL or a storage key), in characters.
pub const MAX_AUDIO_REF_CHARS: usize = 500;
/// Longest item id (as for task ids).
pub const MAX_ITEM_ID_CHARS: usize = 64;

/// One phrase to review.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewItem {
    /// Stable id the model passes (`como-estas`).
    pub id: String,
    /// The phrase, as the student should say it.
    pub text: String,
    /// Where the student's earlier recording of it is (a URL or storage
    /// key), if there is one; the backend plays it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<String>,
}

/// Whether `id` is a valid task or item id: 1-64 characters of a-z, 0-9,
/// `-` or `_` (short enough to list, plain enough for a model to copy).
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ITEM_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Every rule `items` break, under `reviewItems[i].…`.
pub fn problems(items: &[ReviewItem]) -> Vec<FieldError> {
    let mut problems = Vec::new();
    if items.len() > MAX_REVIEW_ITEMS {
        problems.push(FieldError::new(
            "reviewItems",
            format!("at most {MAX_REVIEW_ITEMS} review items"),
        ));
    }
    let mut ids = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let text = item.text.trim();
        if text.is_empty() {
            problems.push(FieldError::new(
                format!("reviewItems[{i}].text"),
                "item text is required",
            ));
        } else if text.chars().count() > MAX_REVIEW_ITEM_CHARS {
            problems.push(FieldError::new(
                format!("reviewItems[{i}].text"),
                format!("must be at most {MAX_REVIEW_ITEM_CHARS} characters"),
            ));
        }
        if !is_valid_id(&item.id) {
            problems.push(FieldError::new(
                format!("reviewItems[{i}].id"),
                "item id must be 1-64 characters of a-z, 0-9, - or _",
            ));
        } else if parse_offer_id(&item.id).is_some() {
            problems.push(FieldError::new(
                format!("reviewItems[{i}].id"),
                "ids q-<number> are kept for a student's review queue items",
            ));
        } else if !ids.insert(item.id.as_str()) {
            problems.push(FieldError::new(
                format!("reviewItems[{i}].id"),
                format!("item id \"{}\" is used twice", item.id),
            ));
        }
        if let Some(audio) = &item.audio {
            if audio.is_empty()
                || audio.chars().count() > MAX_AUDIO_REF_CHARS
                || audio.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                problems.push(FieldError::new(
                    format!("reviewItems[{i}].audio"),
                    format!(
                        "a recording reference is 1-{MAX_AUDIO_REF_CHARS} characters without spaces (a URL or storage key)"
                    ),
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, text: &str, audio: Option<&str>) -> ReviewItem {
        ReviewItem {
            id: id.into(),
            text: text.into(),
            audio: audio.map(str::to_owned),
        }
    }

    #[test]
    fn problems_name_each_item_field() {
        let items = vec![
            item("a", "", None),
            item("a", "ok", None),
            item("Bad Id", "ok", Some("has space")),
            item("b", &"x".repeat(MAX_REVIEW_ITEM_CHARS + 1), Some("")),
        ];
        let fields: Vec<String> = problems(&items).into_iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            [
                "reviewItems[0].text",
                "reviewItems[1].id",
                "reviewItems[2].id",
                "reviewItems[2].audio",
                "reviewItems[3].text",
                "reviewItems[3].audio"
            ]
        );
        let many: Vec<ReviewItem> = (0..=MAX_REVIEW_ITEMS)
            .map(|i| item(&format!("i{i}"), "x", None))
            .collect();
        assert_eq!(problems(&many)[0].field, "reviewItems");
        assert!(problems(&[item("ok", "¿Cómo estás?", Some("https://x/a.mp3"))]).is_empty());
        assert_eq!(
            problems(&[item("q-12", "x", None)])[0].field,
            "reviewItems[0].id",
            "a queue item's offer id is not a lesson item's"
        );
    }
}
