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
    /// Closed for good: the page set it (an ended session's stream has
    /// nothing more to say), so the stream is not opened again.
    Closed,
}

impl Link {
    /// The words shown for the state.
    pub fn label(self) -> &'static str {
        match self {
            Link::Connecting => "connecting…",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting…",
            Link::Closed => "closed",
        }
    }

    /// The lower-case state name, as used in class names and `data-state`
    /// (spelled out: the release bundle is built without `Debug` text).
    pub fn name(self) -> &'static str {
        match self {
            Link::Connecting => "connecting",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting",
            Link::Closed => "closed",
        }
    }
}

/// How long to wait before opening a stream the browser gave up on (an
/// answer that was not an event stream: a proxy's 502 or 503 while an
/// instance restarts, a 429 at a cap); doubled after each failure up to
/// [`REOPEN_MAX_MS`], and back to this once a stream opens.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const REOPEN_FIRST_MS: u32 = 1_000;

/// The longest wait between two attempts to open a stream again.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const REOPEN_MAX_MS: u32 = 30_000;

/// Subscribes to `url` with the browser's `EventSource` (which reconnects by
/// itself after a dropped connection and sends `Last-Event-ID`), for as
/// long as the calling component lives; `on_event` gets each event's name
/// and data. Every frame carries an `event:` name, which `onmessage` never
/// sees, so there is one listener per name in `names`. When the browser
/// gives the stream up for good (any answer but an event stream), it is
/// opened again after [`REOPEN_FIRST_MS`], backing off: the server's
/// answer to a new stream (its history and a snapshot, or the whole list)
/// brings the page up to date. Once the page sets `link` to
/// [`Link::Closed`] the stream is closed when it next drops (the server
/// ends an ended session's stream) and never opened again. Does nothing on
/// the server.
pub fn subscribe(
    url: String,
    names: &'static [&'static str],
    on_event: impl Fn(&str, String) + 'static,
    link: RwSignal<Link>,
) {
    #[cfg(feature = "hydrate")]
    {
        let feed = std::rc::Rc::new(browser::Feed {
            url,
            names,
            on_event: Box::new(on_event),
            link,
            open: Default::default(),
            wait_ms: std::cell::Cell::new(REOPEN_FIRST_MS),
        });
        browser::Feed::connect(&feed);
        let held = send_wrapper::SendWrapper::new(feed);
        on_cleanup(move || held.close());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (url, names, on_event, link);
}

/// The browser's side of [`subscribe`].
#[cfg(feature = "hydrate")]
mod browser {
    use super::{Link, REOPEN_MAX_MS};
    use leptos::prelude::*;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{EventSource, MessageEvent};

    /// What gets each event's name and data.
    pub(super) type OnEvent = Box<dyn Fn(&str, String)>;

    /// One subscription: what it opens, and the stream open now.
    pub(super) struct Feed {
        pub(super) url: String,
        pub(super) names: &'static [&'static str],
        pub(super) on_event: OnEvent,
        pub(super) link: RwSignal<Link>,
        pub(super) open: RefCell<Option<Open>>,
        pub(super) wait_ms: Cell<u32>,
    }

    /// An `EventSource` and the listeners it calls.
    pub(super) struct Open {
        source: EventSource,
        _listeners: Vec<Closure<dyn Fn(MessageEvent)>>,
        _opened: Closure<dyn Fn()>,
        _failed: Closure<dyn Fn()>,
    }

    impl Feed {
        /// Opens the stream (again); when the browser gives it up, opens
        /// it once more after a wait, as long as the feed is kept.
        pub(super) fn connect(feed: &Rc<Feed>) {
            let Ok(source) = EventSource::new(&feed.url) else {
                feed.link.set(Link::Reconnecting);
                return;
            };
            let listeners = feed
                .names
                .iter()
                .map(|name| {
                    let weak = Rc::downgrade(feed);
                    let listener = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
                        if let (Some(feed), Some(text)) = (weak.upgrade(), ev.data().as_string()) {
                            (feed.on_event)(name, text);
                        }
                    });
                    let _ = source
                        .add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
                    listener
                })
                .collect();
            let (link, weak) = (feed.link, Rc::downgrade(feed));
            let opened = Closure::<dyn Fn()>::new(move || {
                if link.get_untracked() == Link::Closed {
                    return;
                }
                link.set(Link::Live);
                if let Some(feed) = weak.upgrade() {
                    feed.wait_ms.set(super::REOPEN_FIRST_MS);
                }
            });
            let weak = Rc::downgrade(feed);
            let failed = Closure::<dyn Fn()>::new(move || {
                let Some(feed) = weak.upgrade() else {
                    return;
                };
                if link.get_untracked() == Link::Closed {
                    feed.close();
                    return;
                }
                link.set(Link::Reconnecting);
                feed.given_up();
            });
            source.set_onopen(Some(opened.as_ref().unchecked_ref()));
            source.set_onerror(Some(failed.as_ref().unchecked_ref()));
            *feed.open.borrow_mut() = Some(Open {
                source,
                _listeners: listeners,
                _opened: opened,
                _failed: failed,
            });
        }

        /// After an error: if the browser will not retry by itself, open
        /// the stream again after the wait. The given-up stream (whose
        /// error listener is running now) is replaced then, not dropped
        /// here.
        fn given_up(self: Rc<Self>) {
            let closed = self
                .open
                .borrow()
                .as_ref()
                .is_some_and(|o| o.source.ready_state() == EventSource::CLOSED);
            if !closed {
                return;
            }
            let wait = self.wait_ms.get();
            self.wait_ms.set(wait.saturating_mul(2).min(REOPEN_MAX_MS));
            let weak = Rc::downgrade(&self);
            gloo_timers::callback::Timeout::new(wait, move || {
                if let Some(feed) = weak.upgrade() {
                    Feed::connect(&feed);
                }
            })
            .forget();
        }

        /// Closes the stream open now, if any.
        pub(super) fn close(&self) {
            if let Some(open) = self.open.borrow_mut().take() {
                open.source.close();
            }
        }
    }
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
