//! `/students/{id}`: one student — their runs across lessons (each linked
//! to its timeline), the errors logged, facts learnt, tasks done, items
//! mastered, and their review queue with its due dates.

use crate::api::students::get_student;
use crate::domain::review_queue::{QueueItem, BOXES};
use crate::domain::student_view::StudentView;
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::{fetched, Loaded, LocalTime, MaybeEmpty, StudentDataRights};
use leptos::prelude::*;

impl MaybeEmpty for StudentView {}

/// The page.
#[component]
pub fn StudentPage() -> impl IntoView {
    let id = crate::ui::route_param("id")
        .parse::<i64>()
        .unwrap_or_default();
    view! { <StudentIsland id /> }
}

/// The page's interactive part, hydrated on its own.
#[island]
fn StudentIsland(id: i64) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let view = fetched(move || id, get_student);
    view! {
        <RequireRole role=Role::Teacher>
            <Loaded resource=view loading="Loading the student…" back=("/students", "Back to students") let:data>
                <Student data />
            </Loaded>
        </RequireRole>
    }
}

/// Everything about the student.
#[component]
fn Student(data: StudentView) -> impl IntoView {
    let StudentView {
        student,
        teacher_name,
        runs,
        errors,
        facts,
        tasks,
        mastered,
        queue,
        graduated,
    } = data;
    view! {
        <section class="page-head">
            <a href="/students" class="muted small">"← Students"</a>
            <h1 data-testid="student-name">{student.name.clone()}</h1>
            <p class="muted small">
                {format!(
                    "{}Student of {teacher_name}. {} runs; {} items in the review queue.",
                    if student.pseudonymous { "Pseudonymous code. " } else { "" },
                    runs.len(),
                    queue.len(),
                )}
            </p>
        </section>
        <section class="panel" data-testid="student-queue">
            <h2>"Review queue"</h2>
            <p class="muted small">
                {format!(
                    "Leitner boxes: an item is due at once, then after 2, 4, 8 and 16 days each time the tutor marks it mastered in a review lesson; mastered in box {BOXES} it leaves the queue. Missed in a review lesson, it goes back to box 1."
                )}
            </p>
            <QueueList items=queue empty="Nothing in the queue." />
            {(!graduated.is_empty()).then(|| view! {
                <h3>"Left the queue (mastered)"</h3>
                <QueueList items=graduated empty="" />
            })}
        </section>
        <section class="panel" data-testid="student-runs">
            <h2>"Runs"</h2>
            {runs.is_empty().then(|| view! { <p class="muted small">"No runs yet."</p> })}
            <ul class="plain">
                <For each=move || runs.clone() key=|r| r.session_id.clone() let:run>
                    <li data-session=run.session_id.clone()>
                        <a href=format!("/sessions/{}", run.session_id)>
                            {run.lesson_title.clone().unwrap_or_else(|| "A deleted lesson".into())}
                        </a>
                        " · "
                        <LocalTime ms=run.started_at * 1000 />
                        <span class="muted small">
                            {format!(
                                " · {} errors · {} tasks · {} mastered{}",
                                run.errors,
                                run.tasks,
                                run.mastered,
                                if run.ended_at.is_none() { " · still open" } else { "" },
                            )}
                        </span>
                    </li>
                </For>
            </ul>
        </section>
        <div class="run-grid">
            <section class="panel" data-testid="student-errors">
                <h2>{format!("Errors logged ({})", errors.len())}</h2>
                <ul class="plain">
                    <For each=move || errors.clone() key=|e| (e.session_id.clone(), e.at, e.value.student_said.clone()) let:e>
                        <li>
                            <s>{e.value.student_said.clone()}</s>
                            " → "
                            <strong>{e.value.correct_form.clone()}</strong>
                            <span class="muted small">{format!(" {} · {}", e.value.error_type, e.lesson_title.clone().unwrap_or_default())}</span>
                        </li>
                    </For>
                </ul>
            </section>
            <section class="panel" data-testid="student-facts">
                <h2>"Facts learnt"</h2>
                <ul class="plain">
                    <For each=move || facts.clone() key=|f| (f.category.clone(), f.value.clone()) let:f>
                        <li>{format!("{}: {}", f.category.replace('_', " "), f.value)}</li>
                    </For>
                </ul>
            </section>
            <section class="panel" data-testid="student-tasks">
                <h2>{format!("Tasks done ({})", tasks.len())}</h2>
                <ul class="plain">
                    <For each=move || tasks.clone() key=|t| (t.session_id.clone(), t.value.task_id.clone()) let:t>
                        <li>{format!("{} · {}", t.value.task_id, t.lesson_title.clone().unwrap_or_default())}</li>
                    </For>
                </ul>
            </section>
            <section class="panel" data-testid="student-mastered">
                <h2>{format!("Items mastered ({})", mastered.len())}</h2>
                <ul class="plain">
                    <For each=move || mastered.clone() key=|m| (m.session_id.clone(), m.value.item_id.clone()) let:m>
                        <li>{format!("{} · {}", m.value.item_id, m.lesson_title.clone().unwrap_or_default())}</li>
                    </For>
                </ul>
            </section>
        </div>
        <StudentDataRights student_id=student.id name=student.name.clone() after_delete="/students" />
    }
}

/// Queue items, each with its box and when it is due.
#[component]
fn QueueList(items: Vec<QueueItem>, empty: &'static str) -> impl IntoView {
    let none = items.is_empty() && !empty.is_empty();
    view! {
        {none.then(|| view! { <p class="muted small">{empty}</p> })}
        <ul class="plain">
            <For each=move || items.clone() key=|i| i.id let:item>
                <li data-item=item.offer_id()>
                    <s>{item.student_said.clone()}</s>
                    " → "
                    <strong>{item.correct_form.clone()}</strong>
                    <span class="muted small">
                        {format!(" {} · box {} of {BOXES} · ", item.error_type, item.schedule.leitner_box)}
                        {match item.schedule.mastered_at {
                            Some(at) => view! { "mastered " <LocalTime ms=at * 1000 /> }.into_any(),
                            None => view! { "due " <LocalTime ms=item.schedule.due_at * 1000 /> }.into_any(),
                        }}
                    </span>
                </li>
            </For>
        </ul>
    }
}
