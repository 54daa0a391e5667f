//! Planning a change: a registration or a patch turned into the
//! session's next tool set and what it added, removed and modified, or
//! refused whole when the set would pass the session's limits.

use super::check::{check_definition, failed};
use super::registration::{Patch, ToolDefinition};
use super::schema::Schema;
use super::set::{new_tool, PluginTool};
use super::update::{FailedTool, StatusChange, ToolDiff};
use std::collections::{BTreeMap, BTreeSet};

/// The limits a change is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most plugin tools in one session.
    pub max_tools: usize,
    /// Most bytes of tool text in one session ([`tools_bytes`]).
    pub max_bytes: usize,
}

/// The next tool set a registration or patch leads to, or why none.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The session's plugin tools after the change.
    pub tools: Vec<PluginTool>,
    /// Names that registered (added or modified).
    pub registered: Vec<String>,
    /// Tools refused, each alone.
    pub failed: Vec<FailedTool>,
    /// What changed.
    pub diff: ToolDiff,
}

/// A whole request refused (nothing is registered): the set it would
/// leave is over one of the session's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverLimit {
    /// Too many tools.
    Tools {
        /// How many the session would hold.
        would_hold: usize,
        /// The limit.
        max: usize,
    },
    /// Too much tool text ([`tools_bytes`]).
    Bytes {
        /// How many bytes the session's tools would take.
        would_take: usize,
        /// The limit.
        max: usize,
    },
}

/// Counts the bytes written to it, so a size is measured without building
/// the text.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes `tools` take as metadata, snapshots and the store carry
/// them: their JSON array, each tool with its name, description, schema,
/// status and dates, and its use count at its widest (20 digits), so
/// relayed calls never carry a set over its budget.
pub fn tools_bytes(tools: &[PluginTool]) -> usize {
    let mut count = ByteCount(0);
    for tool in tools {
        let widest = PluginTool {
            usage_count: u64::MAX,
            ..tool.clone()
        };
        // Writing to a counter cannot fail; a failure would only under-count.
        let _ = serde_json::to_writer(&mut count, &widest);
    }
    count.0 + tools.len().saturating_sub(1) + 2
}

/// Refuses `tools` (the set a change leads to) when over `limits`' byte
/// budget; `before` (the bytes the set took) lets a patch that shrinks an
/// oversized set through.
fn check_bytes(
    tools: &[PluginTool],
    before: Option<usize>,
    limits: Limits,
) -> Result<(), OverLimit> {
    let would_take = tools_bytes(tools);
    if would_take > limits.max_bytes && before.is_none_or(|b| would_take > b) {
        return Err(OverLimit::Bytes {
            would_take,
            max: limits.max_bytes,
        });
    }
    Ok(())
}

/// Plans a registration: `incoming` replaces `current`. Each tool is
/// checked alone; a name sent twice keeps the first. Tools kept keep their
/// registration time, use count and status.
pub fn plan_registration(
    current: &[PluginTool],
    incoming: &[ToolDefinition],
    now: i64,
    limits: Limits,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<Plan, OverLimit> {
    let mut failed_tools = Vec::new();
    let mut accepted: Vec<&ToolDefinition> = Vec::new();
    let mut seen = BTreeSet::new();
    for def in incoming {
        if !seen.insert(def.name.as_str()) {
            failed_tools.push(failed(
                &def.name,
                "name: sent twice in this request; the first one counts".into(),
                false,
            ));
            continue;
        }
        match check_definition(def, reserved, compile) {
            Ok(()) => accepted.push(def),
            Err(f) => failed_tools.push(f),
        }
    }
    if accepted.len() > limits.max_tools {
        return Err(OverLimit::Tools {
            would_hold: accepted.len(),
            max: limits.max_tools,
        });
    }
    let old: BTreeMap<&str, &PluginTool> = current
        .iter()
        .map(|t| (t.definition.name.as_str(), t))
        .collect();
    let mut diff = ToolDiff::default();
    let tools: Vec<PluginTool> = accepted
        .iter()
        .map(|def| match old.get(def.name.as_str()) {
            Some(was) => {
                if was.definition != **def {
                    diff.modified.push((*def).clone());
                }
                PluginTool {
                    definition: (*def).clone(),
                    ..(*was).clone()
                }
            }
            None => {
                diff.added.push((*def).clone());
                new_tool(def, now)
            }
        })
        .collect();
    let kept: BTreeSet<&str> = accepted.iter().map(|d| d.name.as_str()).collect();
    diff.removed = current
        .iter()
        .map(|t| t.definition.name.clone())
        .filter(|n| !kept.contains(n.as_str()))
        .collect();
    check_bytes(&tools, None, limits)?;
    Ok(Plan {
        registered: accepted.iter().map(|d| d.name.clone()).collect(),
        tools,
        failed: failed_tools,
        diff,
    })
}

/// Plans a patch on `current`: removals first, then changes, then
/// additions; each entry is checked alone (adding a name already there,
/// or changing or removing one that is not, fails that entry only).
pub fn plan_patch(
    current: &[PluginTool],
    patch: &Patch,
    now: i64,
    limits: Limits,
    reserved: &dyn Fn(&str) -> bool,
    compile: &dyn Fn(&Schema) -> Result<(), String>,
) -> Result<Plan, OverLimit> {
    let mut tools: Vec<PluginTool> = current.to_vec();
    let mut plan_failed = Vec::new();
    let mut registered = Vec::new();
    let mut diff = ToolDiff::default();
    for name in &patch.remove {
        match tools.iter().position(|t| t.definition.name == *name) {
            Some(i) => {
                tools.remove(i);
                diff.removed.push(name.clone());
            }
            None => plan_failed.push(failed(
                name,
                "remove: no such plugin tool in this session".into(),
                false,
            )),
        }
    }
    for change in &patch.modify {
        let Some(slot) = tools.iter_mut().find(|t| t.definition.name == change.name) else {
            plan_failed.push(failed(
                &change.name,
                "modify: no such plugin tool in this session; add it instead".into(),
                true,
            ));
            continue;
        };
        let mut next = slot.clone();
        if let Some(d) = &change.description {
            next.definition.description = d.clone();
        }
        if let Some(p) = &change.parameters {
            next.definition.parameters = p.clone();
        }
        if let Some(s) = change.status {
            next.status = s;
        }
        if let Err(f) = check_definition(&next.definition, reserved, compile) {
            plan_failed.push(f);
            continue;
        }
        if next.definition != slot.definition {
            diff.modified.push(next.definition.clone());
        }
        if next.status != slot.status {
            diff.status_changed.push(StatusChange {
                name: change.name.clone(),
                status: next.status,
            });
        }
        registered.push(change.name.clone());
        *slot = next;
    }
    let mut adding = 0usize;
    for def in &patch.add {
        if tools.iter().any(|t| t.definition.name == def.name) {
            plan_failed.push(failed(
                &def.name,
                "add: already registered in this session; use modify".into(),
                false,
            ));
            continue;
        }
        if let Err(f) = check_definition(def, reserved, compile) {
            plan_failed.push(f);
            continue;
        }
        adding += 1;
        tools.push(new_tool(def, now));
        diff.added.push(def.clone());
        registered.push(def.name.clone());
    }
    if adding > 0 && tools.len() > limits.max_tools {
        return Err(OverLimit::Tools {
            would_hold: tools.len(),
            max: limits.max_tools,
        });
    }
    check_bytes(&tools, Some(tools_bytes(current)), limits)?;
    Ok(Plan {
        tools,
        registered,
        failed: plan_failed,
        diff,
    })
}
