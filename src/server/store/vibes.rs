//! Agents and vibes, each a JSON object in its manifest layout with an
//! optimistic version: a save names the version it started from, and a
//! stale one changes nothing. The whole set is replaced at once by an
//! import.

use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use crate::server::platform::db::now;
use crate::server::platform::db::{Conn, Db};
use crate::server::ServerError;

/// An object as stored, with its version.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    /// The object.
    pub value: T,
    /// Its version (1 when first stored).
    pub version: i64,
}

fn corrupt(what: &str, id: &str, e: serde_json::Error) -> ServerError {
    ServerError::Config(format!("{what} {id} is unreadable: {e}"))
}

/// Every agent, in menu order.
pub async fn agents(db: &Db) -> Result<Vec<Versioned<Agent>>, ServerError> {
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT id, config, version FROM agents ORDER BY position, id")
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(id, config, version)| {
            Ok(Versioned {
                value: serde_json::from_str(&config).map_err(|e| corrupt("agent", &id, e))?,
                version,
            })
        })
        .collect()
}

/// Every vibe, in menu order.
pub async fn vibes(db: &Db) -> Result<Vec<Versioned<Vibe>>, ServerError> {
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT id, manifest, version FROM vibes ORDER BY position, id")
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(id, manifest, version)| {
            Ok(Versioned {
                value: serde_json::from_str(&manifest).map_err(|e| corrupt("vibe", &id, e))?,
                version,
            })
        })
        .collect()
}

/// How many vibes there are (none: the demo or the manifests directory
/// seeds them).
pub async fn vibe_count(db: &Db) -> Result<i64, ServerError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM vibes")
        .fetch_one(db)
        .await?)
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Which table an object lives in.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `agents`.
    Agent,
    /// `vibes`.
    Vibe,
}

impl Kind {
    fn table(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Agent => ("agents", "config", "Agent"),
            Kind::Vibe => ("vibes", "manifest", "Vibe"),
        }
    }
}

/// Stores `body` (JSON) as object `id` of `kind`: a new one when
/// `expected` is `None` (409 if it exists), else an update of version
/// `expected` (412 naming the current version if it moved on, 404 if it
/// is gone). Returns the new version.
pub async fn put(
    tx: &mut Conn,
    kind: Kind,
    id: &str,
    body: &str,
    expected: Option<i64>,
    by: &str,
) -> Result<i64, ServerError> {
    let (table, column, noun) = kind.table();
    let current: Option<i64> =
        sqlx::query_scalar(&format!("SELECT version FROM {table} WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
    match (current, expected) {
        (Some(_), None) => Err(ApiError::Conflict(format!(
            "{noun} \"{id}\" already exists; send its version (If-Match) to change it."
        ))
        .into()),
        (None, Some(_)) => Err(ApiError::NotFound(format!("{noun} \"{id}\"")).into()),
        (Some(current), Some(expected)) if current != expected => Err(ApiError::PreconditionFailed(format!(
            "{noun} \"{id}\" is at version {current}, not {expected}: someone saved it since you loaded it. Reload and make your change again."
        ))
        .into()),
        (Some(current), Some(_)) => {
            sqlx::query(&format!(
                "UPDATE {table} SET {column} = $1, version = version + 1, updated_at = $2, updated_by = $3 WHERE id = $4 AND version = $5"
            ))
            .bind(body)
            .bind(now())
            .bind(by)
            .bind(id)
            .bind(current)
            .execute(&mut *tx)
            .await?;
            Ok(current + 1)
        }
        (None, None) => {
            insert_at(tx, kind, id, body, 1, by).await?;
            Ok(1)
        }
    }
}

/// Stores agent `agent` (see [`put`]).
pub async fn put_agent(
    tx: &mut Conn,
    agent: &Agent,
    expected: Option<i64>,
    by: &str,
) -> Result<i64, ServerError> {
    put(
        tx,
        Kind::Agent,
        agent.id.as_str(),
        &json(agent),
        expected,
        by,
    )
    .await
}

/// Stores vibe `vibe` (see [`put`]).
pub async fn put_vibe(
    tx: &mut Conn,
    vibe: &Vibe,
    expected: Option<i64>,
    by: &str,
) -> Result<i64, ServerError> {
    put(tx, Kind::Vibe, vibe.id.as_str(), &json(vibe), expected, by).await
}

/// Replaces every agent and vibe with `agents` and `vibes` (an import).
/// Versions carry on, so an editor holding one from before the import is
/// refused (412) rather than overwriting it: an object kept unchanged keeps
/// its version, a changed one gets the next, and only an id new to its
/// table starts at 1.
pub async fn replace_all(
    tx: &mut Conn,
    agents: &[Agent],
    vibes: &[Vibe],
    by: &str,
) -> Result<(), ServerError> {
    let agents: Vec<(&str, String)> = agents.iter().map(|a| (a.id.as_str(), json(a))).collect();
    let vibes: Vec<(&str, String)> = vibes.iter().map(|v| (v.id.as_str(), json(v))).collect();
    // Vibes name agents: both tables are read before either is emptied.
    let before = (
        stored(tx, Kind::Agent).await?,
        stored(tx, Kind::Vibe).await?,
    );
    sqlx::query("DELETE FROM vibes").execute(&mut *tx).await?;
    sqlx::query("DELETE FROM agents").execute(&mut *tx).await?;
    for (kind, objects, before) in [
        (Kind::Agent, &agents, &before.0),
        (Kind::Vibe, &vibes, &before.1),
    ] {
        for (id, body) in objects {
            let version = match before.get(*id) {
                Some((old, version)) if old == body => *version,
                Some((_, version)) => version + 1,
                None => 1,
            };
            insert_at(tx, kind, id, body, version, by).await?;
        }
    }
    Ok(())
}

/// Every object of `kind` as stored: id → (JSON, version).
async fn stored(
    tx: &mut Conn,
    kind: Kind,
) -> Result<std::collections::HashMap<String, (String, i64)>, ServerError> {
    let (table, column, _) = kind.table();
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as(&format!("SELECT id, {column}, version FROM {table}"))
            .fetch_all(&mut *tx)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, body, version)| (id, (body, version)))
        .collect())
}

/// Inserts object `id` of `kind` at `version`, last in the table's order.
async fn insert_at(
    tx: &mut Conn,
    kind: Kind,
    id: &str,
    body: &str,
    version: i64,
    by: &str,
) -> Result<(), ServerError> {
    let (table, column, _) = kind.table();
    sqlx::query(&format!(
        "INSERT INTO {table} (id, {column}, version, position, updated_at, updated_by)
         VALUES ($1, $2, $3, (SELECT COALESCE(MAX(position), 0) + 1 FROM {table}), $4, $5)"
    ))
    .bind(id)
    .bind(body)
    .bind(version)
    .bind(now())
    .bind(by)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
