//! What people read for a session's checks and steps: labels an admin
//! writes, kept in the bindings document next to the bindings themselves.
//!
//! Checks (`identity_verified`) and steps (the outcome label effects set,
//! `balance_given`) are keys: stable, short, fit for events and refusals,
//! but not for someone watching a call. Their labels are data, versioned,
//! exported and imported with `tool-bindings.json`, so an admin who adds a
//! check in the catalogue can name it without a release. A key without a
//! label reads as its humanised self (`account_found` → "Account found"),
//! so documents written before labels existed still show something sane.

use crate::domain::effect::label_problem;
use crate::domain::error::BindingProblem;
use crate::domain::limits::{excerpt, unprintable, PRINTABLE_RULE};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Longest check label, in characters (it sits on one line of a narrow panel).
pub const CHECK_LABEL_MAX_CHARS: usize = 80;
/// Longest check description or step description, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 300;
/// Most step descriptions one document may carry: steps are free-form keys a
/// backend may set, so their number is not bounded by the catalogue.
pub const STEP_LABELS_MAX: usize = 200;

/// The name people see for one check, and optionally what passing it means.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckLabel {
    /// Short name ("Identity verified").
    pub label: String,
    /// What passing it means, shown as a hint.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// Labels for checks and descriptions for steps, by key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateLabels {
    /// Check key → its label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, CheckLabel>,
    /// Step key → what it means ("Caller's identity verified").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub steps: BTreeMap<String, String>,
}

