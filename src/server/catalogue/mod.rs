//! Changing the catalogue's tools: the one place every door goes through —
//! the catalogue editor (`save_tool`), `PUT /api/catalogue/tools/{id}`, a
//! manifest import (`POST /api/manifests`, the `/agents` page,
//! `SWITCHBOARD_MANIFESTS_DIR`), a restore, and the seeds of a new
//! database.
//!
//! A change is first reduced to the tools it really adds or changes
//! (sending a tool back unchanged is no change), then the actor's power to
//! make it is checked — a key needs `catalogue:write`, refused whole with
//! 403 otherwise — then each changed tool is checked against the catalogue
//! as it will stand, and only then are the tools and a new version (its
//! author and what it changed) written, together. Nothing is written when
//! any step refuses.

pub mod bindings;

use crate::domain::actor::Actor;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::catalogue_history::{changed_tools, with_changes, CatalogueDiff};
use crate::domain::error::FieldError;
use crate::domain::limits::{bytes_in_words, TOOL_SCHEMA_MAX_BYTES};
use crate::error::ApiError;
use crate::server::agent::rules::compile_schema;
use crate::server::platform::db::Db;
use crate::server::store::bindings::{tool_count, tools};
use crate::server::store::catalogue::{self as store, NewVersion};
use crate::server::{AppState, ServerError};

/// Names the field of a refused tool for the door's caller: `parameters`
/// for the editor, `TOOLS/banking/check_balance/config.json: requires` for
/// an import.
pub type Place<'a> = &'a (dyn Fn(&CatalogueTool, &str) -> String + Sync);

/// [`Place`] for a door that sends one tool: the field as it is.
pub fn field_as_is(_: &CatalogueTool, field: &str) -> String {
    field.to_owned()
}

/// Refuses (403 naming `catalogue:write`) an actor who may not add or change
/// catalogue tools.
pub fn require_power(actor: &Actor) -> Result<(), ApiError> {
    if actor.may_change_catalogue() {
        Ok(())
    } else {
        Err(ApiError::MissingScope {
            scope: Actor::CATALOGUE_SCOPE.to_string(),
        })
    }
}

/// A change, checked and ready to write.
pub struct Planned {
    base: i64,
    current: Vec<CatalogueTool>,
    changes: Vec<(CatalogueTool, bool)>,
    next: Vec<CatalogueTool>,
}

impl Planned {
    /// Whether it changes nothing (no new version will be written).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The catalogue as it will stand.
    pub fn tools(&self) -> &[CatalogueTool] {
        &self.next
    }
}

/// Plans giving the catalogue `incoming` (each tool added or replaced; the
/// others stay) by `actor`, on top of version `expected` if given (stale:
/// 412). Refuses with 403 if anything would change and the actor lacks the
/// power, and with 422 naming the tool's field (through `place`) if a
/// changed tool breaks a rule against the catalogue as it will stand.
pub async fn plan(
    db: &Db,
    actor: &Actor,
    incoming: &[CatalogueTool],
    expected: Option<i64>,
    place: Place<'_>,
) -> Result<Planned, ServerError> {
    // The version first, then the tools: a change landing in between makes
    // the write below fail as stale rather than build on tools it did not
    // plan against.
    let newest = store::latest(db).await?;
    let base = newest.as_ref().map_or(0, |m| m.version);
    if expected.is_some_and(|e| e != base) {
        return Err(store::stale(newest).into());
    }
    let current = tools(db).await?;
    let changes = changed_tools(&current, incoming);
    if changes.is_empty() {
        return Ok(Planned {
            base,
            next: current.clone(),
            current,
            changes,
        });
    }
    require_power(actor)?;
    let next = with_changes(&current, &changes);
    for (tool, _) in &changes {
        check_tool(tool, &next).await.map_err(|e| match e {
            ServerError::Api(ApiError::Invalid(p)) => {
                ApiError::Invalid(FieldError::new(place(tool, &p.field), p.rule)).into()
            }
            other => other,
        })?;
    }
    Ok(Planned {
        base,
        current,
        changes,
        next,
    })
}

/// Writes `planned` as a new version by `actor`, its summary what it
/// changed (after `prefix`, as `Restored version 3: …`); 412 if the
/// catalogue changed since it was planned. The version in force after it
/// (unchanged for an empty plan).
pub async fn commit(
    db: &Db,
    planned: &Planned,
    actor: &Actor,
    prefix: Option<&str>,
) -> Result<i64, ServerError> {
    if planned.is_empty() {
        return Ok(planned.base);
    }
    let diff = CatalogueDiff::between(&planned.current, &planned.next).summary();
    let summary = match prefix {
        Some(prefix) => format!("{prefix}: {diff}"),
        None => diff,
    };
    store::append(
        db,
        NewVersion {
            base: planned.base,
            changes: &planned.changes,
            tools: &planned.next,
            summary: &summary,
            author_id: actor.user_id,
            author_name: &actor.name,
        },
    )
    .await
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The catalogue's version after it.
    pub version: i64,
    /// The ids of the tools it added or changed (none: nothing changed).
    pub tools: Vec<String>,
}

