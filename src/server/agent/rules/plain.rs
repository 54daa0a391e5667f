//! A plain schema checked from its text, building no tree: the fast path
//! of a registration's check ([`plain_from_text`]).
//!
//! Checking a plain schema as compiling would ([`check_plain`]) first
//! built its `serde_json` tree and then walked the draft's whole
//! meta-schema over it: for 1,000 schemas of a realistic registration
//! that was nearly half the server's time (the trees alone 28 % in a
//! profile, the meta-schema 18 %), and the trees were kept, unused, until
//! each tool's first call. Here the text is read once, each keyword's
//! value checked against what the draft 2020-12 meta-schema asks of it
//! ([`Meta`]), and the patterns gathered to be built ([`check_plain_text`]).
//!
//! The reader only ever says yes: a text it is not sure of (a keyword it
//! does not know, a key written twice, a number it would have to judge as
//! a float, anything the meta-schema refuses) is left to [`check_plain`]
//! and compiling, which give the refusal in their own words. A property
//! test (`schema.rs`) holds that whatever it accepts the meta-schema
//! accepts, with the same patterns.
//!
//! [`check_plain`]: super::schema::check_plain

use super::pattern::{shared, SharedPattern};
use super::schema::{Meta, PLAIN_DATA};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// [`check_plain`](super::schema::check_plain)'s verdict on `text`'s
/// schema when it is yes, with its patterns built (found in the process's
/// table or built there); `None` when the reader cannot say so, or a
/// pattern does not build (the tree's check then names the first that
/// fails, in its order).
pub fn check_plain_text(text: &str) -> Option<Vec<SharedPattern>> {
    plain_from_text(text)?
        .iter()
        .map(|pattern| shared(pattern).ok())
        .collect()
}

/// The `pattern` texts of `text`'s schema if it is plain and the draft's
/// meta-schema accepts it; `None` when the reader cannot say so.
pub(super) fn plain_from_text(text: &str) -> Option<Vec<String>> {
    let mut patterns = Vec::new();
    let mut reader = serde_json::Deserializer::from_str(text);
    SchemaSeed(&mut patterns).deserialize(&mut reader).ok()?;
    reader.end().ok()?;
    Some(patterns)
}

/// Keys an object may hold before the reader leaves it to the tree (each
/// key is compared with those before it, to find one written twice).
const KEYS_MAX: usize = 64;

/// The types the meta-schema's `simpleTypes` names.
const SIMPLE_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Why the reader stopped; never shown (the tree's check says why).
fn unsure<E: serde::de::Error>() -> E {
    E::custom("left to the meta-schema")
}

/// One subschema: a boolean, or an object of plain keywords.
struct SchemaSeed<'p>(&'p mut Vec<String>);

impl<'de> DeserializeSeed<'de> for SchemaSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SchemaSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a plain schema")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(Text)? {
            once(&mut keys, key.clone())?;
            match key.as_ref() {
                "properties" => map.next_value_seed(Properties(&mut *self.0))?,
                "items" | "additionalProperties" | "not" => {
                    map.next_value_seed(SchemaSeed(&mut *self.0))?
                }
                "anyOf" | "oneOf" | "allOf" => map.next_value_seed(Schemas(&mut *self.0))?,
                "pattern" => self.0.push(map.next_value_seed(Text)?.into_owned()),
                other => {
                    let meta = PLAIN_DATA
                        .iter()
                        .find(|(keyword, _)| *keyword == other)
                        .map(|(_, meta)| *meta)
                        .ok_or_else(unsure)?;
                    map.next_value_seed(meta)?
                }
            }
        }
        Ok(())
    }
}

/// Adds `key` to an object's `keys`, unless it is there already or the
/// object has more than [`KEYS_MAX`].
fn once<'de, E: serde::de::Error>(
    keys: &mut Vec<Cow<'de, str>>,
    key: Cow<'de, str>,
) -> Result<(), E> {
    if keys.len() >= KEYS_MAX || keys.contains(&key) {
        return Err(unsure());
    }
    keys.push(key);
    Ok(())
}

