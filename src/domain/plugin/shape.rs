//! What a registration checks of a tool's schema — how deep it nests and
//! whether its `"type"` is `"object"` — read from the schema's text,
//! building no tree.
//!
//! A registration checks every schema it brings (1,000 in a large one), so
//! this pass runs over nearly a megabyte of text per request. It first
//! scans the bytes ([`scan`]): brackets counted outside strings, strings
//! skipped to their closing quote, the top object's `"type"` compared as bytes. That
//! scan only ever answers when it is sure; a text it cannot judge without
//! parsing (a number a tree may not hold, an escape in a top key or in the
//! top `"type"`, nesting past the parser's limit) is read by serde's
//! visitors instead ([`Shape::of_text`]), whose errors name what is wrong.
//! A property test holds the two readers equal, and both equal to the tree.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What a schema's checks need of it, read from its text without building
/// its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// How deep objects and arrays nest (a scalar is 0), as
    /// [`depth`](super::depth) counts on the tree.
    pub depth: usize,
    /// Whether it is an object whose `"type"` is the string `"object"`.
    pub object_type: bool,
}

impl Shape {
    /// The shape of `text` (one JSON value): scanned when the scan is
    /// sure, else read by serde, with an error where building the tree
    /// would fail too.
    pub fn of_text(text: &str) -> Result<Shape, serde_json::Error> {
        if let Some(shape) = scan(text) {
            return Ok(shape);
        }
        let mut reader = serde_json::Deserializer::from_str(text);
        let shape = reader.deserialize_any(TopVisitor)?;
        reader.end()?;
        Ok(shape)
    }
}

/// Nesting past which the scan leaves a text to serde, below
/// `serde_json`'s recursion limit (128), whose error then says why.
const SCAN_DEPTH_MAX: usize = 100;

/// Number tokens longer than this are left to serde: an integer of 309
/// digits or more is beyond what a tree's `f64` holds.
const SCAN_NUMBER_MAX: usize = 300;

/// Where the scan is within the top object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Top {
    /// Before a key (after `{` or `,`).
    Key,
    /// Before the value of a `"type"` key.
    TypeValue,
    /// Anywhere else.
    Other,
}

/// The shape of `text`, valid JSON as a schema holds it, read byte by
/// byte; `None` when only parsing can say: the top is not an object, a
/// number has an exponent or is over [`SCAN_NUMBER_MAX`] characters, a
/// top key or the top `"type"` string holds an escape, or nesting passes
/// [`SCAN_DEPTH_MAX`].
fn scan(text: &str) -> Option<Shape> {
    let bytes = text.as_bytes();
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let (mut depth, mut deepest, mut object_type) = (0usize, 0usize, false);
    let mut top = Top::Other;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        // A value at the top object's level: a `"type"`'s value unless a string "object" is not.
        let value_of_type = depth == 1 && top == Top::TypeValue;
        match byte {
            b'{' | b'[' => {
                if value_of_type {
                    (object_type, top) = (false, Top::Other);
                }
                depth += 1;
                deepest = deepest.max(depth);
                if depth > SCAN_DEPTH_MAX {
                    return None;
                }
                if depth == 1 {
                    top = Top::Key;
                }
            }
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 1 => top = Top::Key,
            b'"' => {
                let (end, escaped) = string_end(bytes, i + 1)?;
                let content = &bytes[i + 1..end];
                if depth == 1 && top != Top::Other {
                    if escaped {
                        return None;
                    }
                    (object_type, top) = match top {
                        Top::Key if content == b"type" => (object_type, Top::TypeValue),
                        Top::Key => (object_type, Top::Other),
                        _ => (content == b"object", Top::Other),
                    };
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let len = bytes[i..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'.' | b'-' | b'+' | b'e' | b'E'))
                    .unwrap_or(bytes.len() - i);
                let number = &bytes[i..i + len];
                if len > SCAN_NUMBER_MAX || number.iter().any(|b| matches!(b, b'e' | b'E')) {
                    return None;
                }
                if value_of_type {
                    (object_type, top) = (false, Top::Other);
                }
                i += len;
                continue;
            }
            b't' | b'f' | b'n' if value_of_type => (object_type, top) = (false, Top::Other),
            _ => {}
        }
        i += 1;
    }
    Some(Shape {
        depth: deepest,
        object_type,
    })
}

