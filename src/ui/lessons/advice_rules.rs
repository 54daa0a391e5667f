//! What the tool panel tells the teacher about a configuration and the
//! lesson it belongs to: suggestions (smart defaults the teacher's own
//! choices hold back) and contradictions (settings the lesson cannot use,
//! which the prompt builder leaves out).
//!
//! Computed from the draft alone on every change, so a notice disappears as
//! soon as its cause does; each carries the one edit that resolves it.
//!
//! It lives beside its page, not in `domain`: only the lesson editor's tool panel uses it
//! (pure all the same, and compiled into that page's bundle only).

use crate::domain::lesson::config::{fits_lesson, suggestions, TASK_TOOL};
use crate::domain::lesson::tools::tutor_tool;
use crate::domain::lesson::LessonDraft;

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdviceKind {
    /// Smart defaults would have changed a tool the teacher chose; the
    /// teacher decides.
    Suggestion,
    /// The configuration says something the lesson cannot use; the prompt
    /// leaves it out until it is resolved.
    Contradiction,
}

impl AdviceKind {
    /// The `data-testid` and class the panel gives the notice.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Suggestion => "suggestion",
            Self::Contradiction => "contradiction",
        }
    }
}

/// The one edit that resolves a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// Switch the tool on (as the teacher's choice).
    Enable(String),
    /// Switch the tool off (as the teacher's choice).
    Disable(String),
}

/// One notice for the tool panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// Suggestion or contradiction.
    pub kind: AdviceKind,
    /// What to show.
    pub message: String,
    /// What the notice's button does, if it has one.
    pub fix: Option<Fix>,
}

impl Fix {
    /// The button's label.
    pub fn label(&self) -> &'static str {
        match self {
            Fix::Enable(_) => "Turn on",
            Fix::Disable(_) => "Turn off",
        }
    }

    /// Makes the edit; the tool's new state counts as the teacher's choice.
    pub fn apply(&self, draft: &mut LessonDraft) {
        let (id, on) = match self {
            Fix::Enable(id) => (id, true),
            Fix::Disable(id) => (id, false),
        };
        draft.tool_configuration.set_enabled_by_teacher(id, on);
    }
}

