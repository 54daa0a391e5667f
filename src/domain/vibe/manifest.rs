//! The manifest layout agents, vibes and their tools are exchanged in:
//! `VIBES/<id>/manifest.json`, `AGENTS/<id>/config.json` and
//! `TOOLS/<group>/<id>/config.json`, as a directory or an archive — the
//! layout of seed 003, whose own tree imports as it is.
//!
//! Pure: files in, objects out (and back). Every problem names the file
//! and, where it has one, the field, so a broken set is fixed without
//! guessing; the whole-set rules (`rules::problems`) run after.
//!
//! The rules of reading a tree:
//! - The layout's root is the tree's, its one top folder (an archive of a
//!   folder), or `src/lib/` in either (an archive of the seed's
//!   repository). Beside `src/lib/`, a repository's other files are
//!   skipped; anywhere else a file outside the layout is refused by name.
//! - An object's `id` is its file's; its folder must have the same name,
//!   ignoring case (the seed keeps vibe `todos` in `VIBES/Todos`).
//! - Files beside a `config.json` or `manifest.json` (the seed's
//!   `function.ts`) are skipped: Switchboard runs its own tools and never
//!   code from an import.
//! - A tool's file is in either form (`tool_file`). A tool directly under
//!   `TOOLS/` (`TOOLS/<id>/config.json`) has no group; where the same id is
//!   also in a group folder (the seed has `TOOLS/hangUp` beside
//!   `TOOLS/core/hangUp`, and loads the latter), the grouped file is
//!   imported and the other is reported as ignored. Two files in group
//!   folders with one id are refused, naming both.

use crate::domain::catalogue::CatalogueTool;
use crate::domain::error::FieldError;
use crate::domain::limits::field_excerpt;
use crate::domain::vibe::tool_file::{self, group_folder, Form};
use crate::domain::vibe::{Agent, Vibe};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Most files one import may hold.
pub const MAX_FILES: usize = 500;
/// Largest single file, in bytes.
pub const MAX_FILE_BYTES: usize = 256 * 1024;

/// The layout's folders.
const LAYOUT: [&str; 3] = ["TOOLS", "AGENTS", "VIBES"];

/// Where the layout may sit in a repository's tree (seed 003's).
const REPOSITORY_ROOT: &str = "src/lib/";

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

/// A set as read from files, with where its tools came from and what was
/// read but not imported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Read {
    /// The set.
    pub set: Manifests,
    /// Each tool's file, by tool id.
    pub sources: BTreeMap<String, String>,
    /// Layout files not imported, each with why (`field` the file).
    pub ignored: Vec<FieldError>,
}

fn pretty<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    text
}

/// Where `tool` lives in the layout (`TOOLS/todos/createTodo/config.json`).
pub fn tool_path(tool: &CatalogueTool) -> String {
    format!(
        "TOOLS/{}/{}/config.json",
        group_folder(&tool.category),
        tool.id
    )
}

/// The files of `set` in Switchboard's form, in a stable order (tools,
/// agents, vibes).
pub fn to_files(set: &Manifests) -> Vec<(String, Vec<u8>)> {
    to_files_in(set, Form::Switchboard)
}

