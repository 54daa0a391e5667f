//! `/lessons/{id}/try`, "Try this lesson" (linked from the lesson editor):
//! the teacher opens a trial of the saved lesson (`POST /api/lessons/{id}/trials`, the student's name
//! optional), types as the student and watches the tutor answer, call its
//! tools and move the progress in the live visualiser beside the chat
//! (`ui::sessions::try_it`). Its own page in the sessions bundle, with
//! the visualiser: the editor's bundle need not carry them, and the
//! editor's draft is not involved — a trial runs what was saved.

use crate::ui::sessions::try_it::TryIt;
use leptos::prelude::*;

/// `/lessons/{id}/try`: the page reads the lesson's id once and hands it
/// to its island (the API refuses a lesson the teacher may not try).
#[component]
pub fn TryLessonPage() -> impl IntoView {
    let raw = crate::ui::route_param("id");
    match raw.parse::<i64>() {
        Ok(lesson_id) => view! {
            <p><a href=format!("/lessons/{lesson_id}")>"← Back to the lesson"</a></p>
            <TryLesson lesson_id />
        }
        .into_any(),
        Err(_) => {
            view! { <p class="error" role="alert">"That is not a lesson's address."</p> }.into_any()
        }
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
