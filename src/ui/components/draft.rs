//! `<DraftArea>`: a text box over a saved value — a step's prompt, a
//! trigger's filter rules — that follows saves made elsewhere (another
//! admin, the workflow agent) until the user starts typing, and stays
//! marked as changed until it is saved. A save made elsewhere while the
//! user is typing is not hidden under their text: the box says so and shows
//! theirs, to take instead or to save over knowingly.

use leptos::prelude::*;

/// The text being edited and whether it differs from what was saved.
#[derive(Clone, Copy)]
pub struct Draft {
    /// What the box shows.
    pub text: RwSignal<String>,
    /// The user typed since the last save.
    pub dirty: RwSignal<bool>,
    /// What someone else saved while the user was typing, until the user
    /// takes it or saves their own.
    pub theirs: RwSignal<Option<String>>,
}

impl Draft {
    /// A draft of `saved`: its value now, then each new saved value while
    /// the user has not typed.
    pub fn following(saved: impl Fn() -> String + Send + Sync + 'static) -> Self {
        let text = RwSignal::new(untrack(&saved));
        let dirty = RwSignal::new(false);
        let theirs = RwSignal::new(None);
        // The saved value the box last followed: a refresh that brings the
        // same one (another part of the page changed) is no news.
        let base = StoredValue::new(text.get_untracked());
        Effect::new(move |_| {
            let now = saved();
            if base.with_value(|b| *b == now) {
                return;
            }
            base.set_value(now.clone());
            if text.with_untracked(|t| *t == now) {
                // What the box shows is what is saved now (its own save,
                // or the same text saved elsewhere): nothing to tell.
                dirty.set(false);
                theirs.set(None);
            } else if dirty.get_untracked() {
                theirs.set(Some(now));
            } else {
                text.set(now);
            }
        });
        Self {
            text,
            dirty,
            theirs,
        }
    }

    /// The text, for saving. It stays marked as changed until
    /// [`Draft::saved`] says the save went through: a refused save (a stale
    /// version) must not let the next refresh replace what was typed.
    pub fn sending(self) -> String {
        self.text.get_untracked()
    }

    /// `sent` was saved: the box follows saved values again, unless the
    /// user typed on while it was on its way.
    pub fn saved(self, sent: &str) {
        if self.text.with_untracked(|t| t == sent) {
            self.dirty.set(false);
            self.theirs.set(None);
        }
    }

    /// Drops what the user typed for what was saved elsewhere.
    fn take_theirs(self) {
        if let Some(saved) = self.theirs.get_untracked() {
            self.text.set(saved);
            self.dirty.set(false);
            self.theirs.set(None);
        }
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
        {move || {
            draft
                .theirs
                .get()
                .map(|saved| {
                    view! {
                        <div class="notice small" role="status" data-testid=format!("{testid}-theirs")>
                            <p>"Someone else saved this while you were typing. Theirs:"</p>
                            <pre>{saved}</pre>
                            <button type="button" class="small" on:click=move |_| draft.take_theirs()>
                                "Use theirs"
                            </button>
                            " or save yours to replace it."
                        </div>
                    }
                })
        }}
    }
}
