//! Narrowing the sessions list: a status (open, ended, all) and words to
//! find, matched against what a row shows and the keys behind it.
//!
//! Pure, so the list filters the sessions it already has in the browser,
//! and keeps filtering the fresh list each live update brings.
//!
//! It lives beside its page, not in `domain`: only the sessions list uses it
//! (pure all the same, and compiled into that page's bundle only).

use crate::domain::agent_session::SessionSummary;
use crate::domain::catalogue::{workflow_name, Workflow};
use crate::domain::state_labels::StateLabels;

/// Which sessions the list shows by whether they ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusFilter {
    /// Every session (the default: nothing hidden until asked).
    #[default]
    All,
    /// Only sessions still open.
    Open,
    /// Only ended sessions.
    Ended,
}

impl StatusFilter {
    /// Every choice, in the order the list offers them.
    pub const ALL: [StatusFilter; 3] = [StatusFilter::All, StatusFilter::Open, StatusFilter::Ended];

    /// The value of the choice in a form.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::All => "all",
            StatusFilter::Open => "open",
            StatusFilter::Ended => "ended",
        }
    }

    /// The words of the choice.
    pub fn label(self) -> &'static str {
        match self {
            StatusFilter::All => "All",
            StatusFilter::Open => "Open",
            StatusFilter::Ended => "Ended",
        }
    }

    /// The choice a form value names (`all` for anything else).
    pub fn parse(raw: &str) -> Self {
        match raw {
            "open" => StatusFilter::Open,
            "ended" => StatusFilter::Ended,
            _ => StatusFilter::All,
        }
    }

    /// Whether a session that has `ended` (or not) passes.
    pub fn admits(self, ended: bool) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Open => !ended,
            StatusFilter::Ended => ended,
        }
    }
}

/// The list's filter: a status and the words to find.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionFilter {
    /// As typed: whitespace-separated words, each of which must be found
    /// (case-insensitively) in the session's id, workflow (id or name),
    /// step (key or description) or student.
    pub text: String,
    /// Open, ended or all.
    pub status: StatusFilter,
}

impl SessionFilter {
    /// Whether `session` passes, reading its workflow and step as the list
    /// shows them (`workflows`, `labels`) as well as by key.
    pub fn matches(
        &self,
        session: &SessionSummary,
        workflows: &[Workflow],
        labels: &StateLabels,
    ) -> bool {
        if !self.status.admits(session.ended) {
            return false;
        }
        let words: Vec<String> = self
            .text
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return true;
        }
        let ws = &session.state;
        let haystack = [
            session.id.clone(),
            ws.current_workflow.clone(),
            workflow_name(workflows, &ws.current_workflow),
            session.context_name(workflows),
            ws.current_step.clone(),
            labels.step(&ws.current_step),
            session.student.clone().unwrap_or_default(),
            ws.agent
                .as_ref()
                .map(|a| format!("{} {}", a.vibe, a.agent))
                .unwrap_or_default(),
        ]
        .join("\n")
        .to_lowercase();
        words.iter().all(|w| haystack.contains(w.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow_state::WorkflowState;
    use crate::server::seed::catalogue::demo_workflows;

    fn session(id: &str, workflow: &str, step: &str, ended: bool) -> SessionSummary {
        let mut state = WorkflowState::start(workflow);
        state.current_step = step.into();
        SessionSummary {
            id: id.into(),
            state,
            last_activity: 0,
            created_at: 0,
            ended,
            student: None,
            started_by: None,
            trial: false,
            lesson_title: None,
        }
    }

    fn find(text: &str, status: StatusFilter, s: &SessionSummary) -> bool {
        let filter = SessionFilter {
            text: text.into(),
            status,
        };
        filter.matches(s, &demo_workflows(), &StateLabels::demo())
    }

    #[test]
    fn the_status_filter_keeps_open_ended_or_all() {
        let open = session("s1", "idv", "started", false);
        let ended = session("s2", "idv", "ended", true);
        assert!(find("", StatusFilter::All, &open) && find("", StatusFilter::All, &ended));
        assert!(find("", StatusFilter::Open, &open) && !find("", StatusFilter::Open, &ended));
        assert!(!find("", StatusFilter::Ended, &open) && find("", StatusFilter::Ended, &ended));
        for f in StatusFilter::ALL {
            assert_eq!(StatusFilter::parse(f.as_str()), f);
        }
        assert_eq!(StatusFilter::parse("nonsense"), StatusFilter::All);
    }

    #[test]
    fn words_match_ids_names_labels_and_keys_in_any_case() {
        let s = session("sabc123", "banking-master", "balance_given", false);
        for hit in [
            "ABC",
            "banking-master",
            "banking master",
            "balance_given",
            "given to the CALLER",
            "  sabc  master ",
        ] {
            assert!(find(hit, StatusFilter::All, &s), "{hit}");
        }
        for miss in ["disputes", "sabc disputes", "student"] {
            assert!(!find(miss, StatusFilter::All, &s), "{miss}");
        }
        assert!(!find("abc", StatusFilter::Ended, &s));
    }

    #[test]
    fn a_tutor_session_is_found_by_its_student() {
        let mut s = session("s9", "idv", "started", false);
        assert!(!find("maria", StatusFilter::All, &s));
        s.student = Some("Maria Lopez".into());
        assert!(find("maria", StatusFilter::All, &s));
    }

    #[test]
    fn a_tutor_session_is_found_by_its_lessons_title() {
        let mut s = session("s9", "lesson-5", "started", false);
        assert!(!find("paella", StatusFilter::All, &s));
        s.lesson_title = Some("Ordering paella".into());
        assert!(find("ordering paella", StatusFilter::All, &s));
        assert!(find("lesson-5", StatusFilter::All, &s));
        assert_eq!(s.context_name(&demo_workflows()), "Ordering paella");
    }
}
