//! What a live session's own definition declares, for the people watching
//! it: its name (the lesson's title, the workflow's or the vibe's) and the
//! checks worth watching — a lesson's tasks and review items, the checks
//! its workflow's or vibe's tools require or set — each with its value now.
//!
//! Why: the visualiser used to list the banking demo's two checks for every
//! session and name a tutor session `lesson-3`, so a teacher saw
//! "Identity verified" where the lesson's tasks should have been. What a
//! session declares is data of its lesson, workflow or vibe; this module
//! turns that data into the rows the checks panel and the progress panel
//! both read, so the two can never disagree.
//!
//! A lesson's progress lives in the session's own checks: a tutor tool's
//! recorded outcome sets `task:<id>` or `mastered:<id>` ([`record_outcome`])
//! in the same state every other check lives in, so it is stored with the
//! call and reaches watchers in the same `workflow_update` as any change.
//! The `:` keeps those keys apart from the catalogue's (which may not
//! contain one), so a backend cannot set them with `PATCH …/state`.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::lesson::outcome::TutorOutcome;
use crate::domain::lesson::LessonDraft;
use crate::domain::state_labels::StateLabels;
use crate::domain::workflow_state::WorkflowState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The start of a lesson task's check key (`task:order-coffee`).
pub const TASK_PREFIX: &str = "task:";
/// The start of a review item's "mastered" check key (`mastered:fui`).
pub const MASTERED_PREFIX: &str = "mastered:";

/// What a check stands for, which decides how its value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckKind {
    /// A lesson task: done or not.
    Task,
    /// A lesson's review item: mastered or not.
    Mastered,
    /// A catalogue check (`identity_verified`): passed, failed or unknown.
    Check,
}

impl CheckKind {
    /// How `value` reads for this kind of check, for the icon's words.
    pub fn words(self, value: Option<bool>) -> &'static str {
        match (self, value) {
            (Self::Task, Some(true)) => "done",
            (Self::Task, _) => "not done yet",
            (Self::Mastered, Some(true)) => "mastered",
            (Self::Mastered, _) => "not mastered yet",
            (Self::Check, Some(true)) => "passed",
            (Self::Check, Some(false)) => "failed",
            (Self::Check, None) => "not yet known",
        }
    }
}

/// One check a session's definition declares, labelled for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredCheck {
    /// Its key in the session's checks.
    pub key: String,
    /// What people read (a task's text, a check's label).
    pub label: String,
    /// A hint under the label, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What it stands for.
    pub kind: CheckKind,
}

impl DeclaredCheck {
    /// Catalogue check `key`, labelled by the bindings' labels.
    fn catalogue(key: &str, labels: &StateLabels) -> Self {
        Self {
            key: key.to_owned(),
            label: labels.check(key),
            description: labels.check_description(key),
            kind: CheckKind::Check,
        }
    }
}

/// One workflow a session may be in, with the checks its tools declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowChecks {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What its tools require or set, in tool order.
    pub checks: Vec<DeclaredCheck>,
}

/// What a session runs, as far as watching it goes: its name and checks.
/// A workflow session may switch workflows, so it carries each of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Outline {
    /// A tutor session.
    Lesson {
        /// The lesson's title; `None` once the lesson has been deleted.
        title: Option<String>,
        /// Its tasks, then its review items.
        checks: Vec<DeclaredCheck>,
    },
    /// A session in a workflow.
    Workflows {
        /// Every workflow it may be in.
        workflows: Vec<WorkflowChecks>,
    },
    /// A session in a vibe.
    Vibe {
        /// The vibe's name.
        name: String,
        /// Its agents' names by id, for the badge.
        agents: BTreeMap<String, String>,
        /// What its agents' tools require or set.
        checks: Vec<DeclaredCheck>,
    },
}

/// One row of the checks panel: a declared check (or one the session holds
/// that nothing declares) and its value now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRow {
    /// The check.
    pub check: DeclaredCheck,
    /// Its value; `None` until something sets it.
    pub value: Option<bool>,
}

/// Lesson task `id`'s check key.
pub fn task_key(id: &str) -> String {
    format!("{TASK_PREFIX}{id}")
}

/// Review item `id`'s "mastered" check key.
pub fn mastered_key(id: &str) -> String {
    format!("{MASTERED_PREFIX}{id}")
}