/// The index of the quote closing the string whose text starts at
/// `start`, and whether the string holds an escape; `None` if it never
/// closes. A byte loop, not `memchr`: a schema's strings are mostly keys
/// and type names, shorter than a vector search's setup (profiled).
fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let (mut at, mut escaped) = (start, false);
    loop {
        match *bytes.get(at)? {
            b'"' => return Some((at, escaped)),
            b'\\' => (at, escaped) = (at + 2, true),
            _ => at += 1,
        }
    }
}

/// Reads the top of a schema: its depth, and its `"type"` if it is an
/// object (the last `"type"` wins, as in the tree).
struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let (mut deepest, mut object_type) = (0, false);
        while let Some(is_type) = map.next_key_seed(IsType)? {
            let (depth, object) = if is_type {
                map.next_value_seed(TypeValue)?
            } else {
                (map.next_value_seed(Depth)?, false)
            };
            if is_type {
                object_type = object;
            }
            deepest = deepest.max(depth);
        }
        Ok(Shape {
            depth: 1 + deepest,
            object_type,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
        Ok(Shape {
            depth: DepthVisitor.visit_seq(seq)?,
            object_type: false,
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::SCALAR)
    }
}

impl Shape {
    /// A scalar's shape.
    const SCALAR: Shape = Shape {
        depth: 0,
        object_type: false,
    };
}

/// An object key: whether it is `"type"`.
struct IsType;

impl<'de> DeserializeSeed<'de> for IsType {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for IsType {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == "type")
    }
}

/// The value of the top's `"type"`: its depth, and whether it is the
/// string `"object"`.
struct TypeValue;

