//! Compiled schemas shared by every session that holds the same schema
//! text: a plugin registers the same tools in each session it joins, and
//! compiling a schema (its patterns above all) is most of a registration's
//! cost. Entries are weak: a validator lives as long as some session's
//! plugin holds it, so sharing never keeps memory a session let go.

use crate::domain::plugin::Schema;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

type Validator = Arc<jsonschema::Validator>;

/// Schema text → its compiled validator, while some session holds it;
/// and the size at which entries no session holds are next swept out.
#[derive(Default)]
struct Table {
    validators: HashMap<String, Weak<jsonschema::Validator>>,
    sweep_at: usize,
}

/// The process's table (compiling is a pure function of the text).
fn table() -> std::sync::MutexGuard<'static, Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Fewest entries before the first sweep.
const FIRST_SWEEP: usize = 4096;

/// Splits `schemas` into those some session already compiled (with their
/// validator) and those still to compile.
#[allow(clippy::type_complexity)]
pub(super) fn split(
    schemas: Vec<(String, Schema)>,
) -> (Vec<(String, Validator)>, Vec<(String, Schema)>) {
    let table = table();
    let mut known = Vec::new();
    let mut missing = Vec::new();
    for (key, schema) in schemas {
        match table.validators.get(schema.json()).and_then(Weak::upgrade) {
            Some(v) => known.push((key, v)),
            None => missing.push((key, schema)),
        }
    }
    (known, missing)
}

/// Remembers validators just compiled, by their schemas' texts; once the
/// table has doubled since its last sweep, forgets those no session holds.
pub(super) fn remember<'a>(compiled: impl Iterator<Item = (&'a Schema, &'a Validator)>) {
    let mut table = table();
    for (schema, validator) in compiled {
        table
            .validators
            .insert(schema.json().to_owned(), Arc::downgrade(validator));
    }
    if table.validators.len() > table.sweep_at.max(FIRST_SWEEP) {
        table.validators.retain(|_, w| w.strong_count() > 0);
        table.sweep_at = 2 * table.validators.len();
    }
}
