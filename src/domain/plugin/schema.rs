//! A plugin tool's JSON Schema, kept as the text the plugin sent, its tree
//! built only when something needs it.
//!
//! A registration of 1,000 tools otherwise serialised every schema four
//! times (size check, compile-cache keys, validators) and deep-copied each
//! tree five times on its way into the overlay, the store and the event:
//! here a copy is two reference counts, equality compares the texts
//! first, and writing a schema out (events, the store) copies its text
//! instead of walking its tree.
//!
//! The tree is built lazily, once per schema (copies share it): when the
//! schema is compiled (on the server's compile threads, beside the other
//! schemas of the request) or declared to a model. A plugin registering
//! the same tools in its next session reuses the validators compiled the
//! first time, so its schemas' trees are never built at all. The checks a
//! registration makes of each schema (its depth, its `"type"`) read the
//! text in one pass that builds nothing ([`Schema::shape`]), kept with the
//! schema like its tree, so that the server can read it on its check
//! threads and the registration's plan, which runs on one, finds it read.

use super::shape::Shape;
use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A plugin tool's JSON Schema: its JSON text on one line, and its tree
/// once built.
///
/// The text is the schema as the plugin sent it, so reading a request
/// never serialises a schema again; only one sent over several lines is
/// rewritten compactly, because every event's JSON must fit on one SSE
/// `data:` line (a line break in JSON text can only be whitespace between
/// tokens, never inside a string).
#[derive(Clone)]
pub struct Schema(Arc<Inner>);

/// What copies of a schema share: its text, and its tree and shape once
/// read.
struct Inner {
    json: Box<RawValue>,
    value: OnceLock<Value>,
    shape: OnceLock<Result<Shape, String>>,
}

impl Schema {
    /// `value` with its compact JSON text.
    pub fn new(value: Value) -> Self {
        let json =
            RawValue::from_string(value.to_string()).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Self::of(json, OnceLock::from(value))
    }

    fn of(json: Box<RawValue>, value: OnceLock<Value>) -> Self {
        Self(Arc::new(Inner {
            json,
            value,
            shape: OnceLock::new(),
        }))
    }

    /// The schema read from its JSON text (as sent, or as stored). Only a
    /// text over several lines is parsed here (to be written on one).
    pub fn from_text(text: Box<RawValue>) -> Result<Self, serde_json::Error> {
        // memchr: a char-set `contains` decoded the whole text char by char
        // (3 % of a large registration's server time).
        if memchr::memchr2(b'\n', b'\r', text.get().as_bytes()).is_some() {
            let value: Value = serde_json::from_str(text.get())?;
            return Ok(Self::new(value));
        }
        Ok(Self::of(text, OnceLock::new()))
    }

    /// The schema's tree, built from its text the first time it is asked
    /// for. A text [`Schema::shape`] refuses (a number out of `f64`'s
    /// range) has no tree: it reads as `null`, which no check accepts.
    pub fn value(&self) -> &Value {
        self.0
            .value
            .get_or_init(|| serde_json::from_str(self.0.json.get()).unwrap_or(Value::Null))
    }

    /// Its JSON text, on one line: its size, and the key compiled
    /// validators are cached under.
    pub fn json(&self) -> &str {
        self.0.json.get()
    }

    /// Its depth and whether its `"type"` is `"object"`, read from the
    /// text the first time it is asked for (copies share it); an error,
    /// in serde's words, where building the tree would fail too.
    /// Always read from the text, even once the tree is built: a text with
    /// no tree reads as `null`, and that would hide why.
    pub fn shape(&self) -> Result<Shape, &str> {
        self.0
            .shape
            .get_or_init(|| Shape::of_text(self.json()).map_err(|e| e.to_string()))
            .as_ref()
            .map(|shape| *shape)
            .map_err(String::as_str)
    }
}

/// How deep `value` nests (a scalar is 0).
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

impl std::ops::Deref for Schema {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

/// The same schema: the same text (the usual case, and cheap), or texts
/// that differ only in layout or key order.
impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json() || self.value() == other.value()
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.json())
    }
}

/// Written as its text: JSON output copies it; other serialisers get the
/// schema itself.
impl Serialize for Schema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.json.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Box::<RawValue>::deserialize(d)?;
        Self::from_text(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_keeps_its_text_compares_by_it_and_reads_and_writes_as_the_schema() {
        let a: Schema = serde_json::from_str(r#"{"properties": {},  "type": "object"}"#).unwrap();
        assert_eq!(a.json(), r#"{"properties": {},  "type": "object"}"#);
        assert_eq!(a.get("type"), Some(&json!("object")));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"properties": {},  "type": "object"}"#
        );
        let b = Schema::new(json!({"properties": {}, "type": "object"}));
        assert_eq!(b.json(), r#"{"properties":{},"type":"object"}"#);
        let multiline: Schema =
            serde_json::from_str("{\"properties\": {},\n  \"type\": \"object\"\r\n}").unwrap();
        assert_eq!(multiline, b);
        assert_ne!(a, Schema::new(json!({"type": "object"})));
        assert_eq!(serde_json::to_value(&a).unwrap(), *a.value());
        let copy = a.clone();
        assert!(
            std::ptr::eq(copy.value(), a.value()),
            "a copy shares the tree"
        );
    }

    #[test]
    fn a_schema_read_from_text_builds_its_tree_only_when_asked() {
        let a: Schema =
            serde_json::from_str(r#"{"type": "object", "properties": {"x": {"type": "string"}}}"#)
                .unwrap();
        let copy = a.clone();
        assert!(a.0.value.get().is_none(), "read, not built");
        assert_eq!(
            a.shape().unwrap(),
            Shape {
                depth: 3,
                object_type: true
            }
        );
        assert!(a.0.value.get().is_none(), "checked without building it");
        assert!(copy.0.shape.get().is_some(), "copies share what one read");
        assert_eq!(copy["properties"]["x"]["type"], "string");
        assert!(a.0.value.get().is_some(), "copies share what one built");
    }

    #[test]
    fn the_shape_reads_the_last_type_and_only_the_tops() {
        let shape = |text: &str| {
            serde_json::from_str::<Schema>(text)
                .unwrap()
                .shape()
                .unwrap()
        };
        assert!(shape(r#"{"type": "string", "type": "object"}"#).object_type);
        assert!(!shape(r#"{"type": "object", "type": "string"}"#).object_type);
        assert!(shape(r#"{"ty\u0070e": "obj\u0065ct"}"#).object_type);
        assert!(!shape(r#"{"type": ["object"]}"#).object_type);
        assert!(!shape(r#"{"a": {"type": "object"}}"#).object_type);
        assert!(!shape(r#"[{"type": "object"}]"#).object_type);
        assert_eq!(shape(r#"{"type": [[["object"]]]}"#).depth, 4);
        assert_eq!(shape("7").depth, 0);
    }

    #[test]
    fn a_number_the_tree_cannot_hold_is_refused_by_the_shape_and_reads_as_null() {
        let a: Schema = serde_json::from_str(r#"{"type": "object", "maximum": 1e400}"#).unwrap();
        assert!(a.shape().is_err());
        assert_eq!(*a.value(), Value::Null);
        let error = a.shape().unwrap_err().to_string();
        assert!(
            error.starts_with("number out of range"),
            "still said once the tree is built (compiling builds it first): {error}"
        );
    }
}
