//! Saving tool bindings: validation against what is stored, normalisation,
//! the version summary; seeding the demo catalogue's workflows; and
//! the start-up bindings file: seeding from it, comparing it with the
//! bindings in force, importing it as a new version.
//!
//! The browser and the JSON API both save through here, so a document is
//! validated exactly the same way whichever door it comes in by.

use crate::domain::bindings::{BindingsDiff, BindingsVersion, SaveOutcome, ToolBindings};
use crate::domain::bindings_file::{BindingsFileStatus, FileComparison};
use crate::domain::catalogue::known_checks;
use crate::domain::error::BindingProblem;
use crate::error::ApiError;
use crate::server::platform::db::Db;
use crate::server::store::bindings as store;
use crate::server::{AppState, ServerError};

/// Validates `document` against the stored catalogue and workflows (its
/// labels against the checks the catalogue's effects set), normalises it
/// and stores it as the version after `expected` — unless it is what is in
/// force at `expected` already: then nothing is stored, and the answer is
/// `expected` with a note saying so.
pub async fn save_document(
    db: &Db,
    expected: i64,
    document: &ToolBindings,
    author_id: Option<i64>,
    author_name: &str,
    summary_prefix: Option<&str>,
) -> Result<SaveOutcome, ServerError> {
    let (tools, workflows) = store::known_ids(db).await?;
    let refused = |problems: Vec<BindingProblem>| {
        let rule = problems
            .iter()
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        ApiError::invalid(problems[0].at.clone(), rule)
    };
    let normalised = document.validate(&tools, &workflows).map_err(refused)?;
    let checks = known_checks(&store::tools(db).await?);
    let label_problems = document.labels.problems(&checks);
    if !label_problems.is_empty() {
        return Err(refused(label_problems).into());
    }
    let (previous, at) = store::current(db)
        .await?
        .map(|v| (v.bindings, v.meta.version))
        .unwrap_or_default();
    // The same bindings again (a retried PUT, a file that is what is in
    // force) are no new version: history records changes.
    if at > 0 && at == expected && previous == normalised.bindings {
        let mut notes = normalised.notes;
        notes.push(format!(
            "Nothing changed: the bindings stay at version {at}."
        ));
        return Ok(SaveOutcome { version: at, notes });
    }
    let diff = BindingsDiff::between(&previous, &normalised.bindings);
    let summary = match summary_prefix {
        Some(prefix) => format!("{prefix}: {}", diff.summary()),
        None => diff.summary(),
    };
    let version = store::save(
        db,
        expected,
        &normalised.bindings,
        &summary,
        author_id,
        author_name,
    )
    .await?;
    Ok(SaveOutcome {
        version,
        notes: normalised.notes,
    })
}

/// Saves like [`save_document`], then puts the new rules in force at once
/// and tells every open session whose tools changed. Both doors (the matrix
/// page and `PUT /api/bindings`) save through here.
pub async fn save_in_force(
    state: &AppState,
    expected: i64,
    document: &ToolBindings,
    author_id: Option<i64>,
    author_name: &str,
    summary_prefix: Option<&str>,
) -> Result<SaveOutcome, ServerError> {
    let saved = save_document(
        &state.db,
        expected,
        document,
        author_id,
        author_name,
        summary_prefix,
    )
    .await?;
    // An unchanged document keeps its version, and the rules in force.
    if saved.version != expected {
        crate::server::agent::listing::rules_changed(state).await?;
    }
    Ok(saved)
}

/// Fills an empty catalogue with the demo tools (its first version) and
/// workflows; gives a catalogue from before versions its first version.
pub async fn seed_catalogue(db: &Db) -> Result<(), ServerError> {
    let fresh = store::tool_count(db).await? == 0;
    crate::server::catalogue::seed(db).await?;
    if !fresh {
        return Ok(());
    }
    for workflow in crate::server::seed::catalogue::demo_workflows() {
        store::put_workflow(db, &workflow, true).await?;
    }
    Ok(())
}