/// Whether `key` is a lesson's check (a task or a mastered item): declared
/// by the session's lesson, whatever the catalogue says.
pub fn is_lesson_check(key: &str) -> bool {
    key.starts_with(TASK_PREFIX) || key.starts_with(MASTERED_PREFIX)
}

/// The check a tutor tool's stored outcome sets, if any: a completed task's
/// or a mastered item's.
pub fn outcome_check(outcome: &TutorOutcome) -> Option<String> {
    match outcome {
        TutorOutcome::Task(t) => Some(task_key(&t.task_id)),
        TutorOutcome::Mastered(m) => Some(mastered_key(&m.item_id)),
        _ => None,
    }
}

/// Records a tutor tool's outcome in the session's state, so watchers see
/// the task done or the item mastered.
pub fn record_outcome(outcome: &TutorOutcome, ws: &mut WorkflowState) {
    if let Some(key) = outcome_check(outcome) {
        ws.checks.insert(key, true);
    }
}

/// The checks `tools` require or set, each once, in tool order (a tool's
/// requirements before its effects), labelled by `labels`.
pub fn tool_checks<'a>(
    tools: impl IntoIterator<Item = &'a CatalogueTool>,
    labels: &StateLabels,
) -> Vec<DeclaredCheck> {
    let mut keys: Vec<&str> = Vec::new();
    for tool in tools {
        let set = tool.effects.iter().flat_map(|e| e.checks());
        for key in tool.requires.iter().chain(set) {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
    }
    keys.into_iter()
        .map(|k| DeclaredCheck::catalogue(k, labels))
        .collect()
}

impl Outline {
    /// A tutor session of `lesson` (`None`: deleted since): its tasks, then
    /// its review items, by their text.
    pub fn lesson(lesson: Option<&LessonDraft>) -> Self {
        let Some(lesson) = lesson else {
            return Self::Lesson {
                title: None,
                checks: Vec::new(),
            };
        };
        let tasks = lesson.tasks.iter().map(|t| DeclaredCheck {
            key: task_key(&t.id),
            label: t.text.clone(),
            description: Some("Lesson task".into()),
            kind: CheckKind::Task,
        });
        let items = lesson.review_items.iter().map(|i| DeclaredCheck {
            key: mastered_key(&i.id),
            label: i.text.clone(),
            description: Some("Review item".into()),
            kind: CheckKind::Mastered,
        });
        Self::Lesson {
            title: Some(lesson.title.clone()),
            checks: tasks.chain(items).collect(),
        }
    }

    /// The name the badge shows: the lesson's title, the current
    /// workflow's name, or the vibe's and its current agent's.
    pub fn title(&self, ws: &WorkflowState) -> String {
        match self {
            Self::Lesson { title, .. } => title
                .clone()
                .unwrap_or_else(|| "A deleted lesson".to_owned()),
            Self::Workflows { workflows } => workflows
                .iter()
                .find(|w| w.id == ws.current_workflow)
                .map_or_else(|| ws.current_workflow.clone(), |w| w.name.clone()),
            Self::Vibe { name, agents, .. } => match &ws.agent {
                Some(ctx) => {
                    let agent = agents.get(&ctx.agent).unwrap_or(&ctx.agent);
                    format!("{name} · {agent}")
                }
                None => name.clone(),
            },
        }
    }

    /// What the session's definition declares now (a workflow session's:
    /// its current workflow's).
    pub fn declared(&self, ws: &WorkflowState) -> &[DeclaredCheck] {
        match self {
            Self::Lesson { checks, .. } | Self::Vibe { checks, .. } => checks,
            Self::Workflows { workflows } => workflows
                .iter()
                .find(|w| w.id == ws.current_workflow)
                .map_or(&[], |w| w.checks.as_slice()),
        }
    }

    /// The checks panel's rows for a session in `ws`: what its definition
    /// declares, then any other check it holds (a backend's own, set with
    /// `PATCH …/state`) in name order, labelled by `labels`.
    pub fn rows(&self, ws: &WorkflowState, labels: &StateLabels) -> Vec<CheckRow> {
        let declared = self.declared(ws);
        let own = ws
            .checks
            .keys()
            .filter(|k| !declared.iter().any(|d| &d.key == *k))
            .map(|k| DeclaredCheck::catalogue(k, labels));
        declared
            .iter()
            .cloned()
            .chain(own)
            .map(|check| CheckRow {
                value: ws.checks.get(&check.key).copied(),
                check,
            })
            .collect()
    }

    /// What the checks panel says when there are no rows, so an empty
    /// panel reads as "nothing to check", not as broken.
    pub fn none_declared(&self) -> &'static str {
        match self {
            Self::Lesson { title: None, .. } => "The lesson this session ran has been deleted.",
            Self::Lesson { .. } => "This lesson has no tasks or review items to check.",
            Self::Workflows { .. } => "No tool of this workflow requires or sets a check.",
            Self::Vibe { .. } => "No tool of this vibe's agents requires or sets a check.",
        }
    }
}

