//! The catalogue's versions: what a change of tools does to the catalogue,
//! what differs between two versions, and the one line the history shows.
//!
//! A tool's schema, requirements and effects are policy as much as the
//! bindings are (emptying `check_balance`'s `requires` lets it run without
//! a verified caller), so every change of the catalogue's tools is kept as
//! a version with its author, like the bindings: append-only, comparable,
//! restorable.

use crate::domain::bindings::VersionMeta;
use crate::domain::catalogue::CatalogueTool;
use serde::{Deserialize, Serialize};

/// A stored version of the catalogue: every tool as it stood after the
/// change, in catalogue order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogueVersion {
    /// Who, when, what.
    pub meta: VersionMeta,
    /// The tools.
    pub tools: Vec<CatalogueTool>,
}

/// A tool whose text is stored trimmed (name, description, category), so a
/// tool sent back with stray spaces compares equal to itself.
pub fn normalised(tool: &CatalogueTool) -> CatalogueTool {
    let mut tool = tool.clone();
    for field in [&mut tool.name, &mut tool.description, &mut tool.category] {
        let trimmed = field.trim();
        if trimmed.len() != field.len() {
            *field = trimmed.to_owned();
        }
    }
    tool
}

/// The tools of `incoming` that would add to or change `current`
/// (normalised), each with whether it is new. Tools equal to their stored
/// self are left out: sending the catalogue back unchanged changes nothing.
/// A tool sent twice counts once, as last sent.
pub fn changed_tools(
    current: &[CatalogueTool],
    incoming: &[CatalogueTool],
) -> Vec<(CatalogueTool, bool)> {
    let mut out: Vec<(CatalogueTool, bool)> = Vec::new();
    for tool in incoming.iter().map(normalised) {
        out.retain(|(t, _)| t.id != tool.id);
        match current.iter().find(|t| t.id == tool.id) {
            Some(same) if *same == tool => {}
            found => out.push((tool, found.is_none())),
        }
    }
    out
}

/// `current` with `changes` made: changed tools in place, new ones at the
/// end in the order given. No tool is ever taken away.
pub fn with_changes(
    current: &[CatalogueTool],
    changes: &[(CatalogueTool, bool)],
) -> Vec<CatalogueTool> {
    let mut next = current.to_vec();
    for (tool, _) in changes {
        match next.iter_mut().find(|t| t.id == tool.id) {
            Some(slot) => *slot = tool.clone(),
            None => next.push(tool.clone()),
        }
    }
    next
}

/// One tool that differs between two versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChange {
    /// The tool's id.
    pub id: String,
    /// The fields that differ, by their JSON names (`parameters`,
    /// `requires`, `effects`, `category`, `name`, `description`,
    /// `ultravoxBuiltin`).
    pub fields: Vec<String>,
    /// The tool in the older version.
    pub before: CatalogueTool,
    /// The tool in the newer version.
    pub after: CatalogueTool,
}

/// What differs between two versions of the catalogue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogueDiff {
    /// Tools only in the newer version.
    pub added: Vec<CatalogueTool>,
    /// Tools only in the older version.
    pub removed: Vec<CatalogueTool>,
    /// Tools in both that differ.
    pub changed: Vec<ToolChange>,
}

/// The fields of `a` and `b` that differ, by their JSON names.
fn differing_fields(a: &CatalogueTool, b: &CatalogueTool) -> Vec<String> {
    [
        ("parameters", a.parameters != b.parameters),
        ("requires", a.requires != b.requires),
        ("effects", a.effects != b.effects),
        ("category", a.category != b.category),
        ("name", a.name != b.name),
        ("description", a.description != b.description),
        ("ultravoxBuiltin", a.ultravox_builtin != b.ultravox_builtin),
    ]
    .into_iter()
    .filter(|(_, differs)| *differs)
    .map(|(field, _)| field.to_owned())
    .collect()
}

impl CatalogueDiff {
    /// What changed going from `old` to `new`, in `new`'s order (removed
    /// tools in `old`'s).
    pub fn between(old: &[CatalogueTool], new: &[CatalogueTool]) -> Self {
        let mut diff = Self::default();
        for tool in new {
            match old.iter().find(|t| t.id == tool.id) {
                None => diff.added.push(tool.clone()),
                Some(before) if before != tool => diff.changed.push(ToolChange {
                    id: tool.id.to_string(),
                    fields: differing_fields(before, tool),
                    before: before.clone(),
                    after: tool.clone(),
                }),
                Some(_) => {}
            }
        }
        diff.removed = old
            .iter()
            .filter(|t| !new.iter().any(|n| n.id == t.id))
            .cloned()
            .collect();
        diff
    }