/// Plans, writes and puts in force a change (see [`plan`]); sessions whose
/// tools changed are told at once.
pub async fn change(
    state: &AppState,
    actor: &Actor,
    incoming: &[CatalogueTool],
    expected: Option<i64>,
    prefix: Option<&str>,
    place: Place<'_>,
) -> Result<Changed, ServerError> {
    let planned = plan(&state.db, actor, incoming, expected, place).await?;
    let version = commit(&state.db, &planned, actor, prefix).await?;
    if !planned.is_empty() {
        crate::server::agent::listing::rules_changed(state).await?;
    }
    Ok(Changed {
        version,
        tools: planned
            .changes
            .iter()
            .map(|(t, _)| t.id.to_string())
            .collect(),
    })
}

/// Adds (`create`) or replaces one tool: 409 if a new tool's id is taken,
/// 404 if a replaced one does not exist, then as [`change`].
pub async fn put_tool(
    state: &AppState,
    actor: &Actor,
    tool: &CatalogueTool,
    create: bool,
    expected: Option<i64>,
) -> Result<Changed, ServerError> {
    require_power(actor)?;
    let exists = tools(&state.db).await?.iter().any(|t| t.id == tool.id);
    if create && exists {
        return Err(ApiError::Conflict(format!(
            "A tool with the id \"{}\" already exists.",
            tool.id
        ))
        .into());
    }
    if !create && !exists {
        return Err(ApiError::NotFound(format!("Tool \"{}\"", tool.id)).into());
    }
    change(
        state,
        actor,
        std::slice::from_ref(tool),
        expected,
        None,
        &field_as_is,
    )
    .await
}

/// Gives every tool of version `version` back its content then, as a new
/// version on top of `expected` (history is never rewritten). Tools added
/// since are kept: bindings, agents, lessons and steps may name them.
/// Needs the power even when it would change nothing.
pub async fn restore(
    state: &AppState,
    actor: &Actor,
    version: i64,
    expected: i64,
) -> Result<Changed, ServerError> {
    require_power(actor)?;
    let old = store::version(&state.db, version).await?;
    let place = |tool: &CatalogueTool, field: &str| format!("tools.{}.{field}", tool.id);
    change(
        state,
        actor,
        &old.tools,
        Some(expected),
        Some(&format!("Restored version {version}")),
        &place,
    )
    .await
}

/// Checks a catalogue tool's fields, its requirements and effects against
/// the catalogue `after` the change, that its parameters are at most
/// [`TOOL_SCHEMA_MAX_BYTES`] and a valid JSON Schema (compiled on a blocking
/// thread, as the rules will compile it).
async fn check_tool(tool: &CatalogueTool, after: &[CatalogueTool]) -> Result<(), ServerError> {
    if let Some(problem) = tool.problems_in(after).into_iter().next() {
        return Err(ApiError::Invalid(problem).into());
    }
    let size = tool.parameters.to_string().len();
    if size > TOOL_SCHEMA_MAX_BYTES {
        return Err(ApiError::invalid(
            "parameters",
            format!(
                "must be at most {} of JSON Schema (this one is {})",
                bytes_in_words(TOOL_SCHEMA_MAX_BYTES),
                bytes_in_words(size)
            ),
        )
        .into());
    }
    let schema = tool.parameters.clone();
    tokio::task::spawn_blocking(move || compile_schema(&schema))
        .await?
        .map_err(|e| ApiError::invalid("parameters", format!("is not a valid JSON Schema: {e}")))?;
    Ok(())
}

/// Gives the catalogue its first version at start-up: the demo tools on an
/// empty database, or — on a database from before versions — the tools as
/// they stand. Runs before the rules load (nothing to announce).
pub async fn seed(db: &Db) -> Result<(), ServerError> {
    if tool_count(db).await? == 0 {
        let system = Actor::system("Demo catalogue");
        let demo = crate::server::seed::catalogue::demo_catalogue();
        let planned = plan(db, &system, &demo, Some(0), &field_as_is).await?;
        commit(db, &planned, &system, None).await?;
        return Ok(());
    }
    if store::latest(db).await?.is_none() {
        let standing = tools(db).await?;
        store::append(
            db,
            NewVersion {
                base: 0,
                changes: &[],
                tools: &standing,
                summary: "The catalogue as it stood when versions began",
                author_id: None,
                author_name: "system",
            },
        )
        .await?;
    }
    Ok(())
}

/// Adds the tools of `wanted` the catalogue does not have yet (by id; a
/// tool already there is left as it is), as one version by `system`.
/// Runs before the rules load.
pub async fn seed_missing(
    db: &Db,
    system: &Actor,
    wanted: Vec<CatalogueTool>,
) -> Result<(), ServerError> {
    let current = tools(db).await?;
    let missing: Vec<CatalogueTool> = wanted
        .into_iter()
        .filter(|w| !current.iter().any(|t| t.id == w.id))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let planned = plan(db, system, &missing, None, &field_as_is).await?;
    commit(db, &planned, system, None).await?;
    Ok(())
}