/// Gives a database without bindings its first version: the file named by
/// `SWITCHBOARD_BINDINGS_FILE` if set (an unreadable or invalid file is an
/// error that stops start-up), else the demo default. A database that has
/// bindings keeps them; if a file is set, the log says so and whether the
/// file differs (a warning then: an admin decides on `/bindings`).
pub async fn seed_bindings(db: &Db, file: Option<&str>) -> Result<(), ServerError> {
    if let Some(in_force) = store::current(db).await? {
        if let Some(path) = file {
            let status = compare_file(path, &in_force).await;
            match status.startup_report() {
                (true, line) => tracing::warn!("{line}"),
                (false, line) => tracing::info!("{line}"),
            }
        }
        return Ok(());
    }
    let (document, source) = match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                ServerError::Config(format!("SWITCHBOARD_BINDINGS_FILE {path}: {e}"))
            })?;
            let document: ToolBindings = serde_json::from_str(&text).map_err(|e| {
                ServerError::Config(format!(
                    "SWITCHBOARD_BINDINGS_FILE {path} is not a tool-bindings document: {e}"
                ))
            })?;
            (document, format!("Loaded from {path}"))
        }
        None => (ToolBindings::demo(), "Demo default".to_owned()),
    };
    save_document(db, 0, &document, None, "system", Some(&source))
        .await
        .map_err(|e| match e {
            ServerError::Api(api) => ServerError::Config(format!("{source}: {api}")),
            other => other,
        })?;
    Ok(())
}

/// Reads the bindings file at `path` and compares it with `in_force`.
async fn compare_file(path: &str, in_force: &BindingsVersion) -> BindingsFileStatus {
    let text = tokio::fs::read_to_string(path)
        .await
        .map_err(|e| format!("it cannot be read: {e}"));
    BindingsFileStatus {
        path: path.to_owned(),
        version: in_force.meta.version,
        comparison: FileComparison::of(text.as_deref().map_err(Clone::clone), &in_force.bindings),
    }
}

/// How `SWITCHBOARD_BINDINGS_FILE` compares with the bindings in force,
/// read afresh (the file may have changed since start-up); `None` when no
/// file is configured or no bindings exist yet.
pub async fn file_status(state: &AppState) -> Result<Option<BindingsFileStatus>, ServerError> {
    let Some(path) = state.config.bindings_file.as_deref() else {
        return Ok(None);
    };
    let Some(in_force) = store::current(&state.db).await? else {
        return Ok(None);
    };
    Ok(Some(compare_file(path, &in_force).await))
}

/// Saves the bindings file's current content as the version after
/// `expected`, through the same validation, concurrent-edit check and
/// announcement as any save (a stale `expected` is a 409 naming who saved).
pub async fn import_file(
    state: &AppState,
    expected: i64,
    author_id: i64,
    author_name: &str,
) -> Result<SaveOutcome, ServerError> {
    let path = state
        .config
        .bindings_file
        .as_deref()
        .ok_or_else(|| ApiError::NotFound("A bindings file to import".into()))?;
    let text = tokio::fs::read_to_string(path)
        .await
        .map_err(|e| ApiError::invalid("file", format!("{path} cannot be read: {e}")))?;
    let document: ToolBindings = serde_json::from_str(&text).map_err(|e| {
        ApiError::invalid(
            "file",
            format!("{path} is not a tool-bindings document: {e}"),
        )
    })?;
    save_in_force(
        state,
        expected,
        &document,
        Some(author_id),
        author_name,
        Some(&format!("Imported from {path}")),
    )
    .await
}

#[cfg(test)]
mod tests {
    use crate::domain::effect::Effect;
    use crate::server::seed::catalogue::demo_catalogue;

    /// Databases made before effects existed get the demo tools' effects
    /// and requirements from migration 0007; they must be exactly what a
    /// new database is seeded with.
    #[test]
    fn the_upgrade_migration_gives_the_demo_tools_their_seeded_rules() {
        let sql = include_str!("../../../migrations/sqlite/0007_tool_effects.sql");
        let quoted = |line: &str, n: usize| line.split('\'').nth(n).unwrap_or_default().to_owned();
        for tool in demo_catalogue() {
            let id = tool.id.as_str();
            let find = |column: &str| {
                sql.lines()
                    .find(|l| {
                        l.starts_with(&format!("UPDATE catalogue_tools SET {column}"))
                            && l.contains(&format!("id = '{id}'"))
                    })
                    .map(|l| quoted(l, 1))
            };
            let effects: Vec<Effect> = find("effects")
                .map(|json| serde_json::from_str(&json).unwrap())
                .unwrap_or_default();
            assert_eq!(effects, tool.effects, "effects of {id}");
            let requires: Vec<String> = find("requires")
                .map(|json| serde_json::from_str(&json).unwrap())
                .unwrap_or_default();
            assert_eq!(requires, tool.requires, "requires of {id}");
        }
    }
}
