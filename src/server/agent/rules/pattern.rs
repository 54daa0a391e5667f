//! The `pattern` keyword of tool schemas, compiled once per process for
//! every schema holding the same pattern. A plugin's tools repeat their
//! patterns (an attribute name, an id) across hundreds of schemas, and
//! jsonschema builds each schema's regexes on its own, each with a full
//! DFA (another dependency turns regex-automata's `dfa-build` on): that was
//! two thirds of compiling a realistic registration. Here a pattern is
//! translated as jsonschema translates it (ECMA 262 → Rust syntax), built
//! without the full DFA (the lazy DFA and the NFA engines stay: linear
//! time, no backtracking) and kept in a weak table while any schema holds it.

use crate::server::platform::weak_table::{Keyed, Shared};
use jsonschema::{Keyword, ValidationError};
use regex_automata::meta;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Compiled bytes every pattern may take, whatever its length: ample for
/// the patterns schemas use (an e-mail or date pattern takes 6–7 KB,
/// `^[\w ]{1,200}$` 36 KB, each Unicode letter class `\p{L}` about 48 KB,
/// so `^\p{L}[\p{L} ]*$` fits).
pub const PATTERN_BASE_BYTES: usize = 128 * 1024;

/// Compiled bytes a pattern may take per byte of its text, beyond the
/// base. Tying the size to the text bounds what a session's patterns can
/// take by its budget of tool text (`PLUGIN_SET_MAX_BYTES`): a few
/// characters such as `^\p{L}{1,100}$` (4.8 MB) or `^.{0,1000}$` (1 MB)
/// cannot make the server hold megabytes each (`maxLength` says the latter).
pub const PATTERN_BYTES_PER_CHAR: usize = 64;

/// Most bytes a pattern's lazy DFA keeps between searches (regex-automata's
/// default is 2 MB each); a search that needs more starts the cache
/// afresh or uses an NFA engine, still in linear time.
pub const PATTERN_CACHE_BYTES: usize = 64 * 1024;

/// The most bytes a pattern of `text_len` bytes may take compiled.
pub fn pattern_max_bytes(text_len: usize) -> usize {
    PATTERN_BASE_BYTES + PATTERN_BYTES_PER_CHAR * text_len
}

/// A compiled `pattern`, and the text it was compiled from (for messages).
struct Pattern {
    regex: meta::Regex,
    text: Box<str>,
}

impl Keyed for Pattern {
    fn key(&self) -> &str {
        &self.text
    }
}

/// One schema's use of a shared pattern.
struct PatternKeyword(Arc<Pattern>);

impl PatternKeyword {
    /// Whether a string matches; `None` if the engine gave up (regex
    /// issue 1344 makes some searches panic: the call is refused, the
    /// server stays up).
    fn matches(&self, text: &str) -> Option<bool> {
        std::panic::catch_unwind(|| self.0.regex.is_match(text)).ok()
    }
}

impl<'i> Keyword<'i> for PatternKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        let Value::String(text) = instance else {
            return Ok(());
        };
        match self.matches(text) {
            Some(true) => Ok(()),
            Some(false) => Err(ValidationError::custom(format!(
                "{instance} does not match \"{}\"",
                self.0.text
            ))),
            None => Err(ValidationError::custom(format!(
                "{instance} could not be checked against \"{}\"",
                self.0.text
            ))),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        match instance {
            Value::String(text) => self.matches(text) == Some(true),
            _ => true,
        }
    }
}

/// The process's patterns, by their text as schemas wrote them.
static TABLE: Shared<Pattern> = Shared::new();

/// Compiles `text` as jsonschema's `regex` engine would, minus the full DFA.
fn compile(text: &str) -> Result<Pattern, String> {
    let translated = jsonschema_regex::to_rust_regex(text)
        .map_err(|()| format!("\"{text}\" is not a regular expression this server can run"))?;
    let max = pattern_max_bytes(text.len());
    let regex = meta::Builder::new()
        .configure(
            meta::Config::new()
                .dfa(false)
                .nfa_size_limit(Some(max))
                .hybrid_cache_capacity(PATTERN_CACHE_BYTES),
        )
        .build(&translated)
        .map_err(|e| format!("\"{text}\" cannot be compiled: {}", why(&e)))?;
    if regex.memory_usage() > max {
        return Err(format!(
            "\"{text}\" cannot be compiled: it would take over {max} bytes compiled"
        ));
    }
    Ok(Pattern {
        regex,
        text: text.into(),
    })
}

/// What the engine found wrong, in a few words: the syntax error's own
/// line (`backreferences are not supported`) without the copy of the
/// translated pattern it comes with, or the size a pattern would take.
fn why(e: &meta::BuildError) -> String {
    if let Some(limit) = e.size_limit() {
        return format!("it would take over {limit} bytes compiled");
    }
    let full = match e.syntax_error() {
        Some(syntax) => syntax.to_string(),
        None => e.to_string(),
    };
    let line = full
        .lines()
        .find_map(|line| line.strip_prefix("error: "))
        .unwrap_or(&full);
    // Short enough to be read whole in a one-line refusal.
    line.replace(", including look-ahead and look-behind,", "")
}

