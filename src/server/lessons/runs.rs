//! What the teacher sees of a lesson's runs: each tutor session that ran
//! it, with the errors its tutor logged, tasks done or not, profile facts,
//! mastered items and the summary; on the page and as a CSV file.

use crate::domain::lesson::record::LessonView;
use crate::domain::lesson::run_report::{report, LessonRunReport};
use crate::domain::time::format_utc;
use crate::server::store::lesson_outcomes;
use crate::server::{AppState, ServerError};

/// Most runs the page and the file list (the newest).
pub const LESSON_RUNS_MAX: usize = 200;

/// The newest runs of `lesson`, newest first (at most [`LESSON_RUNS_MAX`]).
pub async fn runs(
    state: &AppState,
    lesson: &LessonView,
) -> Result<Vec<LessonRunReport>, ServerError> {
    Ok(
        lesson_outcomes::runs_of_lesson(&state.db, lesson.id, LESSON_RUNS_MAX)
            .await?
            .into_iter()
            .map(|(run, outcomes)| report(run, &lesson.draft, outcomes))
            .collect(),
    )
}

/// A cell a spreadsheet will not run as a formula: text starting with
/// `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'` (what the
/// student said is the student's, not ours to execute).
fn cell(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    }
}

/// The CSV file of `runs`: one row per run, lists joined with "; ".
pub fn csv(runs: &[LessonRunReport]) -> Result<String, ServerError> {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    let fail = |e: ::csv::Error| ServerError::Config(format!("writing CSV: {e}"));
    out.write_record([
        "session",
        "student",
        "started (UTC)",
        "ended (UTC)",
        "duration (min)",
        "errors",
        "errors for review",
        "tasks done",
        "tasks",
        "profile facts",
        "mastered items",
        "summary",
        "did well",
        "work on",
        "stars",
        "trial",
    ])
    .map_err(fail)?;
    for run in runs {
        let errors: Vec<String> = run
            .errors
            .iter()
            .map(|e| {
                format!(
                    "{} → {} ({}, severity {})",
                    e.student_said, e.correct_form, e.error_type, e.severity
                )
            })
            .collect();
        let tasks: Vec<String> = run
            .tasks
            .iter()
            .map(|t| format!("{} {}", if t.done { "✓" } else { "✗" }, t.task.text))
            .collect();
        let facts: Vec<String> = run
            .facts
            .iter()
            .map(|f| format!("{}: {}", f.category, f.value))
            .collect();
        let mastered: Vec<String> = run
            .mastered
            .iter()
            .map(|m| m.text.clone().unwrap_or_else(|| m.item_id.clone()))
            .collect();
        let summary = run.summary.as_ref();
        let record = [
            run.session_id.clone(),
            run.student.clone().unwrap_or_default(),
            format_utc(run.started_at),
            run.ended_at.map(format_utc).unwrap_or_default(),
            format!("{:.1}", run.duration_seconds as f64 / 60.0),
            run.errors.len().to_string(),
            errors.join("; "),
            format!(
                "{}/{}",
                run.tasks.iter().filter(|t| t.done).count(),
                run.tasks.len()
            ),
            tasks.join("; "),
            facts.join("; "),
            mastered.join("; "),
            summary.map(|s| s.summary.clone()).unwrap_or_default(),
            summary.map(|s| s.strengths.join("; ")).unwrap_or_default(),
            summary
                .map(|s| s.areas_to_improve.join("; "))
                .unwrap_or_default(),
            summary
                .and_then(|s| s.stars)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            if run.trial { "yes" } else { "" }.to_owned(),
        ];
        out.write_record(record.iter().map(|c| cell(c)))
            .map_err(fail)?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| ServerError::Config(format!("writing CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| ServerError::Config(format!("writing CSV: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::outcome::{LessonSummary, LoggedError};

    #[test]
    fn the_csv_quotes_and_defuses_what_students_said() {
        let run = LessonRunReport {
            session_id: "s1".into(),
            student: Some("=HYPERLINK(\"x\")".into()),
            started_at: 0,
            ended_at: Some(600),
            trial: true,
            duration_seconds: 600,
            errors: vec![LoggedError {
                error_type: "grammar".into(),
                student_said: "yo soy, \"hambre\"".into(),
                correct_form: "tengo hambre".into(),
                severity: 3,
                explanation: None,
            }],
            tasks: vec![],
            facts: vec![],
            mastered: vec![],
            summary: Some(LessonSummary {
                summary: "Good".into(),
                strengths: vec!["a".into(), "b".into()],
                areas_to_improve: vec![],
                next_steps: vec![],
                stars: Some(4),
            }),
        };
        let text = csv(&[run]).unwrap();
        let mut lines = text.lines();
        assert!(lines.next().unwrap().starts_with("session,student,"));
        let row = lines.next().unwrap();
        assert!(
            row.starts_with("s1,\"'=HYPERLINK(\"\"x\"\")\",1970-01-01 00:00 UTC,"),
            "{row}"
        );
        assert!(
            row.contains("\"yo soy, \"\"hambre\"\" → tengo hambre (grammar, severity 3)\""),
            "{row}"
        );
        assert!(row.ends_with(",Good,a; b,,4,yes"), "{row}");
    }
}
