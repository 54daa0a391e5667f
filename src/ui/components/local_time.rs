//! `<LocalTime>`: an instant in the watcher's own time zone.
//!
//! The server cannot know the browser's zone, so it renders UTC (marked as
//! such); once hydrated, the browser rewrites the text in local time. The
//! first client render matches the server's byte for byte, so hydration
//! never sees a mismatch; the switch happens in an effect afterwards.

use crate::domain::time::{format_utc_ms, iso_utc_ms};
use leptos::prelude::*;

/// A `<time>` showing Unix milliseconds `ms`: UTC from the server, the
/// browser's local time after hydration (`data-zone` says which). The
/// `datetime` attribute and the tooltip always carry the UTC instant.
#[component]
pub fn LocalTime(
    /// The instant, Unix milliseconds.
    ms: i64,
    /// Shows seconds too (a timeline of calls seconds apart).
    #[prop(optional)]
    seconds: bool,
) -> impl IntoView {
    let local = RwSignal::new(None::<String>);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
        // getTimezoneOffset is UTC minus local, in minutes.
        let east = -(date.get_timezone_offset().round() as i64);
        local.set(Some(crate::domain::time::format_local(ms, east, seconds)));
    });
    view! {
        <time
            datetime=iso_utc_ms(ms)
            title=format_utc_ms(ms, true)
            data-zone=move || if local.with(Option::is_some) { "local" } else { "utc" }
        >
            {move || local.get().unwrap_or_else(|| format_utc_ms(ms, seconds))}
        </time>
    }
}