impl<'de> DeserializeSeed<'de> for TypeValue {
    type Value = (usize, bool);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(usize, bool), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TypeValue {
    type Value = (usize, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, text: &str) -> Result<(usize, bool), E> {
        Ok((0, text == "object"))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(usize, bool), A::Error> {
        Ok((DepthVisitor.visit_map(map)?, false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(usize, bool), A::Error> {
        Ok((DepthVisitor.visit_seq(seq)?, false))
    }
    fn visit_bool<E>(self, _: bool) -> Result<(usize, bool), E> {
        Ok((0, false))
    }
    fn visit_i64<E>(self, _: i64) -> Result<(usize, bool), E> {
        Ok((0, false))
    }
    fn visit_u64<E>(self, _: u64) -> Result<(usize, bool), E> {
        Ok((0, false))
    }
    fn visit_f64<E>(self, _: f64) -> Result<(usize, bool), E> {
        Ok((0, false))
    }
    fn visit_unit<E>(self) -> Result<(usize, bool), E> {
        Ok((0, false))
    }
}

/// Any value below the top: how deep it nests.
struct Depth;

impl<'de> DeserializeSeed<'de> for Depth {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(DepthVisitor)
    }
}

/// [`Depth`]'s reader: numbers are read as the tree would read them (so a
/// number out of range is refused here too), strings and keys are skipped.
struct DepthVisitor;

impl<'de> Visitor<'de> for DepthVisitor {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut deepest = 0;
        while map.next_key::<IgnoredAny>()?.is_some() {
            deepest = deepest.max(map.next_value_seed(Depth)?);
        }
        Ok(1 + deepest)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut deepest = 0;
        while let Some(depth) = seq.next_element_seed(Depth)? {
            deepest = deepest.max(depth);
        }
        Ok(1 + deepest)
    }

    fn visit_bool<E>(self, _: bool) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_i64<E>(self, _: i64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_u64<E>(self, _: u64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_f64<E>(self, _: f64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_str<E>(self, _: &str) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_unit<E>(self) -> Result<usize, E> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// The serde visitors' reading of `text`, the scan's fallback.
    fn parsed(text: &str) -> Result<Shape, serde_json::Error> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let shape = reader.deserialize_any(TopVisitor)?;
        reader.end()?;
        Ok(shape)
    }

    #[test]
    fn the_scan_reads_a_schema_as_the_parser_does() {
        for text in [
            r#"{"type": "object", "properties": {"a": {"type": "string", "description": "say \"hi\" \\"}}}"#,
            r#"{"type": "string", "type": "object"}"#,
            r#"{"type": "object", "type": "string"}"#,
            r#"{"type": "object", "type": 7}"#,
            r#"{"type": "object", "type": null}"#,
            r#"{"type": "object", "type": {"type": "object"}}"#,
            r#"{"type": ["object"]}"#,
            r#"{"a": {"type": "object"}, "b": "type", "c": ["type", "object"]}"#,
            r#"{"a": "type", "b": "object"}"#,
            r#" { "type" : "object" , "x" : [ [ ], { } ] } "#,
            r#"{"maximum": -12.5, "minimum": 123456789012345678901234567890, "type": "object"}"#,
            r#"{"ü": "é", "type": "object"}"#,
            "{}",
        ] {
            assert_eq!(scan(text), Some(parsed(text).unwrap()), "{text}");
        }
    }

    #[test]
    fn the_scan_leaves_to_the_parser_what_it_cannot_judge() {
        let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
        let deep = format!(r#"{{"type": "object", "a": {deep}}}"#);
        for text in [
            r#"{"type": "object", "maximum": 1e400}"#,
            r#"{"type": "object", "maximum": 1E3}"#,
            r#"{"ty\u0070e": "object"}"#,
            r#"{"type": "obj\u0065ct"}"#,
            r#"{"a\"": 1}"#,
            r#"[{"type": "object"}]"#,
            "7",
            deep.as_str(),
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
        let long = format!(r#"{{"type": "object", "maximum": {}}}"#, "9".repeat(400));
        assert_eq!(scan(&long), None);
        assert!(Shape::of_text(&long).is_err(), "too large for the tree");
        assert_eq!(
            Shape::of_text(&deep).unwrap().depth,
            121,
            "read by the parser"
        );
        assert!(
            Shape::of_text(r#"{"ty\u0070e": "object"}"#)
                .unwrap()
                .object_type
        );
    }

    /// Any JSON value (objects nesting up to five levels), its keys and
    /// strings drawn to include `type`, `object`, quotes and escapes.
    fn any_json() -> impl Strategy<Value = Value> {
        let text = prop_oneof![
            Just("type".to_owned()),
            Just("object".to_owned()),
            Just("a\"b\\".to_owned()),
            "\\PC{0,8}"
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            text.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text.clone(), inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Whether some number in `value` is written with an exponent.
    fn has_exponent(value: &Value) -> bool {
        match value {
            Value::Number(n) => n.to_string().contains(['e', 'E']),
            Value::Array(items) => items.iter().any(has_exponent),
            Value::Object(map) => map.values().any(has_exponent),
            _ => false,
        }
    }

    /// `value`'s text, compact or laid out over lines.
    fn text_of(value: &Value, pretty: bool) -> String {
        if pretty {
            serde_json::to_string_pretty(value).unwrap()
        } else {
            value.to_string()
        }
    }

    proptest! {
        /// The shape read from the text (scanned or parsed) is the tree's,
        /// whatever the value and however it is laid out.
        #[test]
        fn the_shape_read_from_the_text_is_the_trees(value in any_json(), pretty in any::<bool>()) {
            let shape = Shape::of_text(&text_of(&value, pretty)).unwrap();
            prop_assert_eq!(shape.depth, super::super::depth(&value));
            let object_type = value.get("type").and_then(Value::as_str) == Some("object");
            prop_assert_eq!(shape.object_type, object_type);
        }

        /// Whatever the scan answers, the parser answers the same; and it
        /// answers for every object with no exponent and no escaped key.
        #[test]
        fn the_scan_agrees_with_the_parser(value in any_json(), pretty in any::<bool>()) {
            let text = text_of(&value, pretty);
            let scanned = scan(&text);
            if let Some(shape) = scanned {
                prop_assert_eq!(shape, parsed(&text).unwrap());
            }
            let plain_top = value.as_object().is_some_and(|top| {
                top.keys().all(|k| !k.contains(['"', '\\']))
                    && top.get("type").and_then(Value::as_str).is_none_or(|t| !t.contains(['"', '\\']))
            });
            if plain_top && !has_exponent(&value) {
                prop_assert!(scanned.is_some(), "{}", text);
            }
        }
    }
}
