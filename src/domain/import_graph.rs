//! The domain's import graph, checked: no two modules of `domain/` import
//! each other, directly or through others, and none does I/O or has a
//! `cfg` gate.
//!
//! Why: a module in a loop cannot be read, moved or tested without every
//! other module of the loop, and a loop grows (five modules were in one).
//! Leaf-first means each module only uses modules below it, so a newcomer
//! reads from the leaves (`error`, `limits`, `ids`, `workflow_state`) up.
//!
//! The sources are read at compile time (`include_str!`), so the check does
//! no I/O either. What counts as an import, in a module's code before its
//! `#[cfg(test)]` with comments left out: a path `crate::domain::a::b`
//! (resolved to the longest module it names), a `super::`/`self::` path,
//! and in a folder's `mod.rs` a path through one of its own children
//! (`child::Item`). A folder's `mod.rs` and its children are modules like
//! any other: a child may import its `mod.rs`, but then the `mod.rs` must
//! not use that child back. The list below has one row per file; a module
//! missing from it fails `every_module_of_the_domain_is_checked`.

use std::collections::{BTreeMap, BTreeSet};

/// Every module of the domain: its path below `crate::domain` and its
/// source.
const SOURCES: &[(&str, &str)] = &[
    ("", include_str!("mod.rs")),
    ("account", include_str!("account.rs")),
    ("actor", include_str!("actor.rs")),
    ("agent_runner", include_str!("agent_runner.rs")),
    ("agent_session", include_str!("agent_session/mod.rs")),
    (
        "agent_session::calls",
        include_str!("agent_session/calls.rs"),
    ),
    (
        "agent_session::events",
        include_str!("agent_session/events.rs"),
    ),
    (
        "agent_session::patch",
        include_str!("agent_session/patch.rs"),
    ),
    ("api_key", include_str!("api_key.rs")),
    ("assets", include_str!("assets.rs")),
    ("bindings", include_str!("bindings.rs")),
    ("bindings_file", include_str!("bindings_file.rs")),
    ("catalogue", include_str!("catalogue.rs")),
    ("catalogue_history", include_str!("catalogue_history.rs")),
    ("cors", include_str!("cors.rs")),
    ("decide", include_str!("decide.rs")),
    ("declaration", include_str!("declaration/mod.rs")),
    ("declaration::export", include_str!("declaration/export.rs")),
    ("declaration::gemini", include_str!("declaration/gemini.rs")),
    (
        "declaration::ultravox",
        include_str!("declaration/ultravox/mod.rs"),
    ),
    (
        "declaration::ultravox::parameters",
        include_str!("declaration/ultravox/parameters.rs"),
    ),
    (
        "declaration::ultravox::stages",
        include_str!("declaration/ultravox/stages.rs"),
    ),
    (
        "declaration::ultravox::tools",
        include_str!("declaration/ultravox/tools.rs"),
    ),
    ("effect", include_str!("effect.rs")),
    ("error", include_str!("error.rs")),
    ("ids", include_str!("ids.rs")),
    ("join_code", include_str!("join_code.rs")),
    ("lesson", include_str!("lesson/mod.rs")),
    ("lesson::config", include_str!("lesson/config/mod.rs")),
    (
        "lesson::config::configuration",
        include_str!("lesson/config/configuration.rs"),
    ),
    (
        "lesson::config::defaults",
        include_str!("lesson/config/defaults.rs"),
    ),
    (
        "lesson::config::facts",
        include_str!("lesson/config/facts.rs"),
    ),
    (
        "lesson::config::preset",
        include_str!("lesson/config/preset.rs"),
    ),
    ("lesson::inline", include_str!("lesson/inline.rs")),
    ("lesson::normalise", include_str!("lesson/normalise.rs")),
    ("lesson::nudge", include_str!("lesson/nudge.rs")),
    ("lesson::optimise", include_str!("lesson/optimise.rs")),
    ("lesson::outcome", include_str!("lesson/outcome/mod.rs")),
    (
        "lesson::outcome::args",
        include_str!("lesson/outcome/args.rs"),
    ),
    (
        "lesson::outcome::kinds",
        include_str!("lesson/outcome/kinds.rs"),
    ),
    (
        "lesson::outcome::record",
        include_str!("lesson/outcome/record.rs"),
    ),
    (
        "lesson::outcome::student",
        include_str!("lesson/outcome/student.rs"),
    ),
    ("lesson::prompt", include_str!("lesson/prompt/mod.rs")),
    (
        "lesson::prompt::input",
        include_str!("lesson/prompt/input.rs"),
    ),
    (
        "lesson::prompt::lines",
        include_str!("lesson/prompt/lines.rs"),
    ),
    (
        "lesson::prompt::sections",
        include_str!("lesson/prompt/sections.rs"),
    ),
    (
        "lesson::prompt::writer",
        include_str!("lesson/prompt/writer.rs"),
    ),
    ("lesson::record", include_str!("lesson/record.rs")),
    ("lesson::review", include_str!("lesson/review.rs")),
    ("lesson::run_report", include_str!("lesson/run_report.rs")),
    ("lesson::tools", include_str!("lesson/tools.rs")),
    ("lesson::trigger", include_str!("lesson/trigger.rs")),
    ("limits", include_str!("limits.rs")),
    ("mcp_server", include_str!("mcp_server/mod.rs")),
    (
        "mcp_server::settings",
        include_str!("mcp_server/settings.rs"),
    ),
    ("mcp_server::status", include_str!("mcp_server/status.rs")),
    ("mcp_server::tools", include_str!("mcp_server/tools.rs")),
    ("mcp_stdio", include_str!("mcp_stdio.rs")),
    ("mcp_server_view", include_str!("mcp_server_view.rs")),
    ("net", include_str!("net.rs")),
    ("ownership", include_str!("ownership.rs")),
    ("pages", include_str!("pages.rs")),
    ("plugin", include_str!("plugin/mod.rs")),
    ("plugin::check", include_str!("plugin/check.rs")),
    ("plugin::plan", include_str!("plugin/plan.rs")),
    (
        "plugin::registration",
        include_str!("plugin/registration.rs"),
    ),
    ("plugin::schema", include_str!("plugin/schema.rs")),
    ("plugin::shape", include_str!("plugin/shape.rs")),
    ("plugin::set", include_str!("plugin/set.rs")),
    ("plugin::update", include_str!("plugin/update.rs")),
    ("retention", include_str!("retention.rs")),
    ("review_queue", include_str!("review_queue.rs")),
    ("session_access", include_str!("session_access.rs")),
    ("session_checks", include_str!("session_checks.rs")),
    ("session_origin", include_str!("session_origin.rs")),
    ("start_trigger", include_str!("start_trigger.rs")),
    ("student", include_str!("student.rs")),
    ("student_view", include_str!("student_view.rs")),
    ("state_labels", include_str!("state_labels.rs")),
    ("time", include_str!("time.rs")),
    ("todos", include_str!("todos/mod.rs")),
    ("todos::answer", include_str!("todos/answer.rs")),
    ("todos::command", include_str!("todos/command.rs")),
    ("todos::limits", include_str!("todos/limits.rs")),
    ("todos::outcome", include_str!("todos/outcome.rs")),
    ("todos::text", include_str!("todos/text.rs")),
    ("todos::tools", include_str!("todos/tools.rs")),
    ("user", include_str!("user.rs")),
    ("vibe", include_str!("vibe/mod.rs")),
    ("vibe::call_settings", include_str!("vibe/call_settings.rs")),
    ("vibe::demo", include_str!("vibe/demo.rs")),
    ("vibe::manifest", include_str!("vibe/manifest.rs")),
    ("vibe::rules", include_str!("vibe/rules.rs")),
    ("vibe::template", include_str!("vibe/template.rs")),
    ("vibe::tool_file", include_str!("vibe/tool_file.rs")),
    ("workflow_chat", include_str!("workflow_chat/mod.rs")),
    (
        "workflow_chat::check",
        include_str!("workflow_chat/check.rs"),
    ),
    (
        "workflow_chat::messages",
        include_str!("workflow_chat/messages.rs"),
    ),
    ("workflow_chat::turn", include_str!("workflow_chat/turn.rs")),
    ("workflow_def", include_str!("workflow_def/mod.rs")),
    (
        "workflow_def::definition",
        include_str!("workflow_def/definition.rs"),
    ),
    ("workflow_def::edit", include_str!("workflow_def/edit.rs")),
    ("workflow_def::error", include_str!("workflow_def/error.rs")),
    ("workflow_def::step", include_str!("workflow_def/step.rs")),
    (
        "workflow_def::trigger",
        include_str!("workflow_def/trigger.rs"),
    ),
    ("workflow_state", include_str!("workflow_state.rs")),
];

