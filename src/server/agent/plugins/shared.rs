//! Compiled schemas shared by every session that holds the same schema
//! text: a plugin registers the same tools in each session it joins, and
//! compiling a schema (its patterns above all) is most of a registration's
//! cost. Entries are weak: a validator lives as long as some session's
//! plugin holds it, so sharing never keeps memory a session let go.

use crate::domain::plugin::Schema;
use crate::server::platform::weak_table::Shared;
use std::sync::Arc;

type Validator = Arc<jsonschema::Validator>;

/// The process's table, schema text → validator (compiling is a pure
/// function of the text).
static TABLE: Shared<jsonschema::Validator> = Shared::new();

/// Splits `schemas` into those some session already compiled (with their
/// validator) and those still to compile.
#[allow(clippy::type_complexity)]
pub(super) fn split(
    schemas: Vec<(String, Schema)>,
) -> (Vec<(String, Validator)>, Vec<(String, Schema)>) {
    let table = TABLE.lock();
    let mut known = Vec::new();
    let mut missing = Vec::new();
    for (key, schema) in schemas {
        match table.get(schema.json()) {
            Some(v) => known.push((key, v)),
            None => missing.push((key, schema)),
        }
    }
    (known, missing)
}

/// Remembers validators just compiled, by their schemas' texts.
pub(super) fn remember<'a>(compiled: impl Iterator<Item = (&'a Schema, &'a Validator)>) {
    let mut table = TABLE.lock();
    for (schema, validator) in compiled {
        table.insert(schema.json(), validator);
    }
}
