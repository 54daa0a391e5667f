//! Tool argument schemas for the rules in force: compiled once per change
//! (never fetching a `$ref`), and the readable refusal a call's arguments
//! get when they do not fit. A plain schema (only keywords that compile
//! whenever the meta-schema accepts them, and `pattern`s, [`is_plain`])
//! can be checked without compiling it ([`check_plain`]): a plugin's
//! thousand tools are checked when registered and each compiled when first
//! called.

use super::pattern::{shared, SharedPattern};
use crate::domain::limits::excerpt;
use serde_json::Value;

/// Checks `arguments` with a compiled schema (a catalogue tool's or a
/// plugin tool's); the error names up to three fields and their rules.
pub fn check_with(validator: &jsonschema::Validator, arguments: &Value) -> Result<(), String> {
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(3)
        .map(|e| {
            let path = e.instance_path().to_string();
            let field = path.trim_start_matches('/').replace('/', ".");
            let problem = excerpt(&e.to_string());
            if field.is_empty() {
                format!("arguments: {problem}")
            } else {
                format!("field `{}`: {problem}", excerpt(&field))
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Compiles a tool's JSON Schema. Patterns are compiled once per process
/// (`pattern.rs`: linear time, no backtracking; `patternProperties` use
/// jsonschema's `regex` engine, also linear), and jsonschema's default
/// features are off, so a schema can never make the server fetch a `$ref`
/// over the network or from a file. Slow for large schemas: call it off the
/// async threads.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .with_keyword("pattern", super::pattern::factory)
        .build(schema)
        .map_err(|e| excerpt(&e.to_string()))
}

/// Keywords of a plain schema that hold data, not subschemas, each with
/// what the draft 2020-12 meta-schema asks of its value: each one's
/// compiled form cannot fail once the meta-schema accepts its value.
/// Besides these a plain schema may hold `pattern`s (checked by building
/// them, [`check_plain`]); anything else (`$ref`, `$defs`, `format`,
/// `patternProperties`, `$schema`, …) makes a schema one to compile at
/// once.
pub(super) const PLAIN_DATA: &[(&str, Meta)] = &[
    ("title", Meta::Text),
    ("description", Meta::Text),
    ("default", Meta::Anything),
    ("examples", Meta::Array),
    ("deprecated", Meta::Boolean),
    ("readOnly", Meta::Boolean),
    ("writeOnly", Meta::Boolean),
    ("$comment", Meta::Text),
    ("type", Meta::Type),
    ("enum", Meta::Array),
    ("const", Meta::Anything),
    ("minimum", Meta::Number),
    ("maximum", Meta::Number),
    ("exclusiveMinimum", Meta::Number),
    ("exclusiveMaximum", Meta::Number),
    ("multipleOf", Meta::Positive),
    ("minLength", Meta::Count),
    ("maxLength", Meta::Count),
    ("minItems", Meta::Count),
    ("maxItems", Meta::Count),
    ("uniqueItems", Meta::Boolean),
    ("required", Meta::Names),
    ("minProperties", Meta::Count),
    ("maxProperties", Meta::Count),
];

/// What the draft 2020-12 meta-schema (its validation and meta-data
/// vocabularies) asks of a plain data keyword's value, as the text reader
/// checks it (`plain.rs`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Meta {
    /// A string (`title`, `description`, `$comment`).
    Text,
    /// Any value (`default`, `const`).
    Anything,
    /// An array of anything (`enum`, `examples`).
    Array,
    /// A boolean.
    Boolean,
    /// A number.
    Number,
    /// A number above zero (`multipleOf`).
    Positive,
    /// A whole number, zero or more (`minLength`, …).
    Count,
    /// One of the simple types, or a non-empty array of them, each once.
    Type,
    /// An array of strings, each once (`required`).
    Names,
}

/// Whether `schema` is plain: a boolean, or an object of the
/// [`PLAIN_DATA`] keywords, string `pattern`s, and `properties`, `items`,
/// `additionalProperties`, `not`, `anyOf`, `oneOf` and `allOf` whose
/// subschemas are plain. For such a schema, compiling fails exactly when
/// the meta-schema refuses it or a pattern cannot be built, with the same
/// message (a property test below holds the two equal), so
/// [`check_plain`] can stand in for [`compile_schema`] until the schema is
/// needed.
pub fn is_plain(schema: &Value) -> bool {
    plain_patterns(schema, &mut Vec::new())
}

/// Checks a plain schema ([`is_plain`]) as [`compile_schema`] would, in
/// the same words, for a small part of the cost: against its meta-schema,
/// then its patterns, each built (or found built) in the process's table.
/// The patterns come back to be held until the schema is compiled, so
/// that compiling finds them built, and a pattern a thousand schemas
/// repeat is built once.
pub fn check_plain(schema: &Value) -> Result<Vec<SharedPattern>, String> {
    jsonschema::meta::validate(schema).map_err(|e| excerpt(&e.to_string()))?;
    let mut texts = Vec::new();
    plain_patterns(schema, &mut texts);
    texts
        .into_iter()
        .map(|text| shared(text).map_err(|e| excerpt(&e)))
        .collect()
}

/// Whether `schema` is plain, gathering its `pattern`s' texts into
/// `patterns` in the order compiling meets them (each object's keywords in
/// order, subschemas where they stand): the one place that knows where a
/// plain schema's subschemas are. Recursion is bounded by the JSON
/// reader's nesting limit, as compiling is.
fn plain_patterns<'s>(schema: &'s Value, patterns: &mut Vec<&'s str>) -> bool {
    let map = match schema {
        Value::Bool(_) => return true,
        Value::Object(map) => map,
        _ => return false,
    };
    map.iter()
        .all(|(keyword, value)| match (keyword.as_str(), value) {
            ("properties", Value::Object(m)) => m.values().all(|s| plain_patterns(s, patterns)),
            ("items" | "additionalProperties" | "not", s) => plain_patterns(s, patterns),
            ("anyOf" | "oneOf" | "allOf", Value::Array(a)) => {
                a.iter().all(|s| plain_patterns(s, patterns))
            }
            ("pattern", Value::String(text)) => {
                patterns.push(text);
                true
            }
            (other, _) => PLAIN_DATA.iter().any(|(keyword, _)| *keyword == other),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn plain_schemas_are_the_ones_without_other_keywords() {
        let plain = json!({"type": "object", "properties": {
            "pattern": {"type": "string", "maxLength": 9, "description": "a property named like a keyword"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "n": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": null}]},
            "rows": {"type": "array", "items": {"type": "object", "additionalProperties": false}}
        }, "required": ["n"]});
        assert!(is_plain(&plain));
        for risky in [
            json!({"type": "string", "pattern": 5}),
            json!({"patternProperties": {"^a": true}}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": true}}),
            json!({"type": "string", "format": "email"}),
            json!({"properties": {"a": {"patternProperties": {"x": true}}}}),
            json!({"properties": ["not", "an", "object"]}),
            json!({"anyOf": {"type": "string"}}),
            json!("a string is no schema"),
        ] {
            assert!(!is_plain(&risky), "{risky}");
        }
    }

    #[test]
    fn a_plain_schema_the_meta_schema_refuses_is_refused_as_compiling_would() {
        let bad = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        assert!(is_plain(&bad));
        let refused = check_plain(&bad).map(|_| ()).unwrap_err();
        assert_eq!(Err(refused), compile_schema(&bad).map(|_| ()));
    }

    /// Values a keyword may be given, right or wrong.
    fn data() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!(null)),
            Just(json!(true)),
            Just(json!(-1)),
            Just(json!(0)),
            Just(json!(3)),
            Just(json!(2.5)),
            Just(json!(1e300)),
            Just(json!("string")),
            Just(json!("integr")),
            Just(json!([])),
            Just(json!(["a", "a"])),
            Just(json!(["a", "b"])),
            Just(json!(["string", "null"])),
            Just(json!({})),
        ]
    }

    /// Patterns that build and patterns that do not (a syntax error,
    /// look-around, a backreference).
    const PATTERNS: &[&str] = &[
        "^a",
        "^[A-Z]{3}$",
        "^\\d{4}-\\d{2}$",
        "(",
        "(?<=a)b",
        "(a)\\1",
    ];

    /// Plain schemas, and near-plain ones with a wrong value anywhere.
    fn schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            (
                proptest::collection::btree_map(
                    proptest::sample::select(
                        PLAIN_DATA.iter().map(|(k, _)| *k).collect::<Vec<_>>()
                    ),
                    data(),
                    0..4
                ),
                proptest::option::of(proptest::sample::select(PATTERNS.to_vec())),
            )
                .prop_map(|(m, pattern)| {
                    let mut map: serde_json::Map<String, Value> =
                        m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    if let Some(p) = pattern {
                        map.insert("pattern".into(), json!(p));
                    }
                    Value::Object(map)
                }),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::btree_map("[a-c]", inner.clone(), 0..3)
                    .prop_map(|m| json!({"type": "object", "properties": m})),
                inner
                    .clone()
                    .prop_map(|s| json!({"type": "array", "items": s})),
                inner
                    .clone()
                    .prop_map(|s| json!({"additionalProperties": s})),
                inner.clone().prop_map(|s| json!({"not": s})),
                (
                    proptest::sample::select(vec!["anyOf", "oneOf", "allOf"]),
                    proptest::collection::vec(inner, 0..3)
                )
                    .prop_map(|(k, v)| json!({ k: v })),
            ]
        })
    }

    #[test]
    fn the_generator_makes_schemas_both_accepted_and_refused() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..300 {
            let schema = schema().new_tree(&mut runner).unwrap().current();
            if is_plain(&schema) {
                match check_plain(&schema) {
                    Ok(_) => accepted += 1,
                    Err(_) => refused += 1,
                }
            }
        }
        assert!(
            accepted > 30 && refused > 30,
            "{accepted} accepted, {refused} refused"
        );
    }

    /// What the text reader says of `schema`'s text: its pattern texts,
    /// sorted, if it accepted.
    fn read_from_text(schema: &Value) -> Option<Vec<String>> {
        let mut texts = super::super::plain::plain_from_text(&schema.to_string())?;
        texts.sort();
        Some(texts)
    }

    #[test]
    fn the_text_reader_accepts_most_schemas_the_meta_schema_accepts() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut right, mut read) = (0, 0);
        for _ in 0..300 {
            let schema = schema().new_tree(&mut runner).unwrap().current();
            if is_plain(&schema) && jsonschema::meta::validate(&schema).is_ok() {
                right += 1;
                read += usize::from(read_from_text(&schema).is_some());
            }
        }
        assert!(
            right > 30 && read * 10 >= right * 9,
            "{read} of {right} read from the text"
        );
    }

    #[test]
    fn the_text_reader_leaves_what_it_is_not_sure_of_to_the_tree() {
        let read = |text: &str| super::super::plain::plain_from_text(text);
        let realistic = r#"{"type":"object","properties":{"a":{"type":"string","description":"x","maxLength":128},
            "k\u0069nd":{"type":"string","enum":["scatter","bar"]},"n":{"type":"integer","minimum":-1,"maximum":2.5,"multipleOf":0.5},
            "rows":{"type":"array","maxItems":10,"items":{"type":"object","properties":{"attr":{"type":"string","pattern":"^[A-Z]\\d$"},
            "v":{"type":["string","number"]}},"required":["attr","v"]}},"c":{"const":{"x":[1,{"y":null}]},"default":1e300,"examples":[]},
            "any":{"anyOf":[true,{"not":false}],"title":"t","$comment":"c","uniqueItems":true}},
            "required":["a"],"additionalProperties":false}"#;
        assert_eq!(read(realistic), Some(vec!["^[A-Z]\\d$".to_owned()]));
        assert_eq!(read("true"), Some(vec![]));
        for unsure in [
            r#"{"type":"string","type":"number"}"#,
            r#"{"properties":{"a":true,"a":false}}"#,
            r#"{"required":["a","a"]}"#,
            r#"{"type":["string","string"]}"#,
            r#"{"type":[]}"#,
            r#"{"type":"strin"}"#,
            r#"{"anyOf":[]}"#,
            r#"{"minLength":-1}"#,
            r#"{"minLength":2.0}"#,
            r#"{"multipleOf":0}"#,
            r#"{"default":1e400}"#,
            r#"{"format":"email"}"#,
            r##"{"$ref":"#"}"##,
            r#"{"pattern":5}"#,
            r#"{"items":"a"}"#,
            r#""a string""#,
            r#"{} {}"#,
            r#"{"title":5}"#,
        ] {
            assert_eq!(read(unsure), None, "{unsure}");
        }
    }

    proptest! {
        #[test]
        fn what_the_text_reader_accepts_the_meta_schema_accepts_with_the_same_patterns(schema in schema()) {
            if let Some(texts) = read_from_text(&schema) {
                prop_assert!(is_plain(&schema));
                prop_assert!(jsonschema::meta::validate(&schema).is_ok(), "{}", schema);
                let mut tree = Vec::new();
                plain_patterns(&schema, &mut tree);
                let mut tree: Vec<String> = tree.into_iter().map(str::to_owned).collect();
                tree.sort();
                prop_assert_eq!(texts, tree);
            }
        }

        #[test]
        fn checking_a_plain_schema_agrees_with_compiling_it(schema in schema()) {
            prop_assume!(is_plain(&schema));
            prop_assert_eq!(
                check_plain(&schema).map(|_| ()),
                compile_schema(&schema).map(|_| ())
            );
        }
    }
}