/// `identity_verified` → "Identity verified": the reading of a key nobody
/// labelled. `_` and `-` become spaces and the first letter is capitalised.
pub fn humanise(key: &str) -> String {
    let spaced = key.replace(['_', '-'], " ");
    let mut chars = spaced.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl StateLabels {
    /// Whether no label is set (left out of the JSON then).
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty() && self.steps.is_empty()
    }

    /// The name shown for check `key`.
    pub fn check(&self, key: &str) -> String {
        self.checks
            .get(key)
            .map(|c| c.label.trim())
            .filter(|l| !l.is_empty())
            .map_or_else(|| humanise(key), str::to_owned)
    }

    /// The hint shown for check `key`, if it has one.
    pub fn check_description(&self, key: &str) -> Option<String> {
        self.checks
            .get(key)
            .map(|c| c.description.trim())
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
    }

    /// The words shown for step `key`.
    pub fn step(&self, key: &str) -> String {
        self.steps
            .get(key)
            .map(|d| d.trim())
            .filter(|d| !d.is_empty())
            .map_or_else(|| humanise(key), str::to_owned)
    }

    /// Every key whose label differs between `self` and `other`, as
    /// `check <key>` or `step <key>`, for a diff.
    pub fn changed_from(&self, other: &StateLabels) -> Vec<String> {
        fn keys<V: PartialEq>(
            kind: &str,
            a: &BTreeMap<String, V>,
            b: &BTreeMap<String, V>,
        ) -> Vec<String> {
            a.keys()
                .chain(b.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|k| a.get(*k) != b.get(*k))
                .map(|k| format!("{kind} {k}"))
                .collect()
        }
        let mut changed = keys("check", &self.checks, &other.checks);
        changed.extend(keys("step", &self.steps, &other.steps));
        changed
    }

    /// The rules on labels: checks must be ones some catalogue tool's
    /// effects can set (`known_checks`; a label for a check nothing sets is
    /// a typo); step keys must look like step keys (a backend may set any
    /// step, so they are not checked against the catalogue); labels are
    /// 1–80 characters, descriptions at most 300. Each problem is placed at
    /// `labels.checks.<key>[.label|.description]` or `labels.steps.<key>`.
    pub fn problems(&self, known_checks: &BTreeSet<String>) -> Vec<BindingProblem> {
        let mut problems = Vec::new();
        let mut problem = |at: String, message: String| {
            problems.push(BindingProblem { at, message });
        };
        for (key, check) in &self.checks {
            let at = format!("labels.checks.{}", excerpt(key));
            if !known_checks.contains(key) {
                let known = known_checks.iter().cloned().collect::<Vec<_>>().join(", ");
                problem(
                    at.clone(),
                    format!(
                        "unknown check \"{}\": no catalogue tool's effects set it (known checks: {known})",
                        excerpt(key)
                    ),
                );
            }
            let label = check.label.trim().chars().count();
            if label == 0 || label > CHECK_LABEL_MAX_CHARS {
                problem(
                    format!("{at}.label"),
                    format!(
                        "the label of check \"{}\" must be 1-{CHECK_LABEL_MAX_CHARS} characters",
                        excerpt(key)
                    ),
                );
            } else if unprintable(&check.label).is_some() {
                problem(
                    format!("{at}.label"),
                    format!("the label of check \"{}\" {PRINTABLE_RULE}", excerpt(key)),
                );
            }
            if check.description.chars().count() > DESCRIPTION_MAX_CHARS {
                problem(
                    format!("{at}.description"),
                    format!(
                        "the description of check \"{}\" must be at most {DESCRIPTION_MAX_CHARS} characters",
                        excerpt(key)
                    ),
                );
            }
        }
        if self.steps.len() > STEP_LABELS_MAX {
            problem(
                "labels.steps".into(),
                format!("may describe at most {STEP_LABELS_MAX} steps"),
            );
        }
        for (key, description) in &self.steps {
            let at = format!("labels.steps.{}", excerpt(key));
            if let Some(p) = label_problem(&at, key) {
                problem(at.clone(), format!("step {}", p.rule));
            }
            let length = description.trim().chars().count();
            if length == 0 || length > DESCRIPTION_MAX_CHARS {
                problem(
                    at,
                    format!(
                        "the description of step \"{}\" must be 1-{DESCRIPTION_MAX_CHARS} characters",
                        excerpt(key)
                    ),
                );
            }
        }
        problems
    }

    /// The demo's labels: the banking checks and every step the demo
    /// catalogue's effects (and a fresh session) set.
    pub fn demo() -> Self {
        let check = |label: &str, description: &str| CheckLabel {
            label: label.to_owned(),
            description: description.to_owned(),
        };
        Self {
            checks: BTreeMap::from([
                (
                    "identity_verified".to_owned(),
                    check(
                        "Identity verified",
                        "The caller passed the identity check; banking tools need it.",
                    ),
                ),
                (
                    "account_found".to_owned(),
                    check("Account found", "The account the caller named exists."),
                ),
            ]),
            steps: [
                ("started", "Conversation started"),
                ("identity_verified", "Caller's identity verified"),
                ("identity_failed", "Identity check failed"),
                ("account_found", "Account found"),
                ("account_not_found", "No account with that number"),
                ("balance_given", "Balance given to the caller"),
                ("transaction_found", "Transaction found"),
                ("dispute_opened", "Dispute case opened"),
                ("ended", "Call ended"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::catalogue::{known_checks, known_steps};
    use crate::server::seed::catalogue::demo_catalogue;

    #[test]
    fn keys_nobody_labelled_read_as_words() {
        assert_eq!(humanise("identity_verified"), "Identity verified");
        assert_eq!(humanise("needs-review"), "Needs review");
        assert_eq!(humanise("x"), "X");
        assert_eq!(humanise(""), "");
        let none = StateLabels::default();
        assert_eq!(none.check("account_found"), "Account found");
        assert_eq!(none.step("balance_given"), "Balance given");
        assert_eq!(none.check_description("account_found"), None);
    }

    #[test]
    fn labels_win_over_keys_and_blank_ones_fall_back() {
        let mut labels = StateLabels::demo();
        assert_eq!(
            labels.step("identity_verified"),
            "Caller's identity verified"
        );
        assert_eq!(labels.check("identity_verified"), "Identity verified");
        assert!(labels
            .check_description("identity_verified")
            .unwrap()
            .contains("identity check"));
        labels.steps.insert("custom".into(), "  ".into());
        assert_eq!(labels.step("custom"), "Custom");
    }

    #[test]
    fn the_demo_labels_are_valid_and_cover_every_demo_step_and_check() {
        let tools = demo_catalogue();
        let labels = StateLabels::demo();
        assert_eq!(labels.problems(&known_checks(&tools)), []);
        for check in known_checks(&tools) {
            assert!(labels.checks.contains_key(&check), "{check}");
        }
        for step in known_steps(&tools) {
            assert!(labels.steps.contains_key(&step), "{step}");
        }
    }

    #[test]
    fn unknown_checks_bad_step_keys_and_lengths_are_refused_by_place() {
        let known = BTreeSet::from(["identity_verified".to_owned()]);
        let mut labels = StateLabels::default();
        labels.checks.insert(
            "teleported".into(),
            CheckLabel {
                label: "Teleported".into(),
                description: String::new(),
            },
        );
        labels.checks.insert(
            "identity_verified".into(),
            CheckLabel {
                label: " ".into(),
                description: "x".repeat(DESCRIPTION_MAX_CHARS + 1),
            },
        );
        labels.steps.insert("Bad Step".into(), "Fine words".into());
        labels.steps.insert("ok_step".into(), String::new());
        let problems = labels.problems(&known);
        let places: Vec<&str> = problems.iter().map(|p| p.at.as_str()).collect();
        assert_eq!(
            places,
            [
                "labels.checks.identity_verified.label",
                "labels.checks.identity_verified.description",
                "labels.checks.teleported",
                "labels.steps.Bad Step",
                "labels.steps.ok_step",
            ]
        );
        assert!(problems[2].message.contains("unknown check \"teleported\""));
        assert!(problems[2].message.contains("identity_verified"));
        assert!(problems[3].message.contains("a-z, 0-9"));
        assert!(problems[4].message.contains("must be 1-300 characters"));
    }

    #[test]
    fn changed_labels_are_named_by_kind_and_key() {
        let old = StateLabels::demo();
        let mut new = old.clone();
        new.steps.remove("ended");
        new.checks.get_mut("account_found").unwrap().label = "Located".into();
        new.steps.insert("zz".into(), "New".into());
        assert_eq!(
            new.changed_from(&old),
            ["check account_found", "step ended", "step zz"]
        );
        assert!(old.changed_from(&old).is_empty());
    }

    #[test]
    fn documents_without_labels_and_with_partial_ones_parse() {
        let labels: StateLabels =
            serde_json::from_str(r#"{"checks": {"a": {"label": "A"}}}"#).unwrap();
        assert_eq!(labels.checks["a"].description, "");
        assert!(labels.steps.is_empty());
        assert!(serde_json::from_str::<StateLabels>(r#"{"check": {}}"#).is_err());
        assert_eq!(
            serde_json::to_string(&StateLabels::default()).unwrap(),
            "{}"
        );
    }
}
