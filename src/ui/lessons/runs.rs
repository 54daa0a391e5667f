//! `/lessons/{id}/sessions`: what happened each time the lesson ran — who,
//! when, how long, the errors the tutor logged for review, tasks done or
//! not, what it learnt about the student, mastered items and the summary —
//! with the CSV download of the same. Trials (the teacher trying the
//! lesson from its editor) are listed apart, each labelled "Trial", so
//! they are never read as a student's run.

use crate::api::lessons::{lesson_runs, LessonRunsPage};
use crate::domain::lesson::run_report::LessonRunReport;
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::LocalTime;
use crate::ui::components::{fetched, Loaded, MaybeEmpty, Status, StatusIcon};
use leptos::prelude::*;

impl MaybeEmpty for LessonRunsPage {}

/// The page: the lesson's runs, newest first.
#[component]
pub fn LessonRunsPage() -> impl IntoView {
    let id = crate::ui::route_param("id")
        .parse::<i64>()
        .unwrap_or_default();
    view! { <LessonRunsIsland id /> }
}

/// The page's interactive part, hydrated on its own.
#[island]
fn LessonRunsIsland(id: i64) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let page = fetched(move || id, lesson_runs);
    view! {
        <RequireRole role=Role::Teacher>
            <Loaded resource=page loading="Loading sessions…" back=("/lessons", "Back to lessons") let:data>
                <Runs data />
            </Loaded>
        </RequireRole>
    }
}

/// The runs, real ones first, then the trials.
#[component]
fn Runs(data: LessonRunsPage) -> impl IntoView {
    let id = data.lesson_id;
    let (trials, runs): (Vec<_>, Vec<_>) = data.runs.into_iter().partition(|r| r.trial);
    let count = runs.len();
    let has_trials = !trials.is_empty();
    view! {
        <section class="page-head split">
            <div>
                <a href=format!("/lessons/{id}") class="muted small">
                    "← Lesson"
                </a>
                <h1>{format!("Sessions of “{}”", data.title)}</h1>
                <p class="muted small">
                    {match count {
                        0 => "This lesson has not run yet.".to_owned(),
                        1 => "1 session, newest first.".to_owned(),
                        n => format!("{n} sessions, newest first."),
                    }}
                    {match trials.len() {
                        0 => String::new(),
                        1 => " 1 trial, below.".to_owned(),
                        n => format!(" {n} trials, below."),
                    }}
                </p>
            </div>
            <a
                class="button"
                href=format!("/lessons/{id}/sessions.csv")
                download=format!("lesson-{id}-sessions.csv")
                rel="external"
                data-testid="runs-csv"
            >
                "Download CSV"
            </a>
        </section>
        <div class="runs" data-testid="runs">
            <For each=move || runs.clone() key=|run| run.session_id.clone() let:run>
                <RunCard run />
            </For>
        </div>
        {has_trials.then(|| view! {
            <h2 class="runs-apart">"Trials"</h2>
            <p class="muted small">"Sessions opened with “Try this lesson”: the teacher played the student."</p>
            <div class="runs" data-testid="trials">
                <For each=move || trials.clone() key=|run| run.session_id.clone() let:run>
                    <RunCard run />
                </For>
            </div>
        })}
    }
    .into_any()
}

/// One run of the lesson.
#[component]
fn RunCard(run: LessonRunReport) -> impl IntoView {
    let minutes = run.duration_seconds / 60;
    let seconds = run.duration_seconds % 60;
    let length = format!(
        " · {minutes} min {seconds:02} s{}",
        if run.ended_at.is_none() {
            " · still open"
        } else {
            ""
        }
    );
    let done = run.tasks.iter().filter(|t| t.done).count();
    let total = run.tasks.len();
    view! {
        <article class="panel run" data-session=run.session_id.clone()>
            <header class="run-head">
                <h2>{run.student.clone().unwrap_or_else(|| "Unnamed student".into())}</h2>
                {run.trial.then(|| view! { <span class="badge" data-testid="trial-badge">"Trial"</span> })}
                <span class="muted small">
                    <LocalTime ms=run.started_at * 1000 />
                    {length}
                </span>
                <a class="muted small" href=format!("/sessions/{}", run.session_id)>
                    "Timeline"
                </a>
            </header>
            <div class="run-grid">
                <section data-testid="run-errors">
                    <h3>{format!("Errors for review ({})", run.errors.len())}</h3>
                    {if run.errors.is_empty() {
                        view! { <p class="muted small">"None logged."</p> }.into_any()
                    } else {
                        view! {
                            <ul class="plain">
                                {run
                                    .errors
                                    .iter()
                                    .map(|e| {
                                        view! {
                                            <li>
                                                <s>{e.student_said.clone()}</s>
                                                " → "
                                                <strong>{e.correct_form.clone()}</strong>
                                                <span class="muted small">
                                                    {format!(" {} · severity {}", e.error_type, e.severity)}
                                                </span>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }}
                </section>
                <section data-testid="run-tasks">
                    <h3>{format!("Tasks ({done}/{total})")}</h3>
                    <ul class="plain">
                        {run
                            .tasks
                            .iter()
                            .map(|t| {
                                let (class, label) = if t.done { ("task-done", "done") } else { ("task-open", "not done") };
                                view! {
                                    <li class=class data-task=t.task.id.clone()>
                                        <StatusIcon
                                            status=if t.done { Status::Passed } else { Status::Failed }
                                            text=format!("{label}: ")
                                        />
                                        {t.task.text.clone()}
                                        {t.evidence.clone().map(|e| view! { <span class="muted small">{format!(" — “{e}”")}</span> })}
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                </section>
                <section data-testid="run-facts">
                    <h3>"About the student"</h3>
                    <ul class="plain">
                        {run
                            .facts
                            .iter()
                            .map(|f| view! { <li>{format!("{}: {}", f.category.replace('_', " "), f.value)}</li> })
                            .collect_view()}
                    </ul>
                    {run.facts.is_empty().then(|| view! { <p class="muted small">"Nothing recorded."</p> })}
                    {(!run.mastered.is_empty())
                        .then(|| {
                            view! {
                                <h3>"Mastered"</h3>
                                <ul class="plain" data-testid="run-mastered">
                                    {run
                                        .mastered
                                        .iter()
                                        .map(|m| view! { <li>{m.text.clone().unwrap_or_else(|| m.item_id.clone())}</li> })
                                        .collect_view()}
                                </ul>
                            }
                        })}
                </section>
                <section data-testid="run-summary">
                    <h3>"Summary"</h3>
                    {match run.summary.clone() {
                        None => view! { <p class="muted small">"No summary was shown."</p> }.into_any(),
                        Some(s) => {
                            view! {
                                <p>{s.summary.clone()}</p>
                                {s.stars.map(|n| view! { <p class="stars" aria-label=format!("{n} of 5 stars")>{format!("{n}/5 stars")}</p> })}
                                <p class="small">
                                    <strong>"Did well: "</strong>
                                    {s.strengths.join("; ")}
                                </p>
                                <p class="small">
                                    <strong>"Work on: "</strong>
                                    {s.areas_to_improve.join("; ")}
                                </p>
                            }
                                .into_any()
                        }
                    }}
                </section>
            </div>
        </article>
    }
    .into_any()
}
