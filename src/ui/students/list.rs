//! `/students`: the signed-in teacher's students (an admin: everyone's),
//! each with their runs and what waits in their review queue.

use crate::api::students::list_students;
use crate::domain::student::StudentSummary;
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::components::{fetched, Loaded, LocalTime};
use leptos::prelude::*;

/// The page.
#[component]
pub fn StudentsPage() -> impl IntoView {
    view! { <StudentsIsland /> }
}

/// The page's interactive part, hydrated on its own.
#[island]
fn StudentsIsland() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let students = fetched(|| (), |_| list_students());
    view! {
        <RequireRole role=Role::Teacher>
            <section class="page-head">
                <h1>"Students"</h1>
                <p class="muted small">
                    "A student's record is made when a lesson is opened for them by name (or added over the API). Errors the tutor logs come back in their review lessons."
                </p>
            </section>
            <Loaded
                resource=students
                loading="Loading students…"
                empty=|| view! { <p class="muted" data-testid="no-students">"No students yet."</p> }
                let:list
            >
                <StudentTable list />
            </Loaded>
        </RequireRole>
    }
}

/// The students, one row each.
#[component]
fn StudentTable(list: Vec<StudentSummary>) -> impl IntoView {
    view! {
        <table class="table" data-testid="students">
            <thead>
                <tr>
                    <th>"Student"</th>
                    <th>"Teacher"</th>
                    <th>"Runs"</th>
                    <th>"Due for review"</th>
                    <th>"In the queue"</th>
                    <th>"Last run"</th>
                </tr>
            </thead>
            <tbody>
                <For each=move || list.clone() key=|s| s.student.id let:s>
                    <tr data-student=s.student.id>
                        <td>
                            <a href=format!("/students/{}", s.student.id)>{s.student.name.clone()}</a>
                            {s.student.pseudonymous.then(|| view! { <span class="badge">"code"</span> })}
                        </td>
                        <td>{s.teacher_name.clone()}</td>
                        <td>{s.runs}</td>
                        <td data-testid="due">{s.due}</td>
                        <td>{s.queued}</td>
                        <td>
                            {match s.last_run_at {
                                Some(at) => view! { <LocalTime ms=at * 1000 /> }.into_any(),
                                None => view! { <span class="muted">"—"</span> }.into_any(),
                            }}
                        </td>
                    </tr>
                </For>
            </tbody>
        </table>
    }
}
