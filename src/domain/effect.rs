//! What a tool's result does to a session, and what a session must have
//! done before a tool may run: catalogue data, not code.
//!
//! An agent backend usually executes its own tools (its bank's identity
//! check, its own calendar) and reports the result. Whether that result
//! verifies the caller, and which step the conversation is then at, is
//! declared on the catalogue tool as [`Effect`]s an admin can edit; which
//! checks a tool needs is its `requires` list. The built-in demo tools use
//! the same data, so there is one way state changes, whoever ran the tool.

use crate::domain::error::FieldError;
use crate::domain::limits::excerpt;
use crate::domain::workflow_state::WorkflowState;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Most effects one tool may declare.
pub const EFFECTS_MAX: usize = 16;
/// Most checks one tool may require.
pub const REQUIRES_MAX: usize = 16;
/// Most checks one state change (an effect branch or `PATCH …/state`) may set.
pub const CHECKS_PER_CHANGE_MAX: usize = 32;

/// A check or step name: `a-z 0-9 _ -`, 1–64 characters, so it reads as a
/// key in every event and can be named in a refusal.
pub fn label_problem(field: &str, raw: &str) -> Option<FieldError> {
    let ok = !raw.is_empty()
        && raw.len() <= 64
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    (!ok).then(|| {
        FieldError::new(
            field,
            format!(
                "\"{}\" must be 1-64 characters of a-z, 0-9, _ or -",
                excerpt(raw)
            ),
        )
    })
}

/// Whether `raw` is a JSON Pointer (RFC 6901): empty (the whole result) or
/// `/`-separated tokens in which `~` is only ever `~0` or `~1`.
pub fn is_json_pointer(raw: &str) -> bool {
    if raw.is_empty() {
        return true;
    }
    if !raw.starts_with('/') {
        return false;
    }
    let bytes = raw.as_bytes();
    bytes
        .iter()
        .enumerate()
        .all(|(i, b)| *b != b'~' || matches!(bytes.get(i + 1), Some(b'0' | b'1')))
}

/// A change to a session's state: checks to set and the step to move to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateChange {
    /// Checks to set (`identity_verified: true`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, bool>,
    /// The step the session is at afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

impl StateChange {
    /// Applies the change to `ws`.
    pub fn apply(&self, ws: &mut WorkflowState) {
        for (check, value) in &self.checks {
            ws.checks.insert(check.clone(), *value);
        }
        if let Some(step) = &self.step {
            ws.current_step = step.clone();
        }
    }

    /// Field rules, with fields named under `at` (`effects[0].then`).
    pub fn problems(&self, at: &str) -> Vec<FieldError> {
        let mut problems = Vec::new();
        if self.checks.len() > CHECKS_PER_CHANGE_MAX {
            problems.push(FieldError::new(
                format!("{at}.checks"),
                format!("may set at most {CHECKS_PER_CHANGE_MAX} checks"),
            ));
        }
        problems.extend(
            self.checks
                .keys()
                .filter_map(|c| label_problem(&format!("{at}.checks"), c)),
        );
        if let Some(step) = &self.step {
            problems.extend(label_problem(&format!("{at}.step"), step));
        }
        problems
    }
}

/// One effect of a tool's result. Without `when` it always applies `then`.
/// With `when` (a JSON Pointer into the result) it applies `then` if the
/// value there equals `equals` — or, without `equals`, is truthy (present
/// and not `null`, `false`, `0` or `""`) — and `otherwise` if not.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Effect {
    /// Where in the result to look (`/verified`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The value that counts as a match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Applied on a match (always, without `when`).
    #[serde(default)]
    pub then: StateChange,
    /// Applied when `when` does not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otherwise: Option<StateChange>,
}

