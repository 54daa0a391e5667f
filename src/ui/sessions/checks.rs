//! The visualiser's checks panel: the checks the session's own lesson,
//! workflow or vibe declares (a lesson's tasks and review items, the
//! checks its tools require or set) with an icon that does not need an
//! emoji font, and a pulse when one changes; a sentence when there are
//! none, so an empty panel does not look broken.

use crate::domain::session_checks::{CheckKind, CheckRow};
use crate::ui::components::{Status, StatusIcon};
use leptos::prelude::*;
use std::collections::BTreeSet;

/// The rows, by label (the key stays in `data-check`, the description is
/// the tooltip and a line under the label); `pulsing` ones animate; `none`
/// is said when there is no row.
#[component]
pub fn ChecksPanel(
    /// The rows, computed once for this panel and the progress panel.
    checks: Memo<Vec<CheckRow>>,
    pulsing: RwSignal<BTreeSet<String>>,
    /// What to say when the session declares no check.
    none: &'static str,
) -> impl IntoView {
    view! {
        <section class="panel">
            <h2>"Checks"</h2>
            <Show when=move || checks.with(Vec::is_empty)>
                <p class="muted small" data-testid="checks-none">
                    {none}
                </p>
            </Show>
            <ul class="checks" data-testid="checks">
                {move || checks.get().into_iter().map(|row| view! { <CheckItem row pulsing /> }).collect_view()}
            </ul>
        </section>
    }
}

/// One check: its mark, label and description.
#[component]
fn CheckItem(row: CheckRow, pulsing: RwSignal<BTreeSet<String>>) -> impl IntoView {
    let CheckRow { check, value } = row;
    let (class, status) = match (value, check.kind) {
        (Some(true), _) => ("check-true", Status::Passed),
        (Some(false), CheckKind::Check) => ("check-false", Status::Failed),
        _ => ("check-unknown", Status::Unknown),
    };
    let words = check.kind.words(value);
    let key = check.key.clone();
    let pulse = move || pulsing.with(|p| p.contains(&key));
    let title = check
        .description
        .clone()
        .unwrap_or_else(|| check.key.clone());
    view! {
        <li
            class=class
            class:pulse=pulse
            data-check=check.key.clone()
            data-kind=format!("{:?}", check.kind).to_lowercase()
            title=title
        >
            <span class="mark">
                <StatusIcon status text=words />
            </span>
            <span class="check-text">
                <span class="check-label">{check.label.clone()}</span>
                {check.description.map(|d| view! { <span class="check-description">{d}</span> })}
            </span>
        </li>
    }
}