/// The files of `set`, tools in `form`, in a stable order (tools, agents,
/// vibes). Agents and vibes are the same in both forms.
pub fn to_files_in(set: &Manifests, form: Form) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for tool in &set.tools {
        files.push((tool_path(tool), pretty(&tool_file::write(tool, form))));
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

/// `id` as the id of the object in `folder`: the same name, ignoring case.
fn in_folder(path: &str, id: &str, folder: &str) -> Result<(), FieldError> {
    if id.to_lowercase() == folder.to_lowercase() {
        Ok(())
    } else {
        Err(FieldError::new(
            format!("{path}: id"),
            format!("\"{id}\" does not match its folder \"{folder}\""),
        ))
    }
}

/// The set in `files` (see [`read_files`]), or every problem found.
pub fn from_files(files: &[(String, Vec<u8>)]) -> Result<Manifests, Vec<FieldError>> {
    read_files(files).map(|read| read.set)
}

/// A tool read from its file.
struct ToolAt {
    path: String,
    grouped: bool,
    tool: CatalogueTool,
}

/// The set in `files` (paths relative to the tree's root), with the rules
/// of the module doc. Returns every problem found.
pub fn read_files(files: &[(String, Vec<u8>)]) -> Result<Read, Vec<FieldError>> {
    if files.len() > MAX_FILES {
        return Err(vec![FieldError::new(
            "files",
            format!("at most {MAX_FILES} files"),
        )]);
    }
    let (root, repository) = layout_root(files);
    let relative: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(path, bytes)| {
            let rel = path.trim_start_matches("./");
            (
                rel.strip_prefix(root.as_str()).unwrap_or(rel),
                bytes.as_slice(),
            )
        })
        .filter(|(rel, _)| {
            !(rel.ends_with('/')
                || rel.is_empty()
                || rel.rsplit('/').next().is_some_and(|n| n.starts_with('.')))
        })
        .collect();
    // The folders of the layout's objects: other files in them are skipped.
    let objects: Vec<&str> = relative
        .iter()
        .filter(|(rel, _)| is_layout_file(rel))
        .filter_map(|(rel, _)| rel.rsplit_once('/').map(|(folder, _)| folder))
        .collect();
    let mut problems = Vec::new();
    let mut tools = Vec::new();
    let mut read = Read::default();
    for (rel, bytes) in relative {
        let outside = !LAYOUT.iter().any(|f| rel.starts_with(&format!("{f}/")));
        let beside = rel
            .rsplit_once('/')
            .is_some_and(|(folder, _)| objects.contains(&folder));
        if (outside && repository) || (beside && !is_layout_file(rel)) {
            continue;
        }
        if bytes.len() > MAX_FILE_BYTES {
            problems.push(FieldError::new(
                rel,
                format!("is larger than {} KiB", MAX_FILE_BYTES / 1024),
            ));
            continue;
        }
        if let Err(problem) = read_one(rel, bytes, &mut tools, &mut read.set) {
            problems.push(problem);
        }
    }
    let (kept, ignored, duplicates) = settle(tools);
    problems.extend(duplicates);
    read.ignored = ignored;
    for at in kept {
        read.sources.insert(at.tool.id.to_string(), at.path);
        read.set.tools.push(at.tool);
    }
    if problems.is_empty() {
        Ok(read)
    } else {
        Err(problems)
    }
}

/// Whether `rel` is one of the layout's own files (by its place).
fn is_layout_file(rel: &str) -> bool {
    matches!(
        rel.split('/').collect::<Vec<_>>().as_slice(),
        ["TOOLS", _, _, "config.json"]
            | ["TOOLS", _, "config.json"]
            | ["AGENTS", _, "config.json"]
            | ["VIBES", _, "manifest.json"]
    )
}

/// Reads layout file `rel` into `tools` or `set`; a file elsewhere is a
/// problem naming it.
fn read_one(
    rel: &str,
    bytes: &[u8],
    tools: &mut Vec<ToolAt>,
    set: &mut Manifests,
) -> Result<(), FieldError> {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        ["TOOLS", group, id, "config.json"] => {
            let tool = tool_file::read(rel, Some(group), bytes)?;
            in_folder(rel, tool.id.as_str(), id)?;
            tools.push(ToolAt { path: rel.into(), grouped: true, tool });
        }
        ["TOOLS", id, "config.json"] => {
            let tool = tool_file::read(rel, None, bytes)?;
            in_folder(rel, tool.id.as_str(), id)?;
            tools.push(ToolAt { path: rel.into(), grouped: false, tool });
        }
        ["AGENTS", id, "config.json"] => {
            let agent = parse::<Agent>(rel, bytes)?;
            in_folder(rel, agent.id.as_str(), id)?;
            set.agents.push(agent);
        }
        ["VIBES", id, "manifest.json"] => {
            let vibe = parse::<Vibe>(rel, bytes)?;
            in_folder(rel, vibe.id.as_str(), id)?;
            set.vibes.push(vibe);
        }
        _ => {
            return Err(FieldError::new(
                rel,
                "is not part of the layout (VIBES/<id>/manifest.json, AGENTS/<id>/config.json, TOOLS/<group>/<id>/config.json)",
            ))
        }
    }
    Ok(())
}

