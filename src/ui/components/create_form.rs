//! `<CreateForm>`: a one-field form that creates something by name.

use leptos::prelude::*;
use leptos::server_fn::client::Client;
use leptos::server_fn::codec::PostUrl;
use leptos::server_fn::request::ClientReq;
use leptos::server_fn::{Http, ServerFn};
use leptos::web_sys::FormData;
use serde::de::DeserializeOwned;

/// A text input (plus any `children` fields) and a submit button posting
/// to `action`. It is a real form
/// (`ActionForm`), so it works before hydration and without JavaScript;
/// the input's `name` is the server function's argument.
#[component]
pub fn CreateForm<S, P>(
    /// The server function that creates.
    action: ServerAction<S>,
    /// The argument the text is sent as.
    name: &'static str,
    /// The input's accessible name, also its placeholder unless one is given.
    label: &'static str,
    /// Hint inside the input.
    #[prop(optional)]
    placeholder: Option<&'static str>,
    /// Longest text the server accepts, in characters.
    maxlength: usize,
    /// The button's text.
    button: &'static str,
    /// More fields, between the input and the button (e.g. checkboxes).
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView
where
    S: DeserializeOwned + ServerFn<Protocol = Http<PostUrl, P>> + Clone + Send + Sync + 'static,
    <<S::Client as Client<S::Error>>::Request as ClientReq<S::Error>>::FormData: From<FormData>,
    S::Output: Send + Sync + 'static,
    S::Error: Send + Sync + 'static,
    <S as ServerFn>::Client: Client<<S as ServerFn>::Error>,
{
    view! {
        <ActionForm action attr:class="inline-form">
            <input
                type="text"
                name=name
                placeholder=placeholder.unwrap_or(label)
                aria-label=label
                required
                maxlength=maxlength.to_string()
            />
            {children.map(|c| c())}
            <button type="submit" class="button primary">
                {button}
            </button>
        </ActionForm>
    }
}
