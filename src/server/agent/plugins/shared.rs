//! Checked schemas shared by every session that holds the same schema
//! text: a plugin registers the same tools in each session it joins, and
//! checking and compiling a schema (its patterns above all) is most of a
//! registration's cost. Entries are weak: a schema lives as long as some
//! session's plugin holds it, so sharing never keeps memory a session let
//! go.

use super::checked::CheckedSchema;
use crate::domain::plugin::Schema;
use crate::server::platform::weak_table::Shared;
use std::sync::Arc;

/// The process's table, schema text → checked schema (checking and
/// compiling are pure functions of the text).
static TABLE: Shared<CheckedSchema> = Shared::new();

/// Splits `schemas` into those some session already checked (with the
/// checked schema) and those still to check.
#[allow(clippy::type_complexity)]
pub(super) fn split<K>(
    schemas: Vec<(K, Schema)>,
) -> (Vec<(K, Arc<CheckedSchema>)>, Vec<(K, Schema)>) {
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

/// Remembers schemas just checked, by their texts.
pub(super) fn remember<'a>(checked: impl Iterator<Item = &'a Arc<CheckedSchema>>) {
    let mut table = TABLE.lock();
    for schema in checked {
        table.insert(schema);
    }
}
