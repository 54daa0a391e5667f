//! `/lessons`: the lessons the user may edit, a form to start one,
//! duplicate (opening the copy), and delete with a confirmation in place.

use crate::api::lessons::{list_lessons, CreateLesson, DeleteLesson, DuplicateLesson};
use crate::domain::lesson::record::LessonSummary;
use crate::domain::lesson::tools::TUTOR_TOOLS;
use crate::domain::lesson::MAX_TITLE_CHARS;
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::ui::auth::{signed_in_admin, RequireRole};
use crate::ui::components::{fetched, CreateForm, Loaded};
use crate::ui::current;
use leptos::prelude::*;

/// The page: teachers and admins.
#[component]
pub fn LessonsPage() -> impl IntoView {
    view! {
        <RequireRole role=Role::Teacher>
            <LessonList admin=signed_in_admin() />
        </RequireRole>
    }
}

/// The heading with the create form, then the table (with a Teacher column
/// for admins, who see everyone's lessons).
#[island]
fn LessonList(admin: bool) -> impl IntoView {
    let is_admin = move || admin;
    let create = ServerAction::<CreateLesson>::new();
    let delete = ServerAction::<DeleteLesson>::new();
    let duplicate = ServerAction::<DuplicateLesson>::new();
    let duplicate_result = duplicate.value();
    Effect::new(move |_| {
        if let Some(Ok(copy)) = current(&duplicate_result) {
            crate::ui::auth::go_to(&format!("/lessons/{copy}"));
        }
    });
    // Handles taken once, read with `try_get`/`current`: the closures below
    // can run once more after the page is gone (see `current`).
    let (created, deleted) = (create.version(), delete.version());
    let (create_result, delete_result) = (create.value(), delete.value());
    let lessons = fetched(
        move || (created.try_get(), deleted.try_get()),
        |_| list_lessons(),
    );
    let confirming = RwSignal::new(None::<i64>);
    let create_error = move || current(&create_result).and_then(Result::err);
    let delete_error = move || current(&delete_result).and_then(Result::err);
    let duplicate_error = move || current(&duplicate_result).and_then(Result::err);
    view! {
        <section class="page-head split">
            <div>
                <h1>"Lessons"</h1>
                <p class="muted">
                    "Each lesson keeps its conversation prompt, its tool configuration and the system's trigger templates apart; the tutor's prompt is assembled from them at run time."
                </p>
            </div>
            <CreateForm
                action=create
                name="title"
                label="New lesson title"
                maxlength=MAX_TITLE_CHARS
                button="New lesson"
            />
        </section>
        {move || create_error().map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })}
        {move || delete_error().map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })}
        {move || duplicate_error().map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })}
        <Loaded
            resource=lessons
            loading="Loading lessons…"
            empty=|| {
                view! {
                    <section class="panel empty">
                        <p>"No lessons yet. Give your first one a title above."</p>
                    </section>
                }
            }
            let:list
        >
            {
                let admin = is_admin();
                view! {
                    <section class="panel">
                        <table class="table" data-testid="lesson-list">
                            <thead>
                                <tr>
                                    <th>"Lesson"</th>
                                    {admin.then(|| view! { <th>"Teacher"</th> })}
                                    <th>"Level"</th>
                                    <th>"Tasks"</th>
                                    <th>"Tools"</th>
                                    <th>"Changed"</th>
                                    <th></th>
                                </tr>
                            </thead>
                            <tbody>
                                <For each=move || list.clone() key=|l| (l.id, l.version) let:lesson>
                                    <LessonRow lesson admin confirming delete duplicate />
                                </For>
                            </tbody>
                        </table>
                    </section>
                }
            }
        </Loaded>
    }
}

/// One lesson: title (with a review badge), owner for admins, level, counts,
/// when it changed, Duplicate, and Delete, which asks in place before
/// deleting.
#[component]
fn LessonRow(
    lesson: LessonSummary,
    admin: bool,
    confirming: RwSignal<Option<i64>>,
    delete: ServerAction<DeleteLesson>,
    duplicate: ServerAction<DuplicateLesson>,
) -> impl IntoView {
    let id = lesson.id;
    let version = lesson.version;
    let title = lesson.title.clone();
    view! {
        <tr data-lesson=id>
            <td>
                <a href=format!("/lessons/{id}") class="strong">
                    {lesson.title.clone()}
                </a>
                {lesson.review.then(|| view! { <span class="badge">"review"</span> })}
            </td>
            {admin.then(|| view! { <td>{lesson.owner_name.clone()}</td> })}
            <td>{lesson.level.map(|l| l.to_string()).unwrap_or_else(|| "—".into())}</td>
            <td>{lesson.task_count}</td>
            <td>{format!("{}/{}", lesson.tools_enabled, TUTOR_TOOLS.len())}</td>
            <td class="muted">{format_utc(lesson.updated_at)}</td>
            <td class="actions">
                <Show
                    when=move || confirming.get() == Some(id)
                    fallback=move || {
                        view! {
                            <button
                                type="button"
                                class="button ghost small"
                                disabled=move || duplicate.pending().try_get().unwrap_or(true)
                                on:click=move |_| {
                                    duplicate.dispatch(DuplicateLesson { id });
                                }
                            >
                                "Duplicate"
                            </button>
                            <button
                                type="button"
                                class="button ghost small danger"
                                on:click=move |_| confirming.set(Some(id))
                            >
                                "Delete"
                            </button>
                        }
                    }
                >
                    <span class="confirm" role="alertdialog">
                        {format!("Delete “{title}”? ")}
                        <button
                            type="button"
                            class="button small danger-solid"
                            on:click=move |_| {
                                delete.dispatch(DeleteLesson { id, version });
                                confirming.set(None);
                            }
                        >
                            "Yes, delete"
                        </button>
                        <button
                            type="button"
                            class="button ghost small"
                            on:click=move |_| confirming.set(None)
                        >
                            "Cancel"
                        </button>
                    </span>
                </Show>
            </td>
        </tr>
    }
}