/// One tool per id: a grouped file wins over ungrouped ones (which are
/// ignored, saying why); two files of one id otherwise are a problem
/// naming both. Returns the tools kept, in the order read, the ignored
/// files and the problems.
fn settle(tools: Vec<ToolAt>) -> (Vec<ToolAt>, Vec<FieldError>, Vec<FieldError>) {
    let mut ignored = Vec::new();
    let mut problems = Vec::new();
    let mut kept: Vec<ToolAt> = Vec::new();
    for at in tools {
        let Some(i) = kept.iter().position(|k| k.tool.id == at.tool.id) else {
            kept.push(at);
            continue;
        };
        let loser = match (kept[i].grouped, at.grouped) {
            (true, false) => at,
            (false, true) => std::mem::replace(&mut kept[i], at),
            _ => {
                problems.push(FieldError::new(
                    at.path.as_str(),
                    format!(
                        "declares tool \"{}\" again, as {} does; a tool id may be in one group folder only",
                        at.tool.id, field_excerpt(&kept[i].path)
                    ),
                ));
                continue;
            }
        };
        ignored.push(FieldError::new(
            loser.path,
            format!(
                "tool \"{}\" is also in a group folder, as {}, which is imported",
                loser.tool.id,
                field_excerpt(&kept[i].path)
            ),
        ));
    }
    (kept, ignored, problems)
}

/// The prefix the layout's folders sit under, and whether it is a
/// repository's `src/lib/` (whose other files are skipped).
fn layout_root(files: &[(String, Vec<u8>)]) -> (String, bool) {
    let top = common_root(files).unwrap_or_default();
    let holds_layout = |prefix: &str| {
        files.iter().any(|(p, _)| {
            p.trim_start_matches("./")
                .strip_prefix(prefix)
                .is_some_and(|rest| LAYOUT.iter().any(|f| rest.starts_with(&format!("{f}/"))))
        })
    };
    if holds_layout(&top) {
        return (top, false);
    }
    for candidate in [
        format!("{top}{REPOSITORY_ROOT}"),
        REPOSITORY_ROOT.to_owned(),
    ] {
        if holds_layout(&candidate) {
            return (candidate, true);
        }
    }
    (top, false)
}

