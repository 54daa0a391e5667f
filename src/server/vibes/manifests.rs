//! Agents, vibes and their tools as files: export as a `.zip` or `.tar` in
//! the manifest layout, tools in Switchboard's form or the seed's
//! (Ultravox parameters, `domain::vibe::tool_file`), import an archive or a
//! directory (`SWITCHBOARD_MANIFESTS_DIR` at start-up) in either form and
//! in seed 003's own tree. An import is checked whole — each file, each
//! tool, then the set's rules — before anything is written, and a problem
//! names the file and the field.

use crate::domain::actor::Actor;
use crate::domain::catalogue::CatalogueTool;
use crate::domain::error::FieldError;
use crate::domain::limits::{field_excerpt, nul_at, NUL_RULE};
use crate::domain::vibe::manifest::{
    locate, read_files, to_files_in, tool_path, Manifests, MAX_FILES, MAX_FILE_BYTES,
};
use crate::domain::vibe::rules::problems;
use crate::domain::vibe::tool_file::Form;
use crate::error::ApiError;
use crate::server::store::bindings as stored;
use crate::server::{catalogue, vibes};
use crate::server::{AppState, ServerError};
use std::collections::HashSet;
use std::io::{Cursor, Read, Write};
use std::path::Path;

/// An archive's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// `.zip`.
    Zip,
    /// `.tar` (uncompressed).
    Tar,
}

impl ArchiveFormat {
    /// Parses `zip` or `tar`.
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        match raw {
            "zip" => Ok(Self::Zip),
            "tar" => Ok(Self::Tar),
            _ => Err(ApiError::invalid("format", "must be zip or tar")),
        }
    }

    /// Its media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Zip => "application/zip",
            Self::Tar => "application/x-tar",
        }
    }

    /// Its file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Zip => "zip",
            Self::Tar => "tar",
        }
    }
}

/// The agents and vibes in force, with the catalogue tools they use.
pub async fn current(state: &AppState) -> Result<Manifests, ServerError> {
    let (agents, vibes) = vibes::all(state).await?;
    let agents: Vec<_> = agents.into_iter().map(|a| a.value).collect();
    let vibes: Vec<_> = vibes.into_iter().map(|v| v.value).collect();
    let used: HashSet<&str> = agents
        .iter()
        .flat_map(|a| a.tools.iter())
        .chain(
            vibes
                .iter()
                .flat_map(|v| v.core_tools.iter().chain(&v.app_tools)),
        )
        .map(|t| t.as_str())
        .collect();
    let tools = stored::tools(&state.db)
        .await?
        .into_iter()
        .filter(|t| used.contains(t.id.as_str()))
        .collect();
    Ok(Manifests {
        tools,
        agents,
        vibes,
    })
}

fn archive_error(e: impl std::fmt::Display) -> ServerError {
    ServerError::Config(format!("writing the archive: {e}"))
}

/// `set` as an archive in `format`, tools in Switchboard's form.
pub fn archive(set: &Manifests, format: ArchiveFormat) -> Result<Vec<u8>, ServerError> {
    archive_in(set, format, Form::Switchboard)
}

/// `set` as an archive in `format`, tools in `form`.
pub fn archive_in(
    set: &Manifests,
    format: ArchiveFormat,
    form: Form,
) -> Result<Vec<u8>, ServerError> {
    let files = to_files_in(set, form);
    match format {
        ArchiveFormat::Zip => {
            let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            for (path, bytes) in &files {
                zip.start_file(path.as_str(), options)
                    .map_err(archive_error)?;
                zip.write_all(bytes).map_err(archive_error)?;
            }
            Ok(zip.finish().map_err(archive_error)?.into_inner())
        }
        ArchiveFormat::Tar => {
            let mut tar = tar::Builder::new(Vec::new());
            for (path, bytes) in &files {
                let mut header = tar::Header::new_gnu();
                header.set_size(bytes.len() as u64);
                header.set_mode(0o644);
                header.set_cksum();
                tar.append_data(&mut header, path, bytes.as_slice())
                    .map_err(archive_error)?;
            }
            tar.into_inner().map_err(archive_error)
        }
    }
}

fn bad(file: &str, rule: impl Into<String>) -> ApiError {
    ApiError::Invalid(FieldError::new(file, rule))
}

