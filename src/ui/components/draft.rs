//! `<DraftArea>`: a text box over a saved value — a step's prompt, a
//! trigger's filter rules — that follows saves made elsewhere (another
//! admin, the workflow agent) until the user starts typing, and stays
//! marked as changed until it is saved.

use leptos::prelude::*;

/// The text being edited and whether it differs from what was saved.
#[derive(Clone, Copy)]
pub struct Draft {
    /// What the box shows.
    pub text: RwSignal<String>,
    /// The user typed since the last save.
    pub dirty: RwSignal<bool>,
}

impl Draft {
    /// A draft of `saved`: its value now, then each new saved value while
    /// the user has not typed.
    pub fn following(saved: impl Fn() -> String + Send + Sync + 'static) -> Self {
        let text = RwSignal::new(untrack(&saved));
        let dirty = RwSignal::new(false);
        Effect::new(move |_| {
            let now = saved();
            if !dirty.get_untracked() {
                text.set(now);
            }
        });
        Self { text, dirty }
    }

    /// The text, for saving; the box follows saved values again.
    pub fn take(self) -> String {
        self.dirty.set(false);
        self.text.get_untracked()
    }
}

/// The labelled text box of a [`Draft`].
#[component]
pub fn DraftArea(
    /// What is being edited.
    draft: Draft,
    /// The label above the box.
    label: &'static str,
    /// Its height in lines.
    rows: u32,
    /// Its `data-testid`.
    testid: &'static str,
    /// Extra classes (`mono` for JSON).
    #[prop(optional)]
    class: &'static str,
) -> impl IntoView {
    view! {
        <label class="field">
            <span>{label}</span>
            <textarea
                class=class
                rows=rows.to_string()
                data-testid=testid
                prop:value=move || draft.text.get()
                on:input=move |ev| {
                    draft.dirty.set(true);
                    draft.text.set(event_target_value(&ev));
                }
            ></textarea>
        </label>
    }
}
