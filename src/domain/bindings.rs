//! Tool bindings: which tools are global and which belong to each workflow,
//! in exactly the shape of `tool-bindings.json`.
//!
//! Validation normalises what is merely redundant and refuses what would
//! break an agent; `Availability` precomputes the answer to "may tool T be
//! called in workflow W" so enforcement is a hash lookup.

use crate::domain::catalogue::{Workflow, WORKFLOW_SWITCH_TOOL};
use crate::domain::error::BindingProblem;
use crate::domain::state_labels::StateLabels;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// `{"global": [...], "workflows": {"id": [...]}, "labels": {...}}`;
/// `labels` (what people read for checks and steps, see
/// [`StateLabels`]) is optional, so documents from before it still load.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolBindings {
    /// Tools available in every workflow.
    #[serde(default)]
    pub global: Vec<String>,
    /// Tools available only in each workflow.
    #[serde(default)]
    pub workflows: BTreeMap<String, Vec<String>>,
    /// Labels of checks and descriptions of steps.
    #[serde(default, skip_serializing_if = "StateLabels::is_empty")]
    pub labels: StateLabels,
}

/// A `tool-bindings.json` loaded into the matrix: the same document, but
/// with `labels` left out telling apart from `labels` given empty, so a
/// file from before labels existed (or one that only binds tools) leaves
/// the labels being edited as they are.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindingsFile {
    /// Tools available in every workflow.
    #[serde(default)]
    pub global: Vec<String>,
    /// Tools available only in each workflow.
    #[serde(default)]
    pub workflows: BTreeMap<String, Vec<String>>,
    /// Labels of checks and descriptions of steps, if the file has them.
    #[serde(default)]
    pub labels: Option<StateLabels>,
}

impl BindingsFile {
    /// The document to edit: this file's bindings, with its labels or, when
    /// it has none, `current`'s; and whether `current`'s were kept.
    pub fn over(self, current: &ToolBindings) -> (ToolBindings, bool) {
        let kept = self.labels.is_none();
        let doc = ToolBindings {
            global: self.global,
            workflows: self.workflows,
            labels: self.labels.unwrap_or_else(|| current.labels.clone()),
        };
        (doc, kept)
    }
}

/// The result of validating a document: the normalised bindings and the
/// redundancies that were removed (reported, not refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalised {
    /// Bindings without duplicates or redundant per-workflow entries.
    pub bindings: ToolBindings,
    /// What normalisation removed, for the user to see.
    pub notes: Vec<String>,
}

impl ToolBindings {
    /// The demo default, the example `tool-bindings.json`.
    pub fn demo() -> Self {
        let list = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Self {
            global: list(&["get_server_time", "start_workflow", "end_session"]),
            workflows: BTreeMap::from([
                (
                    "banking-master".into(),
                    list(&["manage_recent_interactions", "check_balance"]),
                ),
                ("idv".into(), list(&["perform_idv_check", "lookup_account"])),
                (
                    "disputes".into(),
                    list(&["create_dispute_case", "lookup_transaction"]),
                ),
            ]),
            labels: StateLabels::demo(),
        }
    }

