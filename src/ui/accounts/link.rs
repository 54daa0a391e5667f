//! A one-time password link as the admin gets it: the link to pass on
//! (shown only now), or where it was mailed, or why mailing it failed.

use crate::domain::account::ResetLink;
use crate::domain::time::format_utc;
use leptos::prelude::*;

/// The link, or where it went, with until when it works.
#[component]
pub fn LinkNotice(link: ResetLink) -> impl IntoView {
    let until = format_utc(link.reset_link_expires_at);
    view! {
        <div class="secret" role="status" data-testid="reset-link-notice">
            {link
                .reset_link_mailed_to
                .map(|to| view! { <p>{format!("A password link was mailed to {to}.")}</p> })}
            {link
                .mail_error
                .map(|why| view! { <p class="error">{format!("It could not be mailed: {why}.")}</p> })}
            {link
                .reset_link
                .map(|url| {
                    view! {
                        <p>
                            <strong>"Password link"</strong>
                            " — pass it on now: it will not be shown again."
                        </p>
                        <code data-testid="reset-link">{url}</code>
                    }
                })}
            <p class="muted small">{format!("It works once, until {until}.")}</p>
        </div>
    }
}