/// `properties`: an object of subschemas.
struct Properties<'p>(&'p mut Vec<String>);

impl<'de> DeserializeSeed<'de> for Properties<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Properties<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of schemas")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut names = Vec::new();
        while let Some(name) = map.next_key_seed(Text)? {
            once(&mut names, name)?;
            map.next_value_seed(SchemaSeed(&mut *self.0))?;
        }
        Ok(())
    }
}

/// `anyOf`, `oneOf`, `allOf`: a non-empty array of subschemas.
struct Schemas<'p>(&'p mut Vec<String>);

impl<'de> DeserializeSeed<'de> for Schemas<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Schemas<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of schemas")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut count = 0;
        while seq.next_element_seed(SchemaSeed(&mut *self.0))?.is_some() {
            count += 1;
        }
        if count == 0 {
            return Err(unsure());
        }
        Ok(())
    }
}

/// A string, borrowed from the text unless it holds escapes.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

impl<'de> DeserializeSeed<'de> for Meta {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self {
            Meta::Text => d.deserialize_any(Text).map(|_| ()),
            Meta::Anything => d.deserialize_any(Anything),
            Meta::Array => d.deserialize_any(Items),
            Meta::Type => d.deserialize_any(TypeValue),
            Meta::Names => d.deserialize_any(Names { types: false }),
            other => d.deserialize_any(Scalar(other)),
        }
    }
}

/// A boolean or a number, as its [`Meta`] asks.
struct Scalar(Meta);

impl<'de> Visitor<'de> for Scalar {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean or a number")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        matches!(self.0, Meta::Boolean)
            .then_some(())
            .ok_or_else(unsure)
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<(), E> {
        match self.0 {
            Meta::Number | Meta::Count => Ok(()),
            Meta::Positive if n > 0 => Ok(()),
            _ => Err(unsure()),
        }
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<(), E> {
        match self.0 {
            Meta::Number => Ok(()),
            Meta::Positive if n > 0 => Ok(()),
            // A whole number the reader got as `i64` is negative: not a count.
            _ => Err(unsure()),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<(), E> {
        match self.0 {
            Meta::Number => Ok(()),
            Meta::Positive if n > 0.0 => Ok(()),
            // `2.0` is an integer to the meta-schema: left to it.
            _ => Err(unsure()),
        }
    }
}

/// `type`: one of the simple types, or a non-empty array of them, each once.
struct TypeValue;

impl<'de> Visitor<'de> for TypeValue {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a type or types")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        SIMPLE_TYPES.contains(&s).then_some(()).ok_or_else(unsure)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Names { types: true }.visit_seq(seq)
    }
}

/// `required` (strings, each once) and `type`'s array (simple types, each
/// once, at least one).
struct Names {
    types: bool,
}

impl<'de> Visitor<'de> for Names {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of distinct strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut names = Vec::new();
        while let Some(name) = seq.next_element_seed(Text)? {
            if self.types && !SIMPLE_TYPES.contains(&name.as_ref()) {
                return Err(unsure());
            }
            once(&mut names, name)?;
        }
        if self.types && names.is_empty() {
            return Err(unsure());
        }
        Ok(())
    }
}

/// An array of anything (`enum`, `examples`).
struct Items;

impl<'de> Visitor<'de> for Items {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Anything)?.is_some() {}
        Ok(())
    }
}

/// Any JSON value (`default`, `const`, an `enum`'s members), read whole:
/// numbers are parsed as the tree would parse them, so a number no tree
/// can hold (`1e400`) is left to the tree's check. (A key written twice
/// here changes no verdict: the meta-schema takes any value.)
#[derive(Clone, Copy)]
struct Anything;

impl<'de> DeserializeSeed<'de> for Anything {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Anything {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Items.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Anything)?.is_some() {
            map.next_value_seed(Anything)?;
        }
        Ok(())
    }
}