impl Effect {
    /// The branch `result` selects, if any.
    pub fn branch(&self, result: &Value) -> Option<&StateChange> {
        let Some(pointer) = &self.when else {
            return Some(&self.then);
        };
        let found = result.pointer(pointer);
        let matched = match (&self.equals, found) {
            (Some(expected), Some(actual)) => expected == actual,
            (Some(_), None) => false,
            (None, found) => found.is_some_and(truthy),
        };
        if matched {
            Some(&self.then)
        } else {
            self.otherwise.as_ref()
        }
    }

    /// Field rules, with fields named under `at` (`effects[0]`).
    pub fn problems(&self, at: &str) -> Vec<FieldError> {
        let mut problems = Vec::new();
        if let Some(pointer) = &self.when {
            if !is_json_pointer(pointer) {
                problems.push(FieldError::new(
                    format!("{at}.when"),
                    format!(
                        "\"{}\" must be a JSON Pointer such as /verified (RFC 6901)",
                        excerpt(pointer)
                    ),
                ));
            }
        } else if self.otherwise.is_some() || self.equals.is_some() {
            problems.push(FieldError::new(
                format!("{at}.when"),
                "is needed with equals or otherwise",
            ));
        }
        problems.extend(self.then.problems(&format!("{at}.then")));
        if let Some(otherwise) = &self.otherwise {
            problems.extend(otherwise.problems(&format!("{at}.otherwise")));
        }
        problems
    }

    /// Every check this effect can set.
    pub fn checks(&self) -> impl Iterator<Item = &String> {
        self.then
            .checks
            .keys()
            .chain(self.otherwise.iter().flat_map(|o| o.checks.keys()))
    }

    /// Every step this effect can move a session to.
    pub fn steps(&self) -> impl Iterator<Item = &String> {
        self.then
            .step
            .iter()
            .chain(self.otherwise.iter().flat_map(|o| o.step.iter()))
    }
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Applies each effect's selected branch to `ws`, in order (a later effect
/// wins where two set the same check).
pub fn apply_effects(effects: &[Effect], result: &Value, ws: &mut WorkflowState) {
    for effect in effects {
        if let Some(change) = effect.branch(result) {
            change.apply(ws);
        }
    }
}

/// The checks among `requires` that `ws` has not passed, in order.
pub fn missing_checks<'a>(requires: &'a [String], ws: &WorkflowState) -> Vec<&'a str> {
    requires
        .iter()
        .filter(|c| !ws.passed(c))
        .map(String::as_str)
        .collect()
}

