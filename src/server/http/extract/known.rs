//! [`Known`]: a JSON body whose every top-level key is one of its type's
//! fields, for a type that reads other JSON leniently.
//!
//! Some domain types must read what they stored before a field was
//! renamed or dropped (the catalogue's history holds every version of
//! every tool), so they cannot refuse unknown keys everywhere. At the door
//! a caller sends today's shape, and a misspelt key there is a rule lost
//! without a word (`"require"` for `"requires"` saved the tool with no
//! requirement). `JsonBody<Known<T>>` refuses such a key with serde's own
//! words, 422 naming it, as a type with `deny_unknown_fields` would.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::Value;

/// A `T` read from a JSON object with no key `T` lacks.
#[derive(Debug, Clone)]
pub struct Known<T>(pub T);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Known<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if let Value::Object(map) = &value {
            let fields = field_names::<T>();
            if let Some(key) = map.keys().find(|k| !fields.contains(&k.as_str())) {
                return Err(de::Error::unknown_field(key, fields));
            }
        }
        T::deserialize(value).map(Known).map_err(de::Error::custom)
    }
}

/// The field names a derived `Deserialize` of a struct asks for (after
/// its renames): what it passes to `deserialize_struct`.
pub fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// A deserializer that only notes the fields a struct asks for.
struct Probe<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("fields noted"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::catalogue::CatalogueTool;
    use serde_json::json;

    #[test]
    fn a_key_the_type_lacks_is_named_and_the_rest_reads_as_before() {
        let tool =
            serde_json::to_value(&crate::server::seed::catalogue::demo_catalogue()[0]).unwrap();
        let read: Known<CatalogueTool> = serde_json::from_value(tool.clone()).unwrap();
        assert_eq!(serde_json::to_value(&read.0).unwrap(), tool);
        let mut typo = tool.clone();
        typo["require"] = json!(["identity_verified"]);
        let e = serde_json::from_value::<Known<CatalogueTool>>(typo)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown field `require`, expected one of"),
            "{e}"
        );
        assert!(e.contains("`requires`"), "{e}");
    }

    #[test]
    fn the_field_names_are_the_serialised_ones() {
        let names = field_names::<CatalogueTool>();
        let tool =
            serde_json::to_value(&crate::server::seed::catalogue::demo_catalogue()[0]).unwrap();
        for key in tool.as_object().unwrap().keys() {
            assert!(names.contains(&key.as_str()), "{key} not in {names:?}");
        }
    }
}