/// The files of a `.zip` or `.tar` (told apart by their first bytes), each
/// read at most [`MAX_FILE_BYTES`] (a file claiming less and inflating to
/// more is refused, so a zip bomb stops at the limit).
pub fn unpack(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let read = |name: &str, reader: &mut dyn Read| -> Result<Vec<u8>, ApiError> {
        let mut out = Vec::new();
        reader
            .take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| bad(name, format!("cannot be read: {e}")))?;
        if out.len() > MAX_FILE_BYTES {
            return Err(bad(
                name,
                format!("is larger than {} KiB", MAX_FILE_BYTES / 1024),
            ));
        }
        Ok(out)
    };
    let mut files = Vec::new();
    if bytes.starts_with(b"PK\x03\x04") {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| bad("archive", format!("is not a readable zip: {e}")))?;
        if zip.len() > MAX_FILES {
            return Err(bad("archive", format!("holds more than {MAX_FILES} files")));
        }
        for i in 0..zip.len() {
            let mut entry = zip
                .by_index(i)
                .map_err(|e| bad("archive", format!("entry {i} cannot be read: {e}")))?;
            if entry.is_dir() {
                continue;
            }
            let name = entry.name().to_owned();
            let data = read(&name, &mut entry)?;
            files.push((name, data));
        }
    } else if bytes.len() > 262 && &bytes[257..262] == b"ustar" {
        let mut tar = tar::Archive::new(Cursor::new(bytes));
        let entries = tar
            .entries()
            .map_err(|e| bad("archive", format!("is not a readable tar: {e}")))?;
        for entry in entries {
            let mut entry =
                entry.map_err(|e| bad("archive", format!("has a broken entry: {e}")))?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            if files.len() >= MAX_FILES {
                return Err(bad("archive", format!("holds more than {MAX_FILES} files")));
            }
            let name = entry
                .path()
                .map_err(|e| bad("archive", format!("has a bad path: {e}")))?
                .to_string_lossy()
                .into_owned();
            let data = read(&name, &mut entry)?;
            files.push((name, data));
        }
    } else {
        return Err(bad("archive", "must be a .zip or a .tar"));
    }
    // A JSON file holding U+0000, refused as a JSON body would be.
    if let Some((name, field)) = files
        .iter()
        .find_map(|(name, data)| nul_at(data).map(|field| (name, field)))
    {
        return Err(bad(name, format!("{field}: {NUL_RULE}")));
    }
    // Two entries at one path (`a/x.json` and `./a/x.json` too): which one
    // is meant cannot be told, and the last would win without a word.
    let mut seen = std::collections::HashSet::new();
    if let Some((name, _)) = files
        .iter()
        .find(|(name, _)| !seen.insert(name.trim_start_matches("./")))
    {
        return Err(bad(
            name,
            "is in the archive twice: keep one copy of each file",
        ));
    }
    Ok(files)
}

