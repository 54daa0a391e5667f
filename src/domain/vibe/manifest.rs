//! The manifest layout agents, vibes and their tools are exchanged in:
//! `VIBES/<id>/manifest.json`, `AGENTS/<id>/config.json` and
//! `TOOLS/<group>/<id>/config.json`, as a directory or an archive.
//!
//! Pure: files in, objects out (and back). Every problem names the file
//! and, where it has one, the field, so a broken set is fixed without
//! guessing; the whole-set rules (`rules::problems`) run after.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::error::FieldError;
use crate::domain::vibe::{Agent, Vibe};
use serde::de::DeserializeOwned;

/// Most files one import may hold.
pub const MAX_FILES: usize = 500;
/// Largest single file, in bytes.
pub const MAX_FILE_BYTES: usize = 256 * 1024;

/// A whole set: tools, agents and vibes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifests {
    /// Catalogue tools (their `category` is the group folder).
    pub tools: Vec<CatalogueTool>,
    /// Agents.
    pub agents: Vec<Agent>,
    /// Vibes.
    pub vibes: Vec<Vibe>,
}

fn pretty<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    text
}

/// A folder name for a tool group (`vibe-core`, `todos`): anything but
/// a-z, 0-9, `-` and `_` becomes `-`.
fn group_folder(category: &str) -> String {
    let folder: String = category
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if folder.is_empty() {
        "other".into()
    } else {
        folder
    }
}

/// Where `tool` lives in the layout (`TOOLS/todos/createTodo/config.json`).
pub fn tool_path(tool: &CatalogueTool) -> String {
    format!(
        "TOOLS/{}/{}/config.json",
        group_folder(&tool.category),
        tool.id
    )
}

/// The files of `set`, in a stable order (tools, agents, vibes).
pub fn to_files(set: &Manifests) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for tool in &set.tools {
        files.push((tool_path(tool), pretty(tool)));
    }
    for agent in &set.agents {
        files.push((format!("AGENTS/{}/config.json", agent.id), pretty(agent)));
    }
    for vibe in &set.vibes {
        files.push((format!("VIBES/{}/manifest.json", vibe.id), pretty(vibe)));
    }
    files
}

fn parse<T: DeserializeOwned>(path: &str, bytes: &[u8]) -> Result<T, FieldError> {
    serde_json::from_slice(bytes).map_err(|e| FieldError::new(path, format!("is not valid: {e}")))
}

fn mismatch(path: &str, id: &str, folder: &str) -> FieldError {
    FieldError::new(
        format!("{path}: id"),
        format!("\"{id}\" does not match its folder \"{folder}\""),
    )
}

/// The set in `files` (paths relative to the layout's root; a single
/// leading folder, as archives of a directory have, is ignored). Files
/// outside the layout are refused by name, as are ids that differ from
/// their folder. Returns every problem found.
pub fn from_files(files: &[(String, Vec<u8>)]) -> Result<Manifests, Vec<FieldError>> {
    let mut problems = Vec::new();
    if files.len() > MAX_FILES {
        return Err(vec![FieldError::new(
            "files",
            format!("at most {MAX_FILES} files"),
        )]);
    }
    let root = common_root(files);
    let mut set = Manifests::default();
    for (path, bytes) in files {
        let rel = path.trim_start_matches("./");
        let rel = root
            .as_deref()
            .and_then(|r| rel.strip_prefix(r))
            .unwrap_or(rel);
        if rel.ends_with('/')
            || rel.is_empty()
            || rel.rsplit('/').next().is_some_and(|n| n.starts_with('.'))
        {
            continue;
        }
        if bytes.len() > MAX_FILE_BYTES {
            problems.push(FieldError::new(
                rel,
                format!("is larger than {} KiB", MAX_FILE_BYTES / 1024),
            ));
            continue;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        match parts.as_slice() {
            ["TOOLS", _group, id, "config.json"] => match parse::<CatalogueTool>(rel, bytes) {
                Ok(tool) if tool.id.as_str() == *id => set.tools.push(tool),
                Ok(tool) => problems.push(mismatch(rel, tool.id.as_str(), id)),
                Err(e) => problems.push(e),
            },
            ["AGENTS", id, "config.json"] => match parse::<Agent>(rel, bytes) {
                Ok(agent) if agent.id.as_str() == *id => set.agents.push(agent),
                Ok(agent) => problems.push(mismatch(rel, agent.id.as_str(), id)),
                Err(e) => problems.push(e),
            },
            ["VIBES", id, "manifest.json"] => match parse::<Vibe>(rel, bytes) {
                Ok(vibe) if vibe.id.as_str() == *id => set.vibes.push(vibe),
                Ok(vibe) => problems.push(mismatch(rel, vibe.id.as_str(), id)),
                Err(e) => problems.push(e),
            },
            _ => problems.push(FieldError::new(
                rel,
                "is not part of the layout (VIBES/<id>/manifest.json, AGENTS/<id>/config.json, TOOLS/<group>/<id>/config.json)",
            )),
        }
    }
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(problems)
    }
}

