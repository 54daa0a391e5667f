//! A review lesson's items: the phrases to practise again, each with the
//! id the tutor passes to the review tools and, optionally, the student's
//! earlier recording. Shown only for review lessons.

use crate::domain::error::{problem_for, FieldError};
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::LessonDraft;
use crate::ui::components::FieldProblem;
use crate::ui::lessons::edit::{add_review_item, ids_changed};
use crate::ui::lessons::editor::apply;
use leptos::prelude::*;

/// The item list and the form that adds one.
#[component]
pub fn ReviewItems(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let audio = RwSignal::new(String::new());
    // Redrawn when items come, go or move (`ids_changed`).
    let items =
        Memo::new_with_compare(move |_| draft.with(|d| d.review_items.clone()), ids_changed);
    let add = move || {
        let (t, a) = (text.get_untracked(), audio.get_untracked());
        if t.trim().is_empty() {
            return;
        }
        apply(draft, notices, |d| add_review_item(d, &t, &a));
        text.set(String::new());
        audio.set(String::new());
    };
    let on_enter = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" {
            ev.prevent_default();
            add();
        }
    };
    view! {
        <Show when=move || draft.with(|d| d.review)>
            <div class="field" data-testid="review-items">
                <span class="label">"Review items"</span>
                <p class="muted">
                    "The tutor gets each item's id, to mark it mastered or play the student's recording."
                </p>
                <ol class="tasks">
                    // Rebuilt whole on every change: rows are addressed by
                    // position (remove), not by identity.
                    {move || {
                        items
                            .get()
                            .into_iter()
                            .enumerate()
                            .map(|(index, item)| {
                                view! { <ItemRow draft notices problems index item /> }
                            })
                            .collect_view()
                    }}
                </ol>
                <div class="inline-form">
                    <input
                        type="text"
                        placeholder="Phrase, e.g. Ayer fui al mercado"
                        aria-label="New review item"
                        data-testid="new-review-item"
                        prop:value=move || text.get()
                        on:input=move |ev| text.set(event_target_value(&ev))
                        on:keydown=on_enter
                    />
                    <input
                        type="text"
                        placeholder="Recording (optional URL or key)"
                        aria-label="New review item recording"
                        data-testid="new-review-audio"
                        prop:value=move || audio.get()
                        on:input=move |ev| audio.set(event_target_value(&ev))
                        on:keydown=on_enter
                    />
                    <button type="button" class="button" on:click=move |_| add()>
                        "Add item"
                    </button>
                </div>
                <FieldProblem message=move || problems.with(|p| problem_for(p, "reviewItems", false)) />
            </div>
        </Show>
    }
    .into_any()
}

/// One item: its text, its id, its recording reference, remove, and the
/// first problem with it.
#[component]
fn ItemRow(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    problems: Memo<Vec<FieldError>>,
    index: usize,
    item: ReviewItem,
) -> impl IntoView {
    let field = format!("reviewItems[{index}]");
    let edit = move |change: Box<dyn FnOnce(&mut ReviewItem)>| {
        apply(draft, notices, |d| {
            if let Some(item) = d.review_items.get_mut(index) {
                change(item);
            }
        })
    };
    view! {
        <li class="task review-item">
            <input
                type="text"
                aria-label=format!("Review item {}", index + 1)
                value=item.text.clone()
                on:input=move |ev| {
                    let text = event_target_value(&ev);
                    edit(Box::new(move |i| i.text = text))
                }
            />
            <code class="task-id" title="The id the tutor passes">
                {item.id.clone()}
            </code>
            <input
                type="text"
                class="audio-ref"
                placeholder="Recording"
                aria-label=format!("Recording of review item {}", index + 1)
                value=item.audio.clone().unwrap_or_default()
                on:input=move |ev| {
                    let raw = event_target_value(&ev);
                    edit(
                        Box::new(move |i| {
                            let raw = raw.trim();
                            i.audio = (!raw.is_empty()).then(|| raw.to_owned());
                        }),
                    )
                }
            />
            <button
                type="button"
                class="button ghost small"
                aria-label=format!("Remove review item {}", index + 1)
                on:click=move |_| {
                    apply(
                        draft,
                        notices,
                        |d| {
                            d.review_items.remove(index);
                        },
                    )
                }
            >
                "×"
            </button>
            <FieldProblem message=move || problems.with(|p| problem_for(p, &field, true)) />
        </li>
    }
}
