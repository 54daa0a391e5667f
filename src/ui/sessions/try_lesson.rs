//! `/lessons/{id}/try`, "Try this lesson" (linked from the lesson editor):
//! the teacher opens a trial of the saved lesson (`POST /api/lessons/{id}/trials`, the student's name
//! optional), types as the student and watches the tutor answer, call its
//! tools and move the progress in the live visualiser beside the chat
//! (`ui::sessions::try_it`). Its own page in the sessions bundle, with
//! the visualiser: the editor's bundle need not carry them, and the
//! editor's draft is not involved — a trial runs what was saved.

use crate::api::lessons::get_lesson;
use crate::error::ApiError;
use crate::ui::components::{fetched, Loaded};
use crate::ui::sessions::try_it::TryIt;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// `/lessons/{id}/try`: the lesson is looked up first, as the editor does
/// (`get_lesson`: another teacher's lesson, or none, is "not found" here
/// too, before anything is typed), then its id is handed to the island.
#[component]
pub fn TryLessonPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let lesson = fetched(id, |id| async move {
        let Some(id) = id else {
            return Err(ApiError::NotFound("That lesson".into()));
        };
        // The id of a lesson the teacher may try (a record is never empty).
        get_lesson(id).await.map(|lesson| Some(lesson.id))
    });
    view! {
        <Loaded
            resource=lesson
            loading="Loading lesson…"
            back=("/lessons", "Back to lessons")
            let:lesson_id
        >
            {lesson_id
                .map(|lesson_id| {
                    view! {
                        <p>
                            <a href=format!("/lessons/{lesson_id}")>"← Back to the lesson"</a>
                        </p>
                        <TryLesson lesson_id />
                    }
                })}
        </Loaded>
    }
}

/// The trial panel of lesson `lesson_id`.
#[island]
pub fn TryLesson(lesson_id: i64) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let student = RwSignal::new(String::new());
    let body = Callback::new(move |()| {
        let name = student.get_untracked().trim().to_owned();
        if name.is_empty() {
            serde_json::json!({})
        } else {
            serde_json::json!({ "student": name })
        }
    });
    view! {
        <TryIt
            title="Try this lesson"
            intro="Play the student: the tutor runs the saved lesson, and its tool calls, the tasks done, the mistakes logged and the nudges show live beside the chat. Trials are listed apart from real runs."
            open_url=format!("/api/lessons/{lesson_id}/trials")
            body
            label="Message as the student"
            hint="Say what a student would, e.g. “Hello! Can we practise ordering food?”"
        >
            <div class="field">
                <label for="try-student">"Student's name (optional)"</label>
                <input
                    id="try-student"
                    type="text"
                    data-testid="try-student"
                    prop:value=move || student.get()
                    on:input=move |ev| student.set(event_target_value(&ev))
                />
            </div>
        </TryIt>
    }
}