/// A compiled pattern held for a schema: while any is held, every schema
/// with the same pattern text uses it (a registration's check keeps its
/// schemas' patterns so, until their compiling, by their first call, finds
/// them here).
pub struct SharedPattern(Arc<Pattern>);

/// The process's compiled `text`, built now if no schema holds it; why it
/// cannot be, in the words compiling a schema with it gives. Building
/// happens outside the table's lock, so one slow pattern never holds up
/// another schema's.
pub fn shared(text: &str) -> Result<SharedPattern, String> {
    if let Some(shared) = TABLE.lock().get(text) {
        return Ok(SharedPattern(shared));
    }
    let built = Arc::new(compile(text)?);
    let mut table = TABLE.lock();
    // Another thread may have built it meanwhile: keep the first.
    let shared = match table.get(text) {
        Some(first) => first,
        None => {
            table.insert(&built);
            built
        }
    };
    Ok(SharedPattern(shared))
}

/// jsonschema's factory for `pattern`: the shared compiled pattern
/// ([`shared`]).
pub fn factory<'a>(
    _: &'a Map<String, Value>,
    value: &'a Value,
    _: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
    let Value::String(text) = value else {
        return Err(ValidationError::schema("`pattern` must be a string"));
    };
    let SharedPattern(pattern) = shared(text).map_err(ValidationError::schema)?;
    Ok(Box::new(PatternKeyword(pattern)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: Value) -> jsonschema::Validator {
        crate::server::agent::rules::compile_schema(&schema).unwrap()
    }

    #[test]
    fn matches_as_ecma_patterns_do() {
        let v = compiled(json!({"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_ ]*$"}));
        assert!(v.is_valid(&json!("Height cm")));
        assert!(!v.is_valid(&json!("9lives")));
        // ECMA `\d` is ASCII only; `\S` excludes ECMA whitespace.
        let v = compiled(json!({"pattern": "^\\d+$"}));
        assert!(v.is_valid(&json!("123")) && !v.is_valid(&json!("١٢٣")));
        let v = compiled(json!({"pattern": "^\\S*$"}));
        assert!(v.is_valid(&json!("ab")) && !v.is_valid(&json!("a\u{3000}b")));
        // Patterns schemas use fit their compiled-size bound.
        for usual in [
            r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",
            r"^[\w ]{1,200}$",
            r"^\d{4}-\d{2}-\d{2}$",
            r"^\p{L}[\p{L} ]*$",
            r"^[\p{L}\p{M}' -]+$",
        ] {
            let v = compiled(json!({"pattern": usual}));
            assert!(!v.is_valid(&json!("\n")), "{usual}");
        }
        // Unanchored: found anywhere; only strings are checked.
        let v = compiled(json!({"pattern": "b+"}));
        assert!(v.is_valid(&json!("abba")) && v.is_valid(&json!(12)));
    }

    #[test]
    fn a_mismatch_names_the_value_and_the_pattern() {
        let v = compiled(json!({"properties": {"id": {"pattern": "^x-"}}}));
        let instance = json!({"id": "y"});
        let e = v.validate(&instance).unwrap_err();
        assert_eq!(e.to_string(), "\"y\" does not match \"^x-\"");
        assert_eq!(e.instance_path().to_string(), "/id");
    }

    #[test]
    fn schemas_holding_one_pattern_share_it_while_one_holds_it() {
        let text = "^shared-[0-9]{3}$";
        let a = compiled(json!({"pattern": text}));
        let b = compiled(json!({"pattern": text, "maxLength": 10}));
        let first = TABLE.lock().get(text).expect("held by a and b");
        assert_eq!(Arc::strong_count(&first), 3);
        drop((a, b));
        assert_eq!(Arc::strong_count(&first), 1);
        drop(first);
        assert!(TABLE.lock().get(text).is_none());
    }

    #[test]
    fn patterns_the_engine_cannot_run_fail_to_compile_naming_them() {
        for (bad, why) in [
            ("(", "is not a regular expression"),
            ("(?<=a)b", "look-around is not supported"),
            ("(a)\\1", "backreferences are not supported"),
            ("(a{1000}){1000}", "it would take over"),
            ("^.{0,1000}$", "it would take over"),
            ("^\\p{L}{1,100}$", "it would take over"),
        ] {
            let e =
                crate::server::agent::rules::compile_schema(&json!({"pattern": bad})).unwrap_err();
            assert!(e.contains(bad) && e.contains(why), "{bad}: {e}");
        }
    }
}