/// The files under `dir` in the layout (only `TOOLS`, `AGENTS`, `VIBES`
/// are read, in `dir` or else in `dir/src/lib`), as paths relative to the
/// folder holding them.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, ServerError> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), ServerError> {
        let entries = std::fs::read_dir(at)
            .map_err(|e| ServerError::Config(format!("{}: {e}", at.display())))?;
        for entry in entries {
            let path = entry
                .map_err(|e| ServerError::Config(format!("{}: {e}", at.display())))?
                .path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else if out.len() < MAX_FILES + 1 {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = std::fs::read(&path)
                    .map_err(|e| ServerError::Config(format!("{}: {e}", path.display())))?;
                out.push((rel, bytes));
            }
        }
        Ok(())
    }
    const LAYOUT: [&str; 3] = ["TOOLS", "AGENTS", "VIBES"];
    // A checkout of seed 003's repository keeps the layout in src/lib/.
    let root = [dir.to_path_buf(), dir.join("src").join("lib")]
        .into_iter()
        .find(|root| LAYOUT.iter().any(|top| root.join(top).is_dir()))
        .unwrap_or_else(|| dir.to_path_buf());
    let mut files = Vec::new();
    for top in LAYOUT {
        let sub = root.join(top);
        if sub.is_dir() {
            walk(&root, &sub, &mut files)?;
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// What an import did: how many of each it imported, and the layout files
/// it read but did not import, each with why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Imported {
    /// Tools given to the catalogue (added, changed or already so).
    pub tools: usize,
    /// Agents in force now.
    pub agents: usize,
    /// Vibes in force now.
    pub vibes: usize,
    /// Files not imported (`field` the file, `rule` why), such as the
    /// seed's ungrouped copies of grouped tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<FieldError>,
    /// The archive carried no agent and no vibe, so those in force were
    /// kept as they were (a tools-only archive adds tools; it does not
    /// empty the set).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
}

/// Imports `files` by `actor`: parses the layout, plans the catalogue
/// change its tools make (through `server::catalogue`: a key without
/// `catalogue:write` whose files would add or change a tool is refused
/// whole, 403; each new or changed tool is checked as the catalogue editor
/// would, on top of version `expected` if given, its problems naming the
/// file it came from), checks the set's rules against the catalogue with
/// those tools, and only then writes the tools (a new catalogue version,
/// if any changed) and replaces every agent and vibe — unless the archive
/// carries none of either, when those in force are kept.
pub async fn import(
    state: &AppState,
    files: &[(String, Vec<u8>)],
    actor: &Actor,
    expected: Option<i64>,
) -> Result<Imported, ServerError> {
    let read = read_files(files).map_err(|mut p| ApiError::Invalid(p.remove(0)))?;
    let set = &read.set;
    let place = |tool: &CatalogueTool, field: &str| {
        let file = read
            .sources
            .get(tool.id.as_str())
            .cloned()
            .unwrap_or_else(|| tool_path(tool));
        format!("{file}: {field}")
    };
    let planned = catalogue::plan(&state.db, actor, &set.tools, expected, &place).await?;
    let ids: HashSet<String> = planned.tools().iter().map(|t| t.id.to_string()).collect();
    if let Some(problem) = problems(&set.agents, &set.vibes, &ids).into_iter().next() {
        return Err(ApiError::Invalid(locate(&problem)).into());
    }
    let kept = set.agents.is_empty() && set.vibes.is_empty();
    catalogue::commit(&state.db, &planned, actor, Some("Manifest import")).await?;
    let (agents, vibes) = if kept {
        if !planned.is_empty() {
            crate::server::agent::listing::rules_changed(state).await?;
        }
        use crate::server::store::vibes as in_force;
        (
            in_force::agents(&state.db).await?.len(),
            in_force::vibes(&state.db).await?.len(),
        )
    } else {
        let replaced = vibes::replace_all(state, &set.agents, &set.vibes, &actor.name).await;
        if replaced.is_err() && !planned.is_empty() {
            // The tools are in; put them in force even though the set was not.
            crate::server::agent::listing::rules_changed(state).await?;
        }
        replaced?;
        (set.agents.len(), set.vibes.len())
    };
    Ok(Imported {
        kept,
        tools: set.tools.len(),
        agents,
        vibes,
        // Named by the archive's own file names: each in a line at most.
        ignored: read
            .ignored
            .iter()
            .map(|p| FieldError::new(field_excerpt(&p.field), p.rule.clone()))
            .collect(),
    })
}

/// Gives a database without vibes the set in `SWITCHBOARD_MANIFESTS_DIR`
/// (if set); a broken set stops start-up naming the file and field.
pub async fn seed_from_dir(state: &AppState) -> Result<bool, ServerError> {
    let Some(dir) = state.config.manifests_dir.clone() else {
        return Ok(false);
    };
    if crate::server::store::vibes::vibe_count(&state.db).await? > 0 {
        tracing::info!(
            dir,
            "SWITCHBOARD_MANIFESTS_DIR is set, but the database already has vibes: they are kept"
        );
        return Ok(false);
    }
    let files = read_dir(Path::new(&dir))?;
    if files.is_empty() {
        return Err(ServerError::Config(format!(
            "SWITCHBOARD_MANIFESTS_DIR {dir} has no VIBES/, AGENTS/ or TOOLS/ files"
        )));
    }
    let system = Actor::system("SWITCHBOARD_MANIFESTS_DIR");
    let imported = import(state, &files, &system, None)
        .await
        .map_err(|e| match e {
            ServerError::Api(ApiError::Invalid(p)) => ServerError::Config(format!(
                "SWITCHBOARD_MANIFESTS_DIR {dir}: {}: {}",
                p.field, p.rule
            )),
            other => other,
        })?;
    for skipped in &imported.ignored {
        tracing::info!(
            dir,
            file = skipped.field,
            why = skipped.rule,
            "not imported"
        );
    }
    tracing::info!(
        dir,
        tools = imported.tools,
        agents = imported.agents,
        vibes = imported.vibes,
        "agents and vibes loaded from SWITCHBOARD_MANIFESTS_DIR"
    );
    Ok(true)
}