/// Every notice for `draft`: suggestions first, then contradictions —
/// enabled tools the lesson cannot use (Task Completion without tasks,
/// review tools outside a review lesson) and instructions for all tools
/// with no tool to apply them to. Empty means the configuration and the
/// lesson agree.
pub fn advice(draft: &LessonDraft) -> Vec<Advice> {
    let facts = draft.facts();
    let config = &draft.tool_configuration;
    let mut list: Vec<Advice> = suggestions(config, facts)
        .into_iter()
        .map(|s| Advice {
            kind: AdviceKind::Suggestion,
            message: s.message,
            fix: Some(Fix::Enable(s.tool_id)),
        })
        .collect();
    let enabled = config.enabled_in_catalogue_order();
    for tool in &enabled {
        if fits_lesson(&tool.tool_id, facts) {
            continue;
        }
        let name = tutor_tool(&tool.tool_id).map_or(tool.tool_id.as_str(), |t| t.name);
        let why = if tool.tool_id == TASK_TOOL {
            "the lesson has no tasks"
        } else if !facts.is_review {
            "this is not a review lesson"
        } else {
            "the lesson has no review items"
        };
        list.push(Advice {
            kind: AdviceKind::Contradiction,
            message: format!("{name} is on, but {why}: it is left out of the prompt."),
            fix: Some(Fix::Disable(tool.tool_id.clone())),
        });
    }
    let any_fits = enabled.iter().any(|t| fits_lesson(&t.tool_id, facts));
    if config.global().is_some() && !any_fits {
        list.push(Advice {
            kind: AdviceKind::Contradiction,
            message:
                "The instructions for all tools are left out of the prompt: no tool is enabled."
                    .into(),
            fix: None,
        });
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::config::Preset;
    use crate::domain::lesson::LessonTask;
    use crate::ui::lessons::edit::use_preset;

    fn with_task(mut draft: LessonDraft) -> LessonDraft {
        draft.tasks.push(LessonTask {
            id: "greet".into(),
            text: "Greet".into(),
        });
        draft
    }

    fn kinds(list: &[Advice]) -> Vec<(AdviceKind, Option<Fix>)> {
        list.iter().map(|a| (a.kind, a.fix.clone())).collect()
    }

    #[test]
    fn a_new_lesson_gets_no_advice() {
        assert!(advice(&LessonDraft::new("Café")).is_empty());
    }

    #[test]
    fn task_completion_without_tasks_is_a_contradiction_fixed_by_turning_it_off() {
        let mut draft = LessonDraft::new("Café");
        use_preset(&mut draft.tool_configuration, Preset::StandardLesson);
        let list = advice(&draft);
        assert_eq!(
            kinds(&list),
            [(
                AdviceKind::Contradiction,
                Some(Fix::Disable(TASK_TOOL.into()))
            )]
        );
        assert_eq!(
            list[0].message,
            "Task Completion is on, but the lesson has no tasks: it is left out of the prompt."
        );
        list[0].fix.as_ref().unwrap().apply(&mut draft);
        assert!(advice(&draft).is_empty());
        assert!(!draft.tool_configuration.is_enabled(TASK_TOOL));
    }

    #[test]
    fn review_tools_on_a_plain_lesson_are_contradictions() {
        let mut draft = LessonDraft::new("Café");
        use_preset(&mut draft.tool_configuration, Preset::ReviewLesson);
        let list = advice(&draft);
        assert_eq!(list.len(), 2);
        assert!(list[0].message.starts_with("Mastery Marking"));
        assert!(list[1].message.contains("not a review lesson"));
        draft.review = true;
        let list = advice(&draft);
        assert_eq!(list.len(), 2, "a review lesson without items");
        assert!(list[0].message.contains("the lesson has no review items"));
        draft
            .review_items
            .push(crate::domain::lesson::review::ReviewItem {
                id: "fui".into(),
                text: "Ayer fui al mercado".into(),
                audio: None,
            });
        assert!(advice(&draft).is_empty());
    }

    #[test]
    fn a_preset_without_task_completion_on_a_lesson_with_tasks_suggests_it() {
        let mut draft = with_task(LessonDraft::new("Café"));
        use_preset(&mut draft.tool_configuration, Preset::NoTracking);
        let list = advice(&draft);
        assert_eq!(
            kinds(&list),
            [(AdviceKind::Suggestion, Some(Fix::Enable(TASK_TOOL.into())))]
        );
        assert_eq!(
            list[0].message,
            "This lesson has tasks, but Task Completion is off."
        );
        list[0].fix.as_ref().unwrap().apply(&mut draft);
        assert!(draft.tool_configuration.is_enabled(TASK_TOOL));
        assert!(advice(&draft).is_empty());
    }

    #[test]
    fn global_instructions_with_no_tool_are_a_contradiction_without_a_button() {
        let mut draft = LessonDraft::new("Café");
        use_preset(&mut draft.tool_configuration, Preset::NoTracking);
        assert!(advice(&draft).is_empty());
        draft.tool_configuration.global_instructions = Some("Be brief.".into());
        assert_eq!(kinds(&advice(&draft)), [(AdviceKind::Contradiction, None)]);
        draft.tool_configuration.global_instructions = Some("   ".into());
        assert!(advice(&draft).is_empty());
    }

    #[test]
    fn kinds_have_their_testids() {
        assert_eq!(AdviceKind::Suggestion.as_str(), "suggestion");
        assert_eq!(AdviceKind::Contradiction.as_str(), "contradiction");
        assert_eq!(Fix::Enable("x".into()).label(), "Turn on");
        assert_eq!(Fix::Disable("x".into()).label(), "Turn off");
    }
}