/// The one folder every path starts with, if it is not a layout folder
/// (`switchboard-manifests/VIBES/…` → `switchboard-manifests/`).
fn common_root(files: &[(String, Vec<u8>)]) -> Option<String> {
    let first = files.first()?.0.trim_start_matches("./");
    let (top, _) = first.split_once('/')?;
    if LAYOUT.contains(&top) {
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

    /// A tool file in the seed's form.
    fn seed_tool(id: &str, description: &str) -> Vec<u8> {
        serde_json::json!({
            "id": id, "name": id, "description": description, "modelToolName": id,
            "parameters": [{"name": "agentName", "location": "PARAMETER_LOCATION_BODY", "schema": {"type": "string"}, "required": true}]
        })
        .to_string()
        .into_bytes()
    }

    /// The seed's vibe manifest and Hominio, as they are in seed 003.
    fn seed_files(prefix: &str) -> Vec<(String, Vec<u8>)> {
        let file = |path: &str, bytes: &[u8]| (format!("{prefix}{path}"), bytes.to_vec());
        vec![
            file(
                "VIBES/Todos/manifest.json",
                include_bytes!(
                    "../../../tests/fixtures/seed-003/src/lib/VIBES/Todos/manifest.json"
                ),
            ),
            file(
                "AGENTS/Hominio/config.json",
                include_bytes!(
                    "../../../tests/fixtures/seed-003/src/lib/AGENTS/Hominio/config.json"
                ),
            ),
            file(
                "TOOLS/core/switchAgent/config.json",
                &seed_tool("switchAgent", "Grouped."),
            ),
            file("TOOLS/core/switchAgent/function.ts", b"export const x = 1;"),
            file(
                "TOOLS/switchAgent/config.json",
                &seed_tool("switchAgent", "Ungrouped."),
            ),
            file("TOOLS/switchAgent/function.ts", b"export const x = 2;"),
        ]
    }

    #[test]
    fn the_seeds_layout_reads_as_it_is_in_any_folder_case_and_beside_its_code() {
        let read = read_files(&seed_files("")).unwrap();
        assert_eq!(read.set.vibes[0].id.as_str(), "todos", "from VIBES/Todos");
        assert_eq!(read.set.agents[0].id.as_str(), "Hominio");
        assert_eq!(read.set.tools.len(), 1);
        let switch = &read.set.tools[0];
        assert_eq!(
            (switch.description.as_str(), switch.category.as_str()),
            ("Grouped.", "core")
        );
        assert_eq!(
            read.sources["switchAgent"],
            "TOOLS/core/switchAgent/config.json"
        );
        assert_eq!(
            read.ignored,
            [FieldError::new(
                "TOOLS/switchAgent/config.json",
                "tool \"switchAgent\" is also in a group folder, as TOOLS/core/switchAgent/config.json, which is imported"
            )]
        );
        // The ungrouped file first: the grouped one still wins.
        let mut reversed = seed_files("");
        reversed.reverse();
        assert_eq!(
            read_files(&reversed).unwrap().set.tools[0].description,
            "Grouped."
        );
    }

    #[test]
    fn a_repositorys_src_lib_is_the_root_and_its_other_files_are_skipped() {
        for prefix in ["src/lib/", "hominio-baf69225/src/lib/"] {
            let mut files = seed_files(prefix);
            let top = prefix.trim_end_matches("src/lib/");
            files.push((format!("{top}package.json"), b"{}".to_vec()));
            files.push((format!("{top}src/lib/ultravox/types.ts"), b"x".to_vec()));
            let read = read_files(&files).unwrap();
            assert_eq!(read.set.vibes.len(), 1, "{prefix}");
            assert_eq!(
                read.sources["switchAgent"],
                "TOOLS/core/switchAgent/config.json"
            );
        }
        // Without the layout under src/lib/, a stray file is still refused.
        let mut files = seed_files("");
        files.push(("package.json".into(), b"{}".to_vec()));
        let problems = read_files(&files).unwrap_err();
        assert_eq!(problems[0].field, "package.json");
    }

    #[test]
    fn one_tool_id_in_two_group_folders_is_refused_naming_both() {
        let mut files = seed_files("");
        files.push((
            "TOOLS/todos/switchAgent/config.json".into(),
            seed_tool("switchAgent", "Again."),
        ));
        files.push(("TOOLS/todos/README.md".into(), b"loose".to_vec()));
        files.push((
            "VIBES/Other/manifest.json".into(),
            include_bytes!("../../../tests/fixtures/seed-003/src/lib/VIBES/Todos/manifest.json")
                .to_vec(),
        ));
        let problems = read_files(&files).unwrap_err();
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "TOOLS/todos/README.md",
                "VIBES/Other/manifest.json: id",
                "TOOLS/todos/switchAgent/config.json"
            ]
        );
        assert_eq!(
            problems[2].rule,
            "declares tool \"switchAgent\" again, as TOOLS/core/switchAgent/config.json does; a tool id may be in one group folder only"
        );
        assert!(problems[1]
            .rule
            .contains("\"todos\" does not match its folder \"Other\""));
    }

    #[test]
    fn an_export_in_the_seeds_form_reads_back_the_same_set() {
        let mut set = demo_set();
        set.tools.extend(crate::domain::todos::todo_tools());
        let files = to_files_in(&set, Form::Ultravox);
        let create = files
            .iter()
            .find(|(p, _)| p == "TOOLS/todos/createTodo/config.json")
            .unwrap();
        let file: serde_json::Value = serde_json::from_slice(&create.1).unwrap();
        assert_eq!(file["modelToolName"], "createTodo");
        assert!(file["parameters"].is_array());
        assert_eq!(from_files(&files).unwrap(), set);
    }
}