    /// Whether the two versions hold the same tools.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// One line for the history: `added loan_quote; changed check_balance
    /// (requires)`, at most three tools per part.
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "No changes".into();
        }
        let part = |verb: &str, items: Vec<String>| -> Option<String> {
            if items.is_empty() {
                return None;
            }
            let more = items.len().saturating_sub(3);
            let shown = items.into_iter().take(3).collect::<Vec<_>>().join(", ");
            Some(if more > 0 {
                format!("{verb} {shown} and {more} more")
            } else {
                format!("{verb} {shown}")
            })
        };
        let ids = |tools: &[CatalogueTool]| tools.iter().map(|t| t.id.to_string()).collect();
        [
            part("added", ids(&self.added)),
            part(
                "changed",
                self.changed
                    .iter()
                    .map(|c| format!("{} ({})", c.id, c.fields.join(", ")))
                    .collect(),
            ),
            part("removed", ids(&self.removed)),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::seed::catalogue::demo_catalogue;

    fn find<'a>(tools: &'a mut [CatalogueTool], id: &str) -> &'a mut CatalogueTool {
        tools.iter_mut().find(|t| t.id.as_str() == id).unwrap()
    }

    #[test]
    fn sending_the_catalogue_back_unchanged_changes_nothing() {
        let current = demo_catalogue();
        assert!(changed_tools(&current, &current).is_empty());
        let mut padded = current.clone();
        padded[0].name = format!("  {}  ", padded[0].name);
        assert!(changed_tools(&current, &padded).is_empty(), "trimmed first");
    }

    #[test]
    fn an_emptied_requirement_is_a_change_and_a_new_tool_is_an_addition() {
        let current = demo_catalogue();
        let mut incoming = current.clone();
        find(&mut incoming, "check_balance").requires.clear();
        let mut new = current[0].clone();
        new.id = crate::domain::ids::ToolId::parse("loan_quote").unwrap();
        incoming.push(new);
        let changes = changed_tools(&current, &incoming);
        let shape: Vec<(&str, bool)> = changes
            .iter()
            .map(|(t, create)| (t.id.as_str(), *create))
            .collect();
        assert_eq!(shape, [("check_balance", false), ("loan_quote", true)]);
        let next = with_changes(&current, &changes);
        assert_eq!(next.len(), current.len() + 1);
        assert_eq!(next.last().unwrap().id.as_str(), "loan_quote");
        assert!(next
            .iter()
            .find(|t| t.id.as_str() == "check_balance")
            .unwrap()
            .requires
            .is_empty());
    }

    #[test]
    fn a_tool_sent_twice_counts_once_as_last_sent() {
        let current = demo_catalogue();
        let mut first = current[0].clone();
        first.category = "x".into();
        let mut second = current[0].clone();
        second.category = "y".into();
        let changes = changed_tools(&current, &[first, second.clone()]);
        assert_eq!(changes, [(second, false)]);
    }

    #[test]
    fn the_diff_names_each_changed_field_and_the_summary_reads_as_a_line() {
        let old = demo_catalogue();
        let mut new = old.clone();
        find(&mut new, "check_balance").requires.clear();
        let idv = find(&mut new, "perform_idv_check");
        idv.effects.clear();
        idv.category = "identity".into();
        let diff = CatalogueDiff::between(&old, &new);
        assert_eq!(diff.changed.len(), 2);
        assert_eq!(diff.changed[0].id, "check_balance");
        assert_eq!(diff.changed[0].fields, ["requires"]);
        assert_eq!(diff.changed[1].fields, ["effects", "category"]);
        assert_eq!(
            diff.summary(),
            "changed check_balance (requires), perform_idv_check (effects, category)"
        );
        assert!(CatalogueDiff::between(&old, &old).is_empty());
        assert_eq!(CatalogueDiff::between(&old, &old).summary(), "No changes");
    }

    #[test]
    fn additions_and_removals_are_listed_with_a_count_past_three() {
        let old = demo_catalogue();
        let new: Vec<CatalogueTool> = old[5..].to_vec();
        let diff = CatalogueDiff::between(&old, &new);
        assert_eq!(diff.removed.len(), 5);
        assert!(diff
            .summary()
            .starts_with("removed get_server_time, start_workflow, end_session and 2 more"));
        let back = CatalogueDiff::between(&new, &old);
        assert_eq!(back.added.len(), 5);
        assert!(back.summary().starts_with("added "), "{}", back.summary());
    }
}
