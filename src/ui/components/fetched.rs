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
//! is read through [`read_json`] for the same reason, and so is a large
//! island prop ([`JsonProp`]). The text on the wire is the same JSON
//! either way.

use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server::codee::{Decoder, Encoder};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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

/// An island prop carried as its JSON text and read with the slice reader.
///
/// Leptos reads an island's props from the page with
/// `serde_json::from_str`, so a prop of a large type (the lesson the editor
/// opens) compiled that type's whole deserialiser a second time, for the
/// `str` reader. Wrapped, the prop is one JSON string for that reader and
/// its content is read by [`read_json`], like everything else the browser
/// gets: the `str` reader only ever reads a string.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonProp<T>(pub T);

impl<T: Serialize> Serialize for JsonProp<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(&self.0).map_err(S::Error::custom)?;
        serializer.serialize_str(&text)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for JsonProp<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        read_json(&text).map(JsonProp).map_err(D::Error::custom)
    }
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

    #[test]
    fn a_json_prop_is_its_json_text_and_reads_back() {
        let prop = JsonProp(vec!["a \"quoted\" é".to_owned()]);
        let text = serde_json::to_string(&prop).unwrap();
        assert_eq!(text, r#""[\"a \\\"quoted\\\" é\"]""#);
        let back: JsonProp<Vec<String>> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, prop);
        assert!(serde_json::from_str::<JsonProp<Vec<String>>>(r#""[1]""#).is_err());
        assert!(serde_json::from_str::<JsonProp<Vec<String>>>(r#"["a"]"#).is_err());
    }
}