/// The code that counts: before the test module, without `//` comments.
fn live_code(source: &str) -> String {
    let live = source.split("#[cfg(test)]").next().unwrap_or("");
    live.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `a::b::c` path segments at the start of `rest` (identifiers joined
/// by `::`).
fn segments(rest: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut tail = rest;
    loop {
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if len == 0 {
            break;
        }
        out.push(&tail[..len]);
        match tail[len..].strip_prefix("::") {
            Some(next) => tail = next,
            None => break,
        }
    }
    out
}

/// The longest module of `modules` that `path` (segments from the domain's
/// root) names, if any.
fn resolve(modules: &BTreeSet<&str>, path: &[&str]) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m.as_str()))
}

/// `module`'s parent (`""` for a top-level module).
fn parent(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(p, _)| p)
}

/// Where `prefix` starts a path in `code`: not as the tail of a longer
/// path or identifier (`super::super::x` starts once).
fn path_starts<'c>(code: &'c str, prefix: &'c str) -> impl Iterator<Item = usize> + 'c {
    code.match_indices(prefix)
        .map(|(at, _)| at)
        .filter(move |&at| {
            code[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        })
}

/// `base` followed by `path`, each leading `super` going one module up.
fn joined<'a>(base: &'a str, path: Vec<&'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = base.split("::").filter(|s| !s.is_empty()).collect();
    for seg in path {
        if seg == "super" {
            out.pop();
        } else {
            out.push(seg);
        }
    }
    out
}

