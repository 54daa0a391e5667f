//! `<StatusIcon>`: passed, failed, unknown or waiting, drawn as inline SVG
//! with the status in words for screen readers.
//!
//! Emoji (✅) need an emoji font, which many Linux desktops and headless
//! Chromium lack: they render as an empty box. An SVG path in
//! `currentColor` looks the same everywhere and follows the text colour.

use leptos::prelude::*;

/// What an icon says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A check passed, a call was allowed.
    Passed,
    /// A check failed, a call was refused or failed.
    Failed,
    /// Not known yet.
    Unknown,
    /// Waiting for something (a backend's result).
    Waiting,
}

impl Status {
    /// The lower-case name, used in the class (`status-icon passed`).
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Unknown => "unknown",
            Status::Waiting => "waiting",
        }
    }
}

/// The icon for `status`, hidden from screen readers, followed by `text`
/// (default: the status's name) that only screen readers get; with
/// `decorative`, no text (the words are already next to it).
#[component]
pub fn StatusIcon(
    /// What to show.
    status: Status,
    /// The words read out instead of the picture.
    #[prop(optional, into)]
    text: Option<String>,
    /// The icon only repeats visible words: nothing to read out.
    #[prop(optional)]
    decorative: bool,
) -> impl IntoView {
    let shape = match status {
        Status::Passed => view! { <path d="M3.5 8.5l3 3 6-7" /> }.into_any(),
        Status::Failed => view! { <path d="M4.5 4.5l7 7M11.5 4.5l-7 7" /> }.into_any(),
        Status::Unknown => view! { <path d="M5 8h6" /> }.into_any(),
        Status::Waiting => view! {
            <circle cx="8" cy="8" r="5.5" />
            <path d="M8 5v3.2l2 1.3" />
        }
        .into_any(),
    };
    view! {
        <span class=format!("status-icon {}", status.name())>
            <svg
                viewBox="0 0 16 16"
                width="16"
                height="16"
                aria-hidden="true"
                focusable="false"
                fill="none"
                stroke="currentColor"
                stroke-width="2"
                stroke-linecap="round"
                stroke-linejoin="round"
            >
                {shape}
            </svg>
            {(!decorative)
                .then(|| {
                    let words = text.unwrap_or_else(|| status.name().to_owned());
                    view! { <span class="visually-hidden">{words}</span> }
                })}
        </span>
    }
}