    /// Checks the document against the catalogue's tools and the known
    /// workflows. Refused: unknown tools, unknown workflows, and a
    /// workflow-switch tool that is not global. Normalised (with a note):
    /// repeated ids and per-workflow entries that are already global.
    /// Labels are kept as they are; their rules need the catalogue's checks
    /// ([`StateLabels::problems`]).
    pub fn validate(
        &self,
        known_tools: &HashSet<String>,
        known_workflows: &HashSet<String>,
    ) -> Result<Normalised, Vec<BindingProblem>> {
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        let mut check_tools = |at: &str, list: &[String]| {
            for id in list {
                if !known_tools.contains(id) {
                    problems.push(BindingProblem {
                        at: at.to_owned(),
                        message: format!("unknown tool \"{id}\" in {at}"),
                    });
                }
            }
        };
        check_tools("global", &self.global);
        for (workflow, list) in &self.workflows {
            check_tools(&format!("workflows.{workflow}"), list);
        }
        for workflow in self.workflows.keys() {
            if !known_workflows.contains(workflow) {
                problems.push(BindingProblem {
                    at: format!("workflows.{workflow}"),
                    message: format!("unknown workflow \"{workflow}\""),
                });
            }
        }
        if known_tools.contains(WORKFLOW_SWITCH_TOOL)
            && !self.global.iter().any(|t| t == WORKFLOW_SWITCH_TOOL)
        {
            let also = self
                .workflows
                .iter()
                .filter(|(_, list)| list.iter().any(|t| t == WORKFLOW_SWITCH_TOOL))
                .map(|(w, _)| w.as_str())
                .collect::<Vec<_>>();
            let hint = if also.is_empty() {
                String::new()
            } else {
                format!(" (it is listed only in: {})", also.join(", "))
            };
            problems.push(BindingProblem {
                at: "global".into(),
                message: format!(
                    "\"{WORKFLOW_SWITCH_TOOL}\" must be global, or an agent can get stuck inside a workflow{hint}"
                ),
            });
        }
        if !problems.is_empty() {
            return Err(problems);
        }

        let mut global = Vec::new();
        let mut seen = HashSet::new();
        for id in &self.global {
            if seen.insert(id.as_str()) {
                global.push(id.clone());
            } else {
                notes.push(format!("\"{id}\" was listed twice in global; kept once"));
            }
        }
        let mut workflows = BTreeMap::new();
        for (workflow, list) in &self.workflows {
            let mut kept = Vec::new();
            let mut mine = HashSet::new();
            for id in list {
                if seen.contains(id.as_str()) {
                    notes.push(format!(
                        "\"{id}\" is global, so listing it in \"{workflow}\" is redundant; removed there"
                    ));
                } else if !mine.insert(id.as_str()) {
                    notes.push(format!(
                        "\"{id}\" was listed twice in \"{workflow}\"; kept once"
                    ));
                } else {
                    kept.push(id.clone());
                }
            }
            workflows.insert(workflow.clone(), kept);
        }
        Ok(Normalised {
            bindings: ToolBindings {
                global,
                workflows,
                labels: self.labels.clone(),
            },
            notes,
        })
    }

    /// The tools available in `workflow`: global first, then the workflow's
    /// own, each in listed order, without duplicates.
    pub fn available_in(&self, workflow: &str) -> Vec<String> {
        let mut seen = HashSet::new();
        self.global
            .iter()
            .chain(self.workflows.get(workflow).into_iter().flatten())
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect()
    }

    /// Every (scope, tool) pair, scope being `global` or a workflow id.
    pub fn pairs(&self) -> BTreeSet<(String, String)> {
        let global = self.global.iter().map(|t| ("global".to_owned(), t.clone()));
        let workflows = self
            .workflows
            .iter()
            .flat_map(|(w, list)| list.iter().map(move |t| (w.clone(), t.clone())));
        global.chain(workflows).collect()
    }

    /// Whether `tool` is checked in `scope` (`global` or a workflow id).
    pub fn has(&self, scope: &str, tool: &str) -> bool {
        if scope == "global" {
            self.global.iter().any(|t| t == tool)
        } else {
            self.workflows
                .get(scope)
                .is_some_and(|list| list.iter().any(|t| t == tool))
        }
    }

    /// Checks or unchecks `tool` in `scope`, keeping list order otherwise.
    pub fn set(&mut self, scope: &str, tool: &str, on: bool) {
        let list = if scope == "global" {
            &mut self.global
        } else {
            self.workflows.entry(scope.to_owned()).or_default()
        };
        let present = list.iter().any(|t| t == tool);
        if on && !present {
            list.push(tool.to_owned());
        } else if !on {
            list.retain(|t| t != tool);
        }
    }
}