/// The modules `module` imports (itself left out), given its live code.
fn imports_of(
    module: &str,
    code: &str,
    modules: &BTreeSet<&str>,
) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    let prefixed = |prefix: &str, base: &str| -> Result<Vec<String>, String> {
        let mut found = Vec::new();
        for at in path_starts(code, prefix) {
            let rest = &code[at + prefix.len()..];
            if rest.starts_with('{') {
                return Err(format!(
                    "{module}: `{prefix}{{…}}` groups modules; name each module's path"
                ));
            }
            found.extend(resolve(modules, &joined(base, segments(rest))));
        }
        Ok(found)
    };
    out.extend(prefixed("crate::domain::", "")?);
    out.extend(prefixed("super::", parent(module))?);
    out.extend(prefixed("self::", module)?);
    for child in modules
        .iter()
        .filter(|m| parent(m) == module && !m.is_empty())
    {
        let name = child.rsplit("::").next().unwrap_or(child);
        if path_starts(code, &format!("{name}::")).next().is_some() {
            out.insert((*child).to_owned());
        }
    }
    out.remove(module);
    Ok(out)
}

/// Who imports whom among `sources` (module path, source).
fn graph(sources: &[(&str, &str)]) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let modules: BTreeSet<&str> = sources.iter().map(|(m, _)| *m).collect();
    sources
        .iter()
        .map(|(m, src)| Ok(((*m).to_owned(), imports_of(m, &live_code(src), &modules)?)))
        .collect()
}

/// A loop in `graph`, as the modules along it (the first one repeated at
/// the end), or `None` when it has none.
fn find_loop(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The modules `source` (a module's file) declares: `mod name;` lines.
fn declared_children(source: &str) -> Vec<String> {
    live_code(source)
        .lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches("pub ");
            line.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn no_module_of_the_domain_imports_one_that_imports_it_back() {
    let graph = graph(SOURCES).unwrap();
    assert_eq!(find_loop(&graph), None, "modules of domain/ in a loop");
}

#[test]
fn every_module_of_the_domain_is_checked() {
    let listed: BTreeSet<&str> = SOURCES.iter().map(|(m, _)| *m).collect();
    for (module, source) in SOURCES {
        for child in declared_children(source) {
            let path = if module.is_empty() {
                child
            } else {
                format!("{module}::{child}")
            };
            assert!(
                listed.contains(path.as_str()),
                "domain module `{path}` is not in import_graph::SOURCES"
            );
        }
    }
}

#[test]
fn the_domain_does_no_io_has_no_cfg_gates_and_imports_no_other_layer() {
    const FORBIDDEN: [&str; 12] = [
        "crate::server",
        "crate::api",
        "crate::ui",
        "cfg(",
        "cfg!(",
        "std::fs",
        "std::env",
        "tokio",
        "sqlx",
        "reqwest",
        "SystemTime::now",
        "Instant::now",
    ];
    for (module, source) in SOURCES {
        let code = live_code(source);
        for word in FORBIDDEN {
            assert!(!code.contains(word), "domain::{module} uses `{word}`");
        }
    }
}

#[test]
fn a_loop_through_three_modules_is_found_whatever_the_path_form() {
    let a = "use crate::domain::b::Thing;";
    let b = "fn f() -> crate::domain::c::deep::Other { todo() }";
    let c_back = "use super::super::a::Item;";
    let loop_found = graph(&[("a", a), ("b", b), ("c", ""), ("c::deep", c_back)]).unwrap();
    assert_eq!(
        find_loop(&loop_found).unwrap(),
        ["a", "b", "c::deep", "a"].map(String::from)
    );
    let no_back = graph(&[("a", a), ("b", b), ("c", ""), ("c::deep", "")]).unwrap();
    assert_eq!(find_loop(&no_back), None);
}

#[test]
fn a_folder_module_using_a_child_that_imports_it_is_a_loop() {
    let folder = "pub mod kid;\npub fn f() -> kid::Thing { todo() }";
    let kid = "use crate::domain::folder::Base;";
    let g = graph(&[("folder", folder), ("folder::kid", kid)]).unwrap();
    assert!(find_loop(&g).is_some());
    let one_way = "pub mod kid;\n/// See [`kid::Thing`].\npub struct Base;";
    let g = graph(&[("folder", one_way), ("folder::kid", kid)]).unwrap();
    assert_eq!(find_loop(&g), None, "a doc link is not an import");
    let in_tests = "pub mod kid;\n#[cfg(test)]\nmod tests { use kid::Thing; }";
    let g = graph(&[("folder", in_tests), ("folder::kid", kid)]).unwrap();
    assert_eq!(find_loop(&g), None, "test code is not counted");
}

#[test]
fn grouped_domain_imports_are_refused_so_none_is_missed() {
    let err = graph(&[("a", "use crate::domain::{b, c};")]).unwrap_err();
    assert!(err.contains("name each module's path"), "{err}");
}