/// Field rules for a tool's `requires` and `effects`; `known_checks` are the
/// checks some tool's effects can set (a requirement nothing can satisfy
/// would lock the tool forever).
pub fn rules_problems(
    requires: &[String],
    effects: &[Effect],
    known_checks: &BTreeSet<String>,
) -> Vec<FieldError> {
    let mut problems = Vec::new();
    if requires.len() > REQUIRES_MAX {
        problems.push(FieldError::new(
            "requires",
            format!("may list at most {REQUIRES_MAX} checks"),
        ));
    }
    if effects.len() > EFFECTS_MAX {
        problems.push(FieldError::new(
            "effects",
            format!("may list at most {EFFECTS_MAX} effects"),
        ));
    }
    for check in requires {
        if let Some(p) = label_problem("requires", check) {
            problems.push(p);
        } else if !known_checks.contains(check) {
            let known: Vec<&str> = known_checks.iter().map(String::as_str).collect();
            problems.push(FieldError::new(
                "requires",
                format!(
                    "check \"{check}\" is set by no tool's effects (known checks: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }
    for (i, effect) in effects.iter().enumerate() {
        problems.extend(effect.problems(&format!("effects[{i}]")));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn idv_effect() -> Effect {
        serde_json::from_value(json!({
            "when": "/verified", "equals": true,
            "then": {"checks": {"identity_verified": true}, "step": "identity_verified"},
            "otherwise": {"checks": {"identity_verified": false}, "step": "identity_failed"}
        }))
        .unwrap()
    }

    #[test]
    fn a_result_selects_the_branch_it_matches() {
        let mut ws = WorkflowState::start("idv");
        apply_effects(&[idv_effect()], &json!({"verified": true}), &mut ws);
        assert!(ws.passed("identity_verified"));
        assert_eq!(ws.current_step, "identity_verified");
        apply_effects(&[idv_effect()], &json!({"verified": "yes"}), &mut ws);
        assert_eq!(ws.checks.get("identity_verified"), Some(&false));
        assert_eq!(ws.current_step, "identity_failed");
        apply_effects(&[idv_effect()], &json!({}), &mut ws);
        assert_eq!(ws.current_step, "identity_failed", "missing = no match");
    }

    #[test]
    fn without_equals_a_truthy_value_matches_and_without_when_always() {
        let e = Effect {
            when: Some("/case/id".into()),
            then: StateChange {
                step: Some("dispute_opened".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(e.branch(&json!({"case": {"id": "DC-1"}})).is_some());
        assert!(e.branch(&json!({"case": {"id": ""}})).is_none());
        assert!(e.branch(&json!({"case": null})).is_none());
        let always = Effect {
            then: StateChange {
                step: Some("ended".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(always.branch(&Value::Null).is_some());
    }

    #[test]
    fn requirements_name_what_is_missing() {
        let mut ws = WorkflowState::start("idv");
        let requires = vec!["identity_verified".to_owned(), "account_found".to_owned()];
        assert_eq!(
            missing_checks(&requires, &ws),
            ["identity_verified", "account_found"]
        );
        ws.checks.insert("account_found".into(), true);
        assert_eq!(missing_checks(&requires, &ws), ["identity_verified"]);
    }

    #[test]
    fn bad_rules_are_named_by_field() {
        let known: BTreeSet<String> = ["identity_verified".to_owned()].into();
        let bad: Effect = serde_json::from_value(
            json!({"when": "verified", "then": {"checks": {"Bad Check": true}}}),
        )
        .unwrap();
        let problems = rules_problems(&["nothing_sets_me".into()], &[bad], &known);
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            ["requires", "effects[0].when", "effects[0].then.checks"]
        );
        assert!(problems[0].rule.contains("known checks: identity_verified"));
        assert!(rules_problems(&["identity_verified".into()], &[idv_effect()], &known).is_empty());
        let orphan: Effect = serde_json::from_value(json!({"otherwise": {"step": "x"}})).unwrap();
        assert_eq!(orphan.problems("e")[0].field, "e.when");
    }

    #[test]
    fn json_pointers_follow_rfc_6901() {
        for ok in ["", "/", "/a", "/a/0", "/a~0b", "/a~1b"] {
            assert!(is_json_pointer(ok), "{ok}");
        }
        for bad in ["a", "/a~", "/a~2", "~0"] {
            assert!(!is_json_pointer(bad), "{bad}");
        }
    }

    proptest! {
        /// Whatever the result, applying effects touches only the checks
        /// they declare and leaves the workflow alone; without a match and
        /// without `otherwise`, nothing changes.
        #[test]
        fn effects_touch_only_what_they_declare(
            verified in proptest::option::of(any::<bool>()),
            noise in "[a-z]{0,8}",
        ) {
            let mut result = json!({"noise": noise});
            if let Some(v) = verified {
                result["verified"] = json!(v);
            }
            let mut ws = WorkflowState::start("idv");
            ws.checks.insert("other".into(), true);
            apply_effects(&[idv_effect()], &result, &mut ws);
            prop_assert_eq!(&ws.current_workflow, "idv");
            prop_assert_eq!(ws.checks.get("other"), Some(&true));
            prop_assert_eq!(ws.passed("identity_verified"), verified == Some(true));
            let mut untouched = WorkflowState::start("idv");
            let only_then = Effect { otherwise: None, ..idv_effect() };
            apply_effects(&[only_then], &result, &mut untouched);
            prop_assert_eq!(untouched == WorkflowState::start("idv"), verified != Some(true));
        }
    }
}
