//! `<StudentDataRights>`: the "Their data" panel of a student's page —
//! download everything kept about the student as a JSON file (a plain
//! link to `GET /api/students/{id}/export`, so it works before or without
//! JavaScript), and delete the student with all their data, after a
//! second click that says what goes and that it cannot be undone.
//!
//! For the student's page to include inside its island; the server asks
//! `may_see` for both, whoever shows the panel.

use crate::api::student_data::{export_href, DeleteStudent};
use crate::ui::current;
use leptos::prelude::*;

/// The panel for student `student_id`, called `name`; once deleted it
/// says so and links to `after_delete` (the students' list).
#[component]
pub fn StudentDataRights(
    /// The student's id.
    student_id: i64,
    /// Their name or pseudonymous code, for the question.
    #[prop(into)]
    name: String,
    /// Where to go once they are deleted.
    #[prop(into)]
    after_delete: String,
) -> impl IntoView {
    let delete = ServerAction::<DeleteStudent>::new();
    let (result, pending) = (delete.value(), delete.pending());
    let confirming = RwSignal::new(false);
    let after_delete = StoredValue::new(after_delete);
    let question = StoredValue::new(format!(
        "Delete “{name}” and all their data — every session, call, outcome and review item? \
         This cannot be undone. "
    ));
    view! {
        <section class="panel" data-testid="student-data-rights">
            <h2>"Their data"</h2>
            {move || match current(&result) {
                Some(Ok(())) => {
                    view! {
                        <p class="ok" role="status" data-testid="student-deleted">
                            "Deleted, with all their data. "
                            <a href=after_delete.get_value()>"Back to the students"</a>
                        </p>
                    }
                        .into_any()
                }
                other => {
                    let problem = other
                        .and_then(Result::err)
                        .map(|e| view! { <p class="error small" role="alert">{e.to_string()}</p> });
                    view! {
                        <p>
                            <a
                                class="button ghost small"
                                href=export_href(student_id)
                                download
                                rel="external"
                                data-testid="student-export"
                            >
                                "Download their data (JSON)"
                            </a>
                            " "
                            <Show
                                when=move || confirming.get()
                                fallback=move || {
                                    view! {
                                        <button
                                            type="button"
                                            class="button ghost small danger"
                                            data-testid="student-delete"
                                            on:click=move |_| confirming.set(true)
                                        >
                                            "Delete student…"
                                        </button>
                                    }
                                }
                            >
                                <span class="confirm" role="alertdialog">
                                    {question.get_value()}
                                    <button
                                        type="button"
                                        class="button small danger-solid"
                                        data-testid="student-delete-confirm"
                                        disabled=move || pending.try_get().unwrap_or(true)
                                        on:click=move |_| {
                                            delete.dispatch(DeleteStudent { id: student_id });
                                            confirming.set(false);
                                        }
                                    >
                                        "Yes, delete"
                                    </button>
                                    <button
                                        type="button"
                                        class="button ghost small"
                                        on:click=move |_| confirming.set(false)
                                    >
                                        "Cancel"
                                    </button>
                                </span>
                            </Show>
                        </p>
                        {problem}
                    }
                        .into_any()
                }
            }}
        </section>
    }
}
