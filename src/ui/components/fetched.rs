//! `Fetched<T>`: a page's server data as a resource whose hydrated value is
//! read with the same JSON reader as server-function responses.
//!
//! Leptos' default resource codec reads the value the server rendered into
//! the page with `serde_json::from_str`, while server functions read their
//! responses with `serde_json::from_slice`. Every type a page loads was thus
//! deserialised by two copies of serde_json's code in the browser bundle,
//! one per reader (about 300 KB each before `wasm-opt`;
//! `docs/building.md` has the bytes this saved). [`SliceJson`] reads the
//! rendered value from its bytes, so only the slice reader is compiled in;
//! the browser's other JSON (event streams, uploaded files, error bodies)
//! is read through [`read_json`] for the same reason. The text on the wire
//! is the same JSON either way.

use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server::codee::{Decoder, Encoder};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;

/// JSON for a resource's server-rendered value, decoded from its bytes
/// (`serde_json::from_slice`, the reader server functions use).
pub struct SliceJson;

impl<T: Serialize> Encoder<T> for SliceJson {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(val: &T) -> Result<String, serde_json::Error> {
        serde_json::to_string(val)
    }
}

impl<T: DeserializeOwned> Decoder<T> for SliceJson {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(val: &str) -> Result<T, serde_json::Error> {
        serde_json::from_slice(val.as_bytes())
    }
}

/// Parses JSON text with the slice reader (see the module's doc): what
/// `serde_json::from_str` does, without compiling a second reader into the
/// browser bundle.
pub fn read_json<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_slice(text.as_bytes())
}

/// Data a page loads from the server: rendered with the page, then kept
/// up to date in the browser.
pub type Fetched<T> = Resource<Result<T, ApiError>, SliceJson>;

/// A [`Fetched`] resource: `fetcher` runs whenever `source` changes (as
/// with `Resource::new`); on the server its first result is sent with the
/// page for hydration.
#[track_caller]
pub fn fetched<S, T, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Fetched<T>
where
    S: PartialEq + Clone + Send + Sync + 'static,
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
    Fut: Future<Output = Result<T, ApiError>> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slice_codec_reads_back_what_it_wrote() {
        let value: Result<Vec<String>, ApiError> = Ok(vec!["a \"quoted\" é".into()]);
        let text = <SliceJson as Encoder<_>>::encode(&value).unwrap();
        assert_eq!(text, serde_json::to_string(&value).unwrap());
        let back: Result<Vec<String>, ApiError> = <SliceJson as Decoder<_>>::decode(&text).unwrap();
        assert_eq!(back, value);
        assert!(<SliceJson as Decoder<Vec<String>>>::decode("[1").is_err());
        assert_eq!(read_json::<Vec<u8>>(" [1, 2] ").unwrap(), vec![1, 2]);
        assert!(read_json::<Vec<u8>>("[1] x").is_err());
    }
}
