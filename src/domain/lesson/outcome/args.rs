//! A tutor tool's arguments read: parsed into their shape, text cleaned,
//! and the valid ids named in a refusal.

use crate::domain::lesson::review::ReviewItem;
use serde::Deserialize;
use serde_json::Value;

pub(super) fn parse<T: for<'de> Deserialize<'de>>(
    tool: &str,
    arguments: &Value,
) -> Result<T, String> {
    serde_json::from_value(arguments.clone())
        .map_err(|e| format!("invalid arguments for `{tool}`: {e}"))
}

pub(super) fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<&str> = ids.collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

pub(super) fn clean(text: String) -> String {
    text.trim().to_owned()
}

pub(super) fn ids_text(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

pub(in crate::domain::lesson) fn find_item<'a>(
    items: &'a [ReviewItem],
    id: &str,
) -> Option<&'a ReviewItem> {
    items.iter().find(|i| i.id == id)
}
