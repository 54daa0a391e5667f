//! Saving agents and vibes: every change is checked against the whole set
//! (the rules span objects: a vibe's default agent, an agent's tools within
//! every vibe that lists it) and the catalogue, written with its version
//! check, and put in force at once — sessions whose tools changed are told.
//!
//! Saves are serialised by one lock, so two saves that are each valid
//! alone can never combine into an invalid set.

pub mod manifests;

use crate::domain::vibe::demo;
use crate::domain::vibe::rules::problems;
use crate::domain::vibe::{Agent, Vibe};
use crate::error::ApiError;
use crate::server::store::bindings as catalogue;
use crate::server::store::vibes::{self as store, Versioned};
use crate::server::{AppState, ServerError};
use std::collections::HashSet;

/// Every agent and vibe with its version.
pub async fn all(
    state: &AppState,
) -> Result<(Vec<Versioned<Agent>>, Vec<Versioned<Vibe>>), ServerError> {
    Ok((
        store::agents(&state.db).await?,
        store::vibes(&state.db).await?,
    ))
}

async fn catalogue_ids(state: &AppState) -> Result<HashSet<String>, ServerError> {
    Ok(catalogue::tools(&state.db)
        .await?
        .into_iter()
        .map(|t| t.id.to_string())
        .collect())
}

/// Refuses `agents` + `vibes` with the first rule they break (422 naming
/// object, field and id).
pub async fn check(state: &AppState, agents: &[Agent], vibes: &[Vibe]) -> Result<(), ServerError> {
    match problems(agents, vibes, &catalogue_ids(state).await?)
        .into_iter()
        .next()
    {
        Some(problem) => Err(ApiError::Invalid(problem).into()),
        None => Ok(()),
    }
}

/// What a save changes.
pub enum Change {
    /// An agent, new (`None`) or at the version given.
    Agent(Agent, Option<i64>),
    /// A vibe, new (`None`) or at the version given.
    Vibe(Vibe, Option<i64>),
}

/// Saves one agent or vibe by `by` if the whole set stays valid; returns
/// its new version. Stale → 412, new but existing → 409, gone → 404.
pub async fn save(state: &AppState, change: Change, by: &str) -> Result<i64, ServerError> {
    let versions = save_all(state, vec![change], by).await?;
    Ok(versions[0])
}

/// Saves several agents and vibes by `by` as one change (a vibe with the
/// agent × tool matrix edited beside it): checked together as they will
/// stand, written in one transaction, so either every one is saved or, on
/// the first stale version or broken rule, none is. Returns the new
/// versions in `changes`' order.
pub async fn save_all(
    state: &AppState,
    changes: Vec<Change>,
    by: &str,
) -> Result<Vec<i64>, ServerError> {
    let _guard = state.lock_manifests().await?;
    let (agents, vibes) = all(state).await?;
    let mut agents: Vec<Agent> = agents.into_iter().map(|a| a.value).collect();
    let mut vibes: Vec<Vibe> = vibes.into_iter().map(|v| v.value).collect();
    for change in &changes {
        match change {
            Change::Agent(agent, _) => match agents.iter_mut().find(|a| a.id == agent.id) {
                Some(slot) => *slot = agent.clone(),
                None => agents.push(agent.clone()),
            },
            Change::Vibe(vibe, _) => match vibes.iter_mut().find(|v| v.id == vibe.id) {
                Some(slot) => *slot = vibe.clone(),
                None => vibes.push(vibe.clone()),
            },
        }
    }
    check(state, &agents, &vibes).await?;
    let mut tx = state.db.begin().await?;
    let mut versions = Vec::with_capacity(changes.len());
    for change in &changes {
        versions.push(match change {
            Change::Agent(agent, expected) => {
                store::put_agent(&mut tx, agent, *expected, by).await?
            }
            Change::Vibe(vibe, expected) => store::put_vibe(&mut tx, vibe, *expected, by).await?,
        });
    }
    tx.commit().await?;
    crate::server::agent::listing::rules_changed(state).await?;
    Ok(versions)
}

/// Replaces the whole set with `agents` and `vibes` (an import) if they
/// are valid together; nothing is written otherwise.
pub async fn replace_all(
    state: &AppState,
    agents: &[Agent],
    vibes: &[Vibe],
    by: &str,
) -> Result<(), ServerError> {
    let _guard = state.lock_manifests().await?;
    check(state, agents, vibes).await?;
    let mut tx = state.db.begin().await?;
    store::replace_all(&mut tx, agents, vibes, by).await?;
    tx.commit().await?;
    crate::server::agent::listing::rules_changed(state).await
}

/// Gives a database without vibes the demo set (adding the core and todo
/// tools to the catalogue where missing). Runs before the rules load.
pub async fn seed_demo(state: &AppState) -> Result<(), ServerError> {
    if store::vibe_count(&state.db).await? > 0 {
        return Ok(());
    }
    crate::server::catalogue::seed_missing(
        &state.db,
        &crate::domain::actor::Actor::system("Demo vibe"),
        demo::core_tools()
            .into_iter()
            .chain(crate::domain::todos::todo_tools())
            .collect(),
    )
    .await?;
    let (agents, vibes) = (demo::agents(), demo::vibes());
    check(state, &agents, &vibes).await?;
    let mut tx = state.db.begin().await?;
    store::replace_all(&mut tx, &agents, &vibes, "demo").await?;
    tx.commit().await?;
    Ok(())
}
