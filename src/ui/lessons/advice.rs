//! Suggestions and contradictions under the preset menu: what smart
//! defaults would change but may not (the teacher chose), and settings the
//! lesson cannot use (left out of the prompt). Each has the button that
//! resolves it; the list follows the draft, so a notice goes as soon as its
//! cause does.

use crate::domain::lesson::LessonDraft;
use crate::ui::lessons::advice_rules::advice;
use crate::ui::lessons::editor::apply;
use leptos::prelude::*;

/// The notices for the current draft, each with its fix button.
#[component]
pub fn AdviceList(draft: RwSignal<LessonDraft>, notices: RwSignal<Vec<String>>) -> impl IntoView {
    let list = Memo::new(move |_| draft.with(advice));
    move || {
        let list = list.get();
        (!list.is_empty()).then(|| {
            view! {
                <div class="advice" role="status" data-testid="advice">
                    {list
                        .into_iter()
                        .map(|item| {
                            let kind = item.kind.as_str();
                            let fix = item.fix.clone();
                            view! {
                                <p class=format!("advice-{kind}") data-testid=kind>
                                    <span>{item.message.clone()}</span>
                                    {fix
                                        .map(|fix| {
                                            let label = fix.label();
                                            view! {
                                                <button
                                                    type="button"
                                                    class="button ghost small"
                                                    on:click=move |_| {
                                                        let fix = fix.clone();
                                                        apply(draft, notices, move |d| fix.apply(d));
                                                    }
                                                >
                                                    {label}
                                                </button>
                                            }
                                        })}
                                </p>
                            }
                        })
                        .collect_view()}
                </div>
            }
        })
    }
}