/// What changed between two versions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BindingsDiff {
    /// (scope, tool) pairs added.
    pub added: Vec<(String, String)>,
    /// (scope, tool) pairs removed.
    pub removed: Vec<(String, String)>,
    /// Labels changed, added or removed: `check <key>` or `step <key>`.
    #[serde(default)]
    pub labels: Vec<String>,
}

impl BindingsDiff {
    /// The pairs added and removed going from `old` to `new`.
    pub fn between(old: &ToolBindings, new: &ToolBindings) -> Self {
        let (a, b) = (old.pairs(), new.pairs());
        Self {
            added: b.difference(&a).cloned().collect(),
            removed: a.difference(&b).cloned().collect(),
            labels: new.labels.changed_from(&old.labels),
        }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.labels.is_empty()
    }

    /// `+2 / −1`, and `· 3 labels` when labels changed.
    pub fn counts(&self) -> String {
        let pairs = format!("+{} / −{}", self.added.len(), self.removed.len());
        match self.labels.len() {
            0 => pairs,
            1 => format!("{pairs} · 1 label"),
            n => format!("{pairs} · {n} labels"),
        }
    }

    /// One line for the history: what was added and removed where.
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "No changes".into();
        }
        let describe = |pairs: &[(String, String)], verb: &str| -> Option<String> {
            if pairs.is_empty() {
                return None;
            }
            let shown: Vec<String> = pairs
                .iter()
                .take(3)
                .map(|(s, t)| format!("{t} in {s}"))
                .collect();
            let more = pairs.len().saturating_sub(3);
            Some(if more > 0 {
                format!("{verb} {} and {more} more", shown.join(", "))
            } else {
                format!("{verb} {}", shown.join(", "))
            })
        };
        let labels = (!self.labels.is_empty()).then(|| {
            let shown = self.labels.iter().take(3).cloned().collect::<Vec<_>>();
            let more = self.labels.len().saturating_sub(3);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("labels changed: {}{more}", shown.join(", "))
        });
        [
            describe(&self.added, "added"),
            describe(&self.removed, "removed"),
            labels,
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// Precomputed availability: answers "may T be called in W" in constant time.
#[derive(Debug, Clone, Default)]
pub struct Availability {
    global: HashSet<String>,
    per_workflow: HashMap<String, HashSet<String>>,
}

impl Availability {
    /// Indexes `bindings`.
    pub fn new(bindings: &ToolBindings) -> Self {
        Self {
            global: bindings.global.iter().cloned().collect(),
            per_workflow: bindings
                .workflows
                .iter()
                .map(|(w, list)| (w.clone(), list.iter().cloned().collect()))
                .collect(),
        }
    }

    /// Whether `tool` may be called in `workflow`.
    pub fn allows(&self, workflow: &str, tool: &str) -> bool {
        self.global.contains(tool)
            || self
                .per_workflow
                .get(workflow)
                .is_some_and(|set| set.contains(tool))
    }
}

/// Who saved a version, when, and what changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionMeta {
    /// Increasing version number.
    pub version: i64,
    /// One line: what changed.
    pub summary: String,
    /// Display name of the author (`system` for seeds).
    pub author: String,
    /// Unix seconds.
    pub created_at: i64,
}

/// A stored version of the bindings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingsVersion {
    /// The document.
    pub bindings: ToolBindings,
    /// Its metadata.
    pub meta: VersionMeta,
}

/// The scope of the matrix's first row, whose tools every workflow gets.
pub const GLOBAL_SCOPE: &str = "global";

/// One row of the bindings matrix: Global, then each workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixRow {
    /// `global` or the workflow id, as the bindings document names it.
    pub scope: String,
    /// The row heading.
    pub name: String,
    /// The heading's tooltip.
    pub description: String,
}

/// The matrix's rows for `workflows`: Global first, so what it implies is
/// read before the workflows it applies to.
pub fn matrix_rows(workflows: &[Workflow]) -> Vec<MatrixRow> {
    let mut rows = vec![MatrixRow {
        scope: GLOBAL_SCOPE.to_owned(),
        name: "Global".to_owned(),
        description: "Available in every workflow".to_owned(),
    }];
    rows.extend(workflows.iter().map(|w| MatrixRow {
        scope: w.id.to_string(),
        name: w.name.clone(),
        description: w.description.clone(),
    }));
    rows
}