/// How many of `rows` of `kind` are true, of how many; `None` when there
/// is none of that kind (the progress panel's "2 of 3 tasks done").
pub fn tally(rows: &[CheckRow], kind: CheckKind) -> Option<(usize, usize)> {
    let of_kind: Vec<&CheckRow> = rows.iter().filter(|r| r.check.kind == kind).collect();
    (!of_kind.is_empty()).then(|| {
        let done = of_kind.iter().filter(|r| r.value == Some(true)).count();
        (done, of_kind.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::effect::{Effect, StateChange};
    use crate::domain::lesson::fixtures::cafe_lesson;
    use crate::domain::lesson::outcome::{ItemMastered, LessonSummary, TaskDone};
    use crate::domain::workflow_state::{AgentContext, ACCOUNT_FOUND, IDENTITY_VERIFIED};
    use serde_json::json;

    fn keys(rows: &[CheckRow]) -> Vec<&str> {
        rows.iter().map(|r| r.check.key.as_str()).collect()
    }

    fn tool(id: &str, requires: &[&str], sets: &[&str]) -> CatalogueTool {
        let mut t = CatalogueTool::new(id, id, "test", "A tool.", json!({"type": "object"}));
        t.requires = requires.iter().map(|r| r.to_string()).collect();
        if !sets.is_empty() {
            t.effects = vec![Effect {
                then: StateChange {
                    checks: sets.iter().map(|c| (c.to_string(), true)).collect(),
                    step: None,
                },
                ..Effect::default()
            }];
        }
        t
    }

    fn idv() -> Outline {
        let tools = [
            tool("get_server_time", &[], &[]),
            tool("perform_idv_check", &[], &[IDENTITY_VERIFIED]),
            tool("lookup_account", &[IDENTITY_VERIFIED], &[ACCOUNT_FOUND]),
        ];
        Outline::Workflows {
            workflows: vec![
                WorkflowChecks {
                    id: "idv".into(),
                    name: "ID&V".into(),
                    checks: tool_checks(&tools, &StateLabels::default()),
                },
                WorkflowChecks {
                    id: "mortgage".into(),
                    name: "Mortgages".into(),
                    checks: tool_checks(&tools[..1], &StateLabels::default()),
                },
            ],
        }
    }

    #[test]
    fn a_tutor_session_lists_its_tasks_then_its_items_and_no_banking_check() {
        let outline = Outline::lesson(Some(&cafe_lesson()));
        let rows = outline.rows(&WorkflowState::start("lesson-3"), &StateLabels::default());
        assert_eq!(
            keys(&rows),
            ["task:greet", "task:order", "mastered:fui", "mastered:comi"]
        );
        assert_eq!(rows[0].check.label, "Greet the waiter");
        assert_eq!(rows[2].check.kind, CheckKind::Mastered);
        assert!(rows.iter().all(|r| r.value.is_none()));
        assert_eq!(
            outline.title(&WorkflowState::start("lesson-3")),
            "At the café"
        );
    }

    #[test]
    fn a_recorded_task_or_mastered_item_turns_its_check_true() {
        let outline = Outline::lesson(Some(&cafe_lesson()));
        let mut ws = WorkflowState::start("lesson-3");
        record_outcome(
            &TutorOutcome::Task(TaskDone {
                task_id: "order".into(),
                evidence: None,
            }),
            &mut ws,
        );
        record_outcome(
            &TutorOutcome::Mastered(ItemMastered {
                item_id: "fui".into(),
                confidence: Some(4),
            }),
            &mut ws,
        );
        let rows = outline.rows(&ws, &StateLabels::default());
        let values: Vec<Option<bool>> = rows.iter().map(|r| r.value).collect();
        assert_eq!(values, [None, Some(true), Some(true), None]);
        assert_eq!(tally(&rows, CheckKind::Task), Some((1, 2)));
        assert_eq!(tally(&rows, CheckKind::Mastered), Some((1, 2)));
        assert_eq!(tally(&rows, CheckKind::Check), None);
    }

    #[test]
    fn an_outcome_that_is_not_progress_sets_no_check() {
        let mut ws = WorkflowState::start("lesson-3");
        record_outcome(
            &TutorOutcome::Summary(LessonSummary {
                summary: "Good".into(),
                strengths: vec![],
                areas_to_improve: vec![],
                next_steps: vec![],
                stars: None,
            }),
            &mut ws,
        );
        assert!(ws.checks.is_empty());
    }

    #[test]
    fn lesson_keys_cannot_be_set_by_a_backend_and_are_the_lessons() {
        assert!(crate::domain::effect::label_problem("checks", &task_key("greet")).is_some());
        assert!(is_lesson_check("task:greet") && is_lesson_check("mastered:fui"));
        assert!(!is_lesson_check(IDENTITY_VERIFIED));
    }

    #[test]
    fn a_workflow_lists_what_its_tools_require_or_set_once_in_tool_order() {
        let outline = idv();
        let rows = outline.rows(&WorkflowState::start("idv"), &StateLabels::default());
        assert_eq!(keys(&rows), [IDENTITY_VERIFIED, ACCOUNT_FOUND]);
        assert_eq!(rows[0].check.label, "Identity verified");
        assert_eq!(outline.title(&WorkflowState::start("idv")), "ID&V");
    }

    #[test]
    fn a_workflow_whose_tools_declare_no_check_lists_none_and_says_so() {
        let outline = idv();
        let ws = WorkflowState::start("mortgage");
        assert!(outline.rows(&ws, &StateLabels::default()).is_empty());
        assert_eq!(outline.title(&ws), "Mortgages");
        assert!(outline.none_declared().contains("workflow"));
    }

    #[test]
    fn checks_nothing_declares_follow_the_declared_ones() {
        let mut ws = WorkflowState::start("idv");
        ws.checks.insert("terms_read".into(), true);
        ws.checks.insert(IDENTITY_VERIFIED.into(), false);
        let rows = idv().rows(&ws, &StateLabels::default());
        assert_eq!(
            keys(&rows),
            [IDENTITY_VERIFIED, ACCOUNT_FOUND, "terms_read"]
        );
        assert_eq!(rows[0].value, Some(false));
        assert_eq!(rows[2].check.label, "Terms read");
    }

    #[test]
    fn a_vibe_session_reads_as_its_vibe_and_agent_and_may_declare_nothing() {
        let outline = Outline::Vibe {
            name: "Todo Assistant".into(),
            agents: BTreeMap::from([("oliver".into(), "Oliver".into())]),
            checks: Vec::new(),
        };
        let mut ws = WorkflowState::start("vibe-todos");
        ws.agent = Some(AgentContext {
            vibe: "todos".into(),
            agent: "oliver".into(),
        });
        assert_eq!(outline.title(&ws), "Todo Assistant · Oliver");
        assert!(outline.rows(&ws, &StateLabels::default()).is_empty());
        assert!(outline.none_declared().contains("vibe"));
    }

    #[test]
    fn a_deleted_lesson_says_so_instead_of_an_id() {
        let outline = Outline::lesson(None);
        assert_eq!(
            outline.title(&WorkflowState::start("lesson-3")),
            "A deleted lesson"
        );
        assert!(outline.none_declared().contains("deleted"));
    }

    #[test]
    fn each_kind_reads_its_value_in_its_own_words() {
        assert_eq!(CheckKind::Task.words(Some(true)), "done");
        assert_eq!(CheckKind::Task.words(None), "not done yet");
        assert_eq!(CheckKind::Mastered.words(None), "not mastered yet");
        assert_eq!(CheckKind::Check.words(None), "not yet known");
        assert_eq!(CheckKind::Check.words(Some(false)), "failed");
    }
}