/// The one folder every path starts with, if it is not a layout folder
/// (`switchboard-manifests/VIBES/…` → `switchboard-manifests/`).
fn common_root(files: &[(String, Vec<u8>)]) -> Option<String> {
    let first = files.first()?.0.trim_start_matches("./");
    let (top, _) = first.split_once('/')?;
    if ["TOOLS", "AGENTS", "VIBES"].contains(&top) {
        return None;
    }
    let prefix = format!("{top}/");
    files
        .iter()
        .all(|(p, _)| p.trim_start_matches("./").starts_with(&prefix))
        .then_some(prefix)
}

/// Where in the layout a whole-set problem (`agents.Oliver.tools[1]`)
/// lives: the file and the field within it
/// (`AGENTS/Oliver/config.json: tools[1]`).
pub fn locate(problem: &FieldError) -> FieldError {
    let (folder, file, rest) = if let Some(rest) = problem.field.strip_prefix("agents.") {
        ("AGENTS", "config.json", rest)
    } else if let Some(rest) = problem.field.strip_prefix("vibes.") {
        ("VIBES", "manifest.json", rest)
    } else {
        return problem.clone();
    };
    let (id, field) = rest.split_once('.').unwrap_or((rest, ""));
    FieldError::new(
        format!("{folder}/{id}/{file}: {field}"),
        problem.rule.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vibe::demo;

    fn demo_set() -> Manifests {
        Manifests {
            tools: demo::core_tools(),
            agents: demo::agents(),
            vibes: demo::vibes(),
        }
    }

    #[test]
    fn the_layout_round_trips_with_or_without_a_root_folder() {
        let set = demo_set();
        let files = to_files(&set);
        assert!(files
            .iter()
            .any(|(p, _)| p == "TOOLS/vibe-core/switchAgent/config.json"));
        assert!(files.iter().any(|(p, _)| p == "AGENTS/Oliver/config.json"));
        assert!(files.iter().any(|(p, _)| p == "VIBES/todos/manifest.json"));
        assert_eq!(from_files(&files).unwrap(), set);
        let rooted: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, b)| (format!("export/{p}"), b.clone()))
            .collect();
        assert_eq!(from_files(&rooted).unwrap(), set);
    }

    #[test]
    fn problems_name_the_file_and_field() {
        let mut files = to_files(&demo_set());
        files.push((
            "AGENTS/Ghost/config.json".into(),
            b"{\"id\":\"Oliver2\"".to_vec(),
        ));
        files.push(("README.md".into(), b"hi".to_vec()));
        let oliver = files
            .iter_mut()
            .find(|(p, _)| p == "AGENTS/Oliver/config.json")
            .unwrap();
        oliver.1 = String::from_utf8(oliver.1.clone())
            .unwrap()
            .replace("\"Oliver\"", "\"Olly\"")
            .into_bytes();
        let problems = from_files(&files).unwrap_err();
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "AGENTS/Oliver/config.json: id",
                "AGENTS/Ghost/config.json",
                "README.md"
            ]
        );
        assert!(problems[0]
            .rule
            .contains("\"Olly\" does not match its folder \"Oliver\""));
        assert!(problems[1].rule.contains("is not valid"));
        let located = locate(&FieldError::new("agents.Oliver.tools[1]", "x"));
        assert_eq!(located.field, "AGENTS/Oliver/config.json: tools[1]");
    }
}