/// What the admin is told after a save: the new version, then each note the
/// server made while normalising (one sentence each).
pub fn saved_message(version: i64, notes: &[String]) -> String {
    let mut text = format!("Saved as version {version}.");
    for note in notes {
        text.push(' ');
        text.push_str(note);
        text.push('.');
    }
    text
}

/// The outcome of a save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveOutcome {
    /// The new version.
    pub version: i64,
    /// Redundancies removed while normalising.
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::seed::catalogue::{demo_catalogue, demo_workflows};
    use serde_json::json;

    fn known() -> (HashSet<String>, HashSet<String>) {
        (
            demo_catalogue()
                .into_iter()
                .map(|t| t.id.to_string())
                .collect(),
            demo_workflows()
                .into_iter()
                .map(|w| w.id.to_string())
                .collect(),
        )
    }

    #[test]
    fn a_file_without_labels_keeps_the_labels_being_edited() {
        let current = ToolBindings::demo();
        let file: BindingsFile =
            serde_json::from_value(json!({"global": ["start_workflow"]})).unwrap();
        let (doc, kept) = file.over(&current);
        assert!(kept);
        assert_eq!(doc.global, vec!["start_workflow".to_owned()]);
        assert!(doc.workflows.is_empty());
        assert_eq!(doc.labels, current.labels);
        // Labels given, even empty ones, are the file's.
        let file: BindingsFile =
            serde_json::from_value(json!({"global": [], "labels": {}})).unwrap();
        let (doc, kept) = file.over(&current);
        assert!(!kept);
        assert!(doc.labels.is_empty());
        // The same document as the save reads, unknown keys refused alike.
        assert!(serde_json::from_value::<BindingsFile>(json!({"global": [], "extra": 1})).is_err());
        let whole = serde_json::to_value(ToolBindings::demo()).unwrap();
        let (doc, _) = serde_json::from_value::<BindingsFile>(whole)
            .unwrap()
            .over(&ToolBindings::default());
        assert_eq!(doc, ToolBindings::demo());
    }

    #[test]
    fn the_example_document_round_trips_equal_in_meaning() {
        let text = r#"{"global":["get_server_time","start_workflow","end_session"],"workflows":{"banking-master":["manage_recent_interactions","check_balance"],"idv":["perform_idv_check","lookup_account"],"disputes":["create_dispute_case","lookup_transaction"]}}"#;
        let parsed: ToolBindings = serde_json::from_str(text).unwrap();
        let unlabelled = ToolBindings {
            labels: StateLabels::default(),
            ..ToolBindings::demo()
        };
        assert_eq!(parsed, unlabelled);
        let again: serde_json::Value = serde_json::to_value(&parsed).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_value::<ToolBindings>(json!({"global": [], "extra": 1})).is_err());
    }

    #[test]
    fn available_tools_are_global_then_workflow_in_order_without_duplicates() {
        let mut b = ToolBindings::demo();
        assert_eq!(
            b.available_in("idv"),
            [
                "get_server_time",
                "start_workflow",
                "end_session",
                "perform_idv_check",
                "lookup_account"
            ]
        );
        b.workflows
            .get_mut("idv")
            .unwrap()
            .push("get_server_time".into());
        assert_eq!(b.available_in("idv").len(), 5);
        assert_eq!(
            b.available_in("unknown"),
            ["get_server_time", "start_workflow", "end_session"]
        );
    }

    #[test]
    fn switching_workflow_changes_the_available_set() {
        let a = Availability::new(&ToolBindings::demo());
        assert!(!a.allows("idv", "check_balance"));
        assert!(a.allows("banking-master", "check_balance"));
        assert!(a.allows("idv", "start_workflow"));
        assert!(!a.allows("disputes", "mortgage_calculator"));
    }

    #[test]
    fn the_workflow_switch_must_be_global() {
        let (tools, workflows) = known();
        let mut b = ToolBindings::demo();
        b.global.retain(|t| t != "start_workflow");
        b.workflows
            .get_mut("idv")
            .unwrap()
            .push("start_workflow".into());
        let problems = b.validate(&tools, &workflows).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].at, "global");
        assert!(problems[0]
            .message
            .contains("\"start_workflow\" must be global"));
        assert!(problems[0].message.contains("listed only in: idv"));
    }

    #[test]
    fn unknown_tools_and_workflows_are_refused_by_name() {
        let (tools, workflows) = known();
        let mut b = ToolBindings::demo();
        b.global.push("teleport".into());
        b.workflows
            .insert("pirates".into(), vec!["check_balance".into()]);
        let problems = b.validate(&tools, &workflows).unwrap_err();
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "unknown tool \"teleport\" in global",
                "unknown workflow \"pirates\""
            ]
        );
    }

    #[test]
    fn redundant_and_repeated_entries_are_normalised_with_a_note() {
        let (tools, workflows) = known();
        let mut b = ToolBindings::demo();
        b.workflows
            .get_mut("idv")
            .unwrap()
            .push("end_session".into());
        b.workflows
            .get_mut("idv")
            .unwrap()
            .push("lookup_account".into());
        b.global.push("get_server_time".into());
        let n = b.validate(&tools, &workflows).unwrap();
        assert_eq!(n.bindings, ToolBindings::demo());
        assert_eq!(n.notes.len(), 3);
        assert!(n
            .notes
            .iter()
            .any(|m| m.contains("\"end_session\" is global") && m.contains("redundant")));
    }

    #[test]
    fn diffs_count_and_summarise_changes() {
        let old = ToolBindings::demo();
        let mut new = old.clone();
        new.set("banking-master", "check_balance", false);
        new.set("disputes", "check_balance", true);
        let diff = BindingsDiff::between(&old, &new);
        assert_eq!(diff.counts(), "+1 / −1");
        assert_eq!(
            diff.summary(),
            "added check_balance in disputes; removed check_balance in banking-master"
        );
        assert!(BindingsDiff::between(&old, &old).is_empty());
        assert!(
            new.has("disputes", "check_balance") && !new.has("banking-master", "check_balance")
        );
    }

    #[test]
    fn relabelling_alone_is_a_change_and_is_summarised() {
        let old = ToolBindings::demo();
        let mut new = old.clone();
        new.labels.steps.insert("ended".into(), "Hung up".into());
        let diff = BindingsDiff::between(&old, &new);
        assert!(!diff.is_empty());
        assert_eq!(diff.counts(), "+0 / −0 · 1 label");
        assert_eq!(diff.summary(), "labels changed: step ended");
        new.labels = StateLabels::default();
        let diff = BindingsDiff::between(&old, &new);
        assert_eq!(diff.labels.len(), 11);
        assert!(diff.summary().ends_with("and 8 more"), "{}", diff.summary());
    }

    #[test]
    fn validation_keeps_the_labels() {
        let (tools, workflows) = known();
        let n = ToolBindings::demo().validate(&tools, &workflows).unwrap();
        assert_eq!(n.bindings.labels, StateLabels::demo());
    }

    #[test]
    fn the_matrix_lists_global_before_every_workflow() {
        let workflows = demo_workflows();
        let rows = matrix_rows(&workflows);
        assert_eq!(rows.len(), workflows.len() + 1);
        assert_eq!(rows[0].scope, GLOBAL_SCOPE);
        assert_eq!(rows[0].name, "Global");
        assert_eq!(rows[1].scope, workflows[0].id.as_str());
        assert_eq!(rows[1].description, workflows[0].description);
    }

    #[test]
    fn a_save_message_names_the_version_and_each_note() {
        assert_eq!(saved_message(7, &[]), "Saved as version 7.");
        assert_eq!(
            saved_message(8, &["start_workflow kept global".into(), "x".into()]),
            "Saved as version 8. start_workflow kept global. x."
        );
    }
}
