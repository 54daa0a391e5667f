//! What a change to the bindings would do, one line per binding added or
//! removed and per label changed: shown before a restore and before an
//! import of the start-up file.

use crate::domain::bindings::BindingsDiff;
use leptos::prelude::*;

/// `heading`, then `+ tool in scope`, `− tool in scope` and
/// `~ label of check x` lines.
#[component]
pub fn DiffView(
    /// What the lines are the changes of.
    heading: String,
    /// The changes.
    diff: BindingsDiff,
    /// The block's `data-testid`.
    testid: &'static str,
) -> impl IntoView {
    let line = |pairs: Vec<(String, String)>, sign: &'static str| {
        pairs
            .into_iter()
            .map(|(s, t)| view! { <li class=format!("diff-{sign}")>{format!("{sign} {t} in {s}")}</li> })
            .collect_view()
    };
    let labels = diff
        .labels
        .iter()
        .map(|what| view! { <li class="diff-label">{format!("~ label of {what}")}</li> })
        .collect_view();
    view! {
        <div class="diff" data-testid=testid>
            <h3>{heading}</h3>
            <ul>{line(diff.added.clone(), "+")} {line(diff.removed.clone(), "−")} {labels}</ul>
        </div>
    }
}
