//! `<FieldProblem>`: the rule a field breaks, shown right next to it.

use leptos::prelude::*;

/// The message under or beside a form field while `message` has one:
/// inline (`<span>`) after an input, or with `testid` as its own line
/// (`<p>`) under a block such as a tool row.
#[component]
pub fn FieldProblem<M>(
    /// The current problem, if any; re-read as the form changes.
    message: M,
    /// Makes it a line of its own, found by this `data-testid`.
    #[prop(optional, into)]
    testid: Option<String>,
) -> impl IntoView
where
    M: Fn() -> Option<String> + Send + Sync + 'static,
{
    move || {
        message().map(|e| match testid.clone() {
            None => view! { <span class="field-error">{e}</span> }.into_any(),
            Some(testid) => view! { <p class="field-error" data-testid=testid>{e}</p> }.into_any(),
        })
    }
}
