//! An upstream `tools/list` as catalogue tools: each name mapped to an id
//! that names its server, descriptions and schemas capped like a plugin's;
//! and an upstream call's answer as the caller reads it.

use super::settings::{McpServerName, ID_SEPARATOR};
use crate::domain::catalogue::CatalogueTool;
use crate::domain::ids::ToolId;
use crate::domain::limits::{excerpt, ID_MAX_BYTES, MCP_TOOLS_PER_SERVER_MAX};
use crate::domain::plugin::{depth, DESCRIPTION_MAX_CHARS, SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The catalogue id of upstream tool `upstream` of server `server`:
/// `<server>__<upstream>`, each character of `upstream` that a tool id
/// cannot hold (`.`, `/`, a space, anything not ASCII) written as `_`, so
/// the same name always maps to the same id. Refused when the id would be
/// longer than a tool id may be.
pub fn imported_id(server: &McpServerName, upstream: &str) -> Result<ToolId, String> {
    if upstream.is_empty() {
        return Err("an upstream tool has an empty name".to_owned());
    }
    let mapped: String = upstream
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let id = format!("{server}{ID_SEPARATOR}{mapped}");
    if id.len() > ID_MAX_BYTES {
        return Err(format!(
            "upstream tool \"{}\" makes an id longer than {ID_MAX_BYTES} characters",
            excerpt(upstream)
        ));
    }
    ToolId::parse(&id).map_err(|e| e.rule)
}

/// One entry of an upstream `tools/list`, as the client read it.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamTool {
    /// Its name upstream (what `tools/call` takes).
    pub name: String,
    /// Its title, if it gives one (what people see).
    pub title: Option<String>,
    /// Its description, if any.
    pub description: Option<String>,
    /// Its `inputSchema`.
    pub input_schema: Value,
}

/// An upstream tool as a catalogue tool, with the name to call it by.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTool {
    /// The catalogue tool (`<server>__<name>`, category `mcp:<server>`).
    pub tool: CatalogueTool,
    /// Its name upstream.
    pub upstream_name: String,
    /// The description the upstream gave (cut to fit), to tell an admin's
    /// own description from the upstream's on the next import.
    pub upstream_description: String,
}

impl ImportedTool {
    /// This import over the tool already in the catalogue, if any: an
    /// admin's requirements and effects are kept, and so is their
    /// description when it differs from what the upstream said last time
    /// (`last_upstream`); everything else follows the upstream.
    pub fn over(mut self, existing: Option<&CatalogueTool>, last_upstream: Option<&str>) -> Self {
        if let Some(existing) = existing {
            self.tool.requires = existing.requires.clone();
            self.tool.effects = existing.effects.clone();
            if last_upstream.is_some_and(|last| last != existing.description) {
                self.tool.description = existing.description.clone();
            }
        }
        self
    }
}

/// What one `tools/list` gives the catalogue: the tools imported (by
/// upstream name, in that order) and, for each entry left out, why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Import {
    /// The tools to import.
    pub tools: Vec<ImportedTool>,
    /// Why each entry left out was left out, for the server's last error.
    pub skipped: Vec<String>,
}

/// Turns server `server`'s `tools/list` into catalogue tools. Entries are
/// taken in upstream-name order, so the outcome does not depend on the
/// order the upstream listed them: past [`MCP_TOOLS_PER_SERVER_MAX`], or
/// whose id another entry already took (`a.b` and `a_b` map alike), or
/// whose schema is too big, too deep or not an object, an entry is left
/// out and said why.
pub fn import(server: &McpServerName, listed: &[UpstreamTool]) -> Import {
    let mut sorted: Vec<&UpstreamTool> = listed.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Import::default();
    let mut taken = BTreeSet::new();
    for entry in sorted {
        if out.tools.len() == MCP_TOOLS_PER_SERVER_MAX {
            out.skipped.push(format!(
                "only the first {MCP_TOOLS_PER_SERVER_MAX} tools (by name) are imported"
            ));
            break;
        }
        match one(server, entry) {
            Ok(imported) if !taken.insert(imported.tool.id.clone()) => out.skipped.push(format!(
                "upstream tool \"{}\" maps to id {}, which another tool took",
                excerpt(&entry.name),
                imported.tool.id
            )),
            Ok(imported) => out.tools.push(imported),
            Err(why) => out.skipped.push(why),
        }
    }
    out
}

/// One entry as a catalogue tool, or why not.
fn one(server: &McpServerName, entry: &UpstreamTool) -> Result<ImportedTool, String> {
    let id = imported_id(server, &entry.name)?;
    let schema = &entry.input_schema;
    let why = |rule: String| format!("upstream tool \"{}\": {rule}", excerpt(&entry.name));
    let bytes = schema.to_string().len();
    if bytes > SCHEMA_MAX_BYTES {
        return Err(why(format!(
            "its inputSchema is over {SCHEMA_MAX_BYTES} bytes"
        )));
    }
    if depth(schema) > SCHEMA_MAX_DEPTH {
        return Err(why(format!(
            "its inputSchema nests over {SCHEMA_MAX_DEPTH} levels"
        )));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(why("its inputSchema is not an object schema".to_owned()));
    }
    let description = entry
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map_or_else(
            || format!("Tool {} of MCP server {server}.", entry.name),
            str::to_owned,
        );
    let description = cut(&description, DESCRIPTION_MAX_CHARS);
    let title = entry
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let tool = CatalogueTool {
        id,
        name: cut(title.unwrap_or(&entry.name), 80),
        description: description.clone(),
        category: format!("mcp:{server}"),
        parameters: schema.clone(),
        requires: Vec::new(),
        effects: Vec::new(),
        ultravox_builtin: false,
    };
    Ok(ImportedTool {
        tool,
        upstream_name: entry.name.clone(),
        upstream_description: description,
    })
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// An upstream `tools/call` result as the call's result: its text
/// content joined, its structured content and whether it is an error,
/// in the shape every export format carries.
pub fn call_result(texts: &[String], structured: Option<Value>, is_error: bool) -> Value {
    let mut out = json!({"text": texts.join("\n"), "isError": is_error});
    if let Some(structured) = structured {
        out["structuredContent"] = structured;
    }
    out
}
