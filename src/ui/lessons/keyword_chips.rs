//! A keyword trigger's topics as chips: type a topic and press Enter (or
//! a comma) to add it, × to remove one.

use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::LessonDraft;
use crate::ui::lessons::edit::{edit_keywords, keywords_of};
use crate::ui::lessons::tool_row::change_tool;
use leptos::prelude::*;

/// Keyword chips: type a topic and press Enter to add, × to remove.
#[component]
pub fn KeywordChips(
    id: &'static str,
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    config: Memo<ToolConfig>,
) -> impl IntoView {
    let typed = RwSignal::new(String::new());
    let keywords = move || config.with(|c| keywords_of(&c.trigger_condition));
    let set_keywords = move |change: &dyn Fn(&mut Vec<String>)| {
        change_tool(draft, notices, id, |t| edit_keywords(t, change));
    };
    view! {
        <div class="chips" data-testid=format!("chips-{id}")>
            {move || {
                keywords()
                    .into_iter()
                    .enumerate()
                    .map(|(i, k)| {
                        view! {
                            <span class="chip">
                                {k.clone()}
                                <button
                                    type="button"
                                    aria-label=format!("Remove {k}")
                                    on:click=move |_| set_keywords(&|list| {
                                        if i < list.len() {
                                            list.remove(i);
                                        }
                                    })
                                >
                                    "×"
                                </button>
                            </span>
                        }
                    })
                    .collect_view()
            }}
            <input
                type="text"
                placeholder="Topic, then Enter"
                aria-label="Add keyword"
                data-testid=format!("keyword-input-{id}")
                prop:value=move || typed.get()
                on:input=move |ev| typed.set(event_target_value(&ev))
                on:keydown=move |ev| {
                    if ev.key() == "Enter" || ev.key() == "," {
                        ev.prevent_default();
                        // A comma separates topics however it got there
                        // (typed, or pasted as "uno, dos"): one chip each.
                        let text = typed.get_untracked();
                        let words: Vec<String> = text
                            .split(',')
                            .map(str::trim)
                            .filter(|w| !w.is_empty())
                            .map(str::to_owned)
                            .collect();
                        if !words.is_empty() {
                            set_keywords(&|list| list.extend(words.iter().cloned()));
                            typed.set(String::new());
                        }
                    }
                }
            />
        </div>
    }
    .into_any()
}
