//! The live feed behind the sessions, playground and workflow pages: the
//! browser's `EventSource` subscription and the connection state shown to
//! the watcher.

use leptos::prelude::*;

/// Connection state of an event stream, shown to the watcher (the class
/// `link-{state}` and, on the visualiser, `data-state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Only the browser ever sees the stream open or drop.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub enum Link {
    /// Not open yet (and on the server, always).
    Connecting,
    /// Open: changes arrive as they happen.
    Live,
    /// Dropped; the browser is retrying and will catch up on reconnect.
    Reconnecting,
}

impl Link {
    /// The words shown for the state.
    pub fn label(self) -> &'static str {
        match self {
            Link::Connecting => "connecting…",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting…",
        }
    }

    /// The lower-case state name, as used in class names and `data-state`
    /// (spelled out: the release bundle is built without `Debug` text).
    pub fn name(self) -> &'static str {
        match self {
            Link::Connecting => "connecting",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting",
        }
    }
}

/// Subscribes to `url` with the browser's `EventSource` (which reconnects by
/// itself and sends `Last-Event-ID`), for as long as the calling component
/// lives; `on_event` gets each event's name and data. Every frame carries
/// an `event:` name, which `onmessage` never sees, so there is one
/// listener per name in `names`. Does nothing on the server.
pub fn subscribe(
    url: String,
    names: &'static [&'static str],
    on_event: impl Fn(&str, String) + 'static,
    link: RwSignal<Link>,
) {
    #[cfg(feature = "hydrate")]
    {
        use std::rc::Rc;
        use wasm_bindgen::closure::Closure;
        use wasm_bindgen::JsCast;
        let Ok(source) = web_sys::EventSource::new(&url) else {
            link.set(Link::Reconnecting);
            return;
        };
        let on_event = Rc::new(on_event);
        let listeners: Vec<Closure<dyn Fn(web_sys::MessageEvent)>> = names
            .iter()
            .map(|name| {
                let on_event = on_event.clone();
                let listener = Closure::<dyn Fn(web_sys::MessageEvent)>::new(
                    move |ev: web_sys::MessageEvent| {
                        if let Some(text) = ev.data().as_string() {
                            on_event(name, text);
                        }
                    },
                );
                let _ = source
                    .add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
                listener
            })
            .collect();
        let open = Closure::<dyn Fn()>::new(move || link.set(Link::Live));
        let error = Closure::<dyn Fn()>::new(move || link.set(Link::Reconnecting));
        source.set_onopen(Some(open.as_ref().unchecked_ref()));
        source.set_onerror(Some(error.as_ref().unchecked_ref()));
        let held = send_wrapper::SendWrapper::new((source, listeners, open, error));
        on_cleanup(move || held.0.close());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (url, names, on_event, link);
}

/// The connection badge: `link link-{state}` with the state's words; with
/// `state`, also the state as `data-state` for scripts.
#[component]
pub fn LinkBadge(
    /// The stream's state.
    link: RwSignal<Link>,
    /// The badge's `data-testid`.
    testid: &'static str,
    /// Adds `data-state`.
    #[prop(optional)]
    state: bool,
) -> impl IntoView {
    view! {
        <span
            class=move || format!("link link-{}", link.get().name())
            data-testid=testid
            data-state=move || state.then(|| link.get().name())
        >
            {move || link.get().label()}
        </span>
    }
}
