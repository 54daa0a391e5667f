//! `sb-wasm-bindgen INPUT.wasm OUT_DIR NAME`: writes the JavaScript glue
//! `NAME.js` and the module `NAME_bg.wasm` for a browser bundle, as
//! `wasm-bindgen --target web --no-typescript --out-name NAME --out-dir
//! OUT_DIR INPUT.wasm` does (the same builder calls), with three changes:
//! the functions the module imports from its glue get short names
//! ([`short_import_names`]), classes JavaScript can never hold an instance
//! of are left out with their exports ([`without_unreachable_classes`]),
//! and what only those classes' methods built, with Leptos' lazy
//! hydration, which no page runs, is left out of the module
//! ([`unreached`]). It also checks that the module never touches the
//! first KiB of its memory, which the release bundles' `wasm-opt` is told
//! it may assume ([`layout`]). Its library's version is pinned in its
//! Cargo.toml to the `wasm-bindgen` the bundles link.

use anyhow::{bail, ensure, Context, Result};
use std::path::Path;
use wasm_bindgen_cli_support::Bindgen;

mod layout;
mod unreached;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [input, out_dir, name] => bindgen(input, Path::new(out_dir), name)
            .with_context(|| format!("wasm-bindgen of {input}")),
        _ => bail!("usage: sb-wasm-bindgen INPUT.wasm OUT_DIR NAME"),
    }
}

/// Generates the glue and module of `input` into `out_dir`, the imports
/// renamed, the unreachable classes and the lazy hydration left out.
fn bindgen(input: &str, out_dir: &Path, name: &str) -> Result<()> {
    let mut bindgen = Bindgen::new();
    bindgen.web(true)?;
    // Every setting the CLI passes, at the CLI's defaults: the builder's
    // own defaults differ (it omits the module's default path, which the
    // page's loader relies on).
    bindgen
        .input_path(input)
        .debug(false)
        .demangle(true)
        .keep_lld_exports(false)
        .keep_debug(false)
        .split_debug_info(false)
        .remove_name_section(false)
        .remove_producers_section(false)
        .typescript(false)
        .omit_imports(false)
        .omit_default_module_path(false)
        .split_linked_modules(false)
        .js_string_builtins(false)
        .ts_typed_array_buffers(false)
        .reset_state_function(false)
        .force_enable_abort_handler(false)
        .out_name(name);
    let mut output = bindgen.generate_output()?;
    layout::low_memory_unused(output.wasm())?;
    let glue = format!("./{name}_bg.js");
    let js = output.js().to_owned();
    let renamed = short_import_names(&js, &glue, output.wasm_mut())?;
    let (_, dropped, classes) = without_unreachable_classes(&js)?;
    drop_exports(output.wasm_mut(), &dropped)?;
    let lazy = unreached::without_lazy_hydration(output.wasm_mut());
    let methods = unreached::without_classes(output.wasm_mut(), &classes);
    println!(
        "{name}: {lazy} functions of lazy hydration and {methods} of {} classes left out",
        classes.len()
    );
    output.emit(out_dir)?;
    let js_path = out_dir.join(format!("{name}.js"));
    let written = std::fs::read_to_string(&js_path)?;
    let (kept, dropped_again, _) = without_unreachable_classes(&written)?;
    ensure!(
        dropped_again == dropped,
        "the glue written is not the glue generated"
    );
    std::fs::write(&js_path, rename_keys(&kept, &renamed)?)?;
    Ok(())
}

/// The glue without the classes JavaScript can never hold an instance of,
/// the module's exports only those classes called (to be removed, so
/// that `wasm-opt` drops the code behind them), and the classes' names.
///
/// A class is exported for every Rust type marked `#[wasm_bindgen]`,
/// whether or not the program ever hands one to JavaScript: `server_fn`'s
/// browser client compiles `wasm-streams`, whose three stream adapters no
/// page uses (in the editor's bundle, 4 KB of the optimised module and
/// 3.9 KB of the glue; 1.6 KB of brotli together). JavaScript gets an
/// instance only from a constructor or from the Rust side
/// (`Class.__wrap`); a class with neither is left out, with the line that
/// gives it `Symbol.dispose` and its finalization registry. The glue is
/// read line by line, as the builder hands it over (unindented) and as it
/// is written (indented) alike. Nothing left may name a class or an export
/// removed: that is an error, not a broken page.
fn without_unreachable_classes(js: &str) -> Result<(String, Vec<String>, Vec<String>)> {
    let lines: Vec<&str> = js.split('\n').collect();
    let mut dropped_lines = vec![false; lines.len()];
    let mut classes = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(class) = line
            .strip_prefix("export class ")
            .and_then(|rest| rest.strip_suffix(" {"))
        else {
            continue;
        };
        // The class ends where the line giving it `Symbol.dispose` follows
        // (every exported Rust type has `free`); a class without it is kept.
        let dispose = format!(
            "if (Symbol.dispose) {class}.prototype[Symbol.dispose] = {class}.prototype.free;"
        );
        let Some(end) = lines[start..]
            .iter()
            .position(|l| *l == dispose)
            .map(|at| start + at)
        else {
            continue;
        };
        ensure!(
            lines[end - 1].trim() == "}",
            "class {class} does not end before its Symbol.dispose line"
        );
        let constructed = lines[start..end]
            .iter()
            .any(|l| l.trim_start().starts_with("constructor("));
        if constructed || js.contains(&format!("{class}.__wrap(")) {
            continue;
        }
        dropped_lines[start..=end].fill(true);
        let registry = format!("const {class}Finalization = ");
        if let Some(first) = lines.iter().position(|l| l.starts_with(&registry)) {
            let last = first
                + lines[first..]
                    .iter()
                    .position(|l| l.ends_with(';'))
                    .with_context(|| format!("{class}'s finalization registry has no end"))?;
            dropped_lines[first..=last].fill(true);
        }
        classes.push(class.to_owned());
    }
    let mut dropped = Vec::new();
    let mut kept = Vec::new();
    for (line, drop) in lines.iter().zip(&dropped_lines) {
        if *drop {
            dropped.extend(wasm_calls(line));
        } else {
            kept.push(*line);
        }
    }
    dropped.sort();
    dropped.dedup();
    let kept = kept.join("\n");
    for class in &classes {
        ensure!(
            !kept.contains(class.as_str()),
            "the glue still names {class}"
        );
    }
    for export in &dropped {
        ensure!(
            !kept.contains(&format!("wasm.{export}")),
            "the glue still calls {export}"
        );
    }
    Ok((kept, dropped, classes))
}

/// The module's exports `line` names (`wasm.name`).
fn wasm_calls(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split("wasm.").skip(1).map(|rest| {
        rest.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    })
}

/// Removes each of `names` from the module's exports (each must be one).
fn drop_exports(module: &mut walrus::Module, names: &[String]) -> Result<()> {
    for name in names {
        let export = module
            .exports
            .iter()
            .find(|e| &e.name == name)
            .with_context(|| format!("the module exports no {name}"))?
            .id();
        module.exports.delete(export);
    }
    Ok(())
}

/// Gives each function the module imports from its glue (`glue`) a short
/// name (`a`, `b`, … `z`, `ba`, …) and returns the (old, new) pairs.
///
/// wasm-bindgen names them `__wbg_{function}_{16 hex digits}` (the digits a
/// hash, so that two crates' imports never clash), and every name is written
/// twice: in the module's import section and as a key of the glue's import
/// object (one a line). About 125 such names in a bundle are 3 KB of brotli
/// that carry nothing (measured on the editor's bundle: `docs/building.md`).
/// A name is renamed only if the glue has it as exactly one key, so nothing
/// can be left pointing at a name that no longer exists.
fn short_import_names(
    js: &str,
    glue: &str,
    module: &mut walrus::Module,
) -> Result<Vec<(String, String)>> {
    let mut renamed = Vec::new();
    for import in module.imports.iter_mut() {
        if import.module != glue || key_lines(js, &import.name) != 1 {
            continue;
        }
        let short = short_name(renamed.len());
        ensure!(
            key_lines(js, &short) == 0,
            "the glue already has a key {short}"
        );
        let old = std::mem::replace(&mut import.name, short.clone());
        renamed.push((old, short));
    }
    Ok(renamed)
}

/// How many lines of `js` start (after their indentation) with `name` as an
/// object key.
fn key_lines(js: &str, name: &str) -> usize {
    js.lines().filter(|line| is_key(line, name)).count()
}

/// Whether `line` starts, after its indentation, with the key `name`.
fn is_key(line: &str, name: &str) -> bool {
    line.trim_start()
        .strip_prefix(name)
        .is_some_and(|rest| rest.starts_with(": "))
}

/// The `n`th short name: `a` … `z`, then `ba` … (base 26 in letters, so
/// every name is a plain JavaScript identifier and none is `__proto__`).
fn short_name(mut n: usize) -> String {
    let mut name = Vec::new();
    loop {
        name.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    name.reverse();
    String::from_utf8(name).expect("letters")
}

/// The glue with each renamed import's key written with its new name.
fn rename_keys(js: &str, renamed: &[(String, String)]) -> Result<String> {
    let mut lines: Vec<String> = js.split('\n').map(str::to_owned).collect();
    for (old, new) in renamed {
        let mut found = lines.iter_mut().filter(|line| is_key(line, old));
        let (Some(line), None) = (found.next(), found.next()) else {
            bail!("the glue does not have {old} as exactly one key");
        };
        *line = line.replacen(old.as_str(), new, 1);
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_distinct_letters() {
        let names: Vec<String> = (0..26 * 27 + 1).map(short_name).collect();
        assert_eq!(names[0], "a");
        assert_eq!(names[25], "z");
        assert_eq!(names[26], "ba");
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert!(names
            .iter()
            .all(|n| n.bytes().all(|b| b.is_ascii_lowercase())));
    }

    /// A glue with a class no one can get (`Adapter`) and one the Rust
    /// side hands out (`Handle`).
    const GLUE: &str = "export function hydrate() {
    wasm.hydrate();
}

export class Adapter {
    __destroy_into_raw() {
        AdapterFinalization.unregister(this);
    }
    free() {
        wasm.__wbg_adapter_free(ptr, 0);
    }
    pull(controller) {
        const ret = wasm.adapter_pull(this.__wbg_ptr, controller);
        return ret;
    }
}
if (Symbol.dispose) Adapter.prototype[Symbol.dispose] = Adapter.prototype.free;

export class Handle {
    free() {
        wasm.__wbg_handle_free(ptr, 0);
    }
}
const AdapterFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_adapter_free(ptr, 1));
const imports = {
        a: function(arg0) { return Handle.__wrap(arg0); },
};";

    #[test]
    fn a_class_nothing_can_construct_is_left_out_with_its_exports() {
        let (kept, dropped, classes) = without_unreachable_classes(GLUE).unwrap();
        assert_eq!(dropped, ["__wbg_adapter_free", "adapter_pull"]);
        assert_eq!(classes, ["Adapter"]);
        assert!(!kept.contains("Adapter"));
        assert!(kept.contains("export class Handle {") && kept.contains("wasm.hydrate()"));
        assert!(kept.contains("const imports = {"));
        // A glue without such classes comes back as it was.
        assert_eq!(
            without_unreachable_classes(&kept).unwrap(),
            (kept.clone(), vec![], vec![])
        );
    }

    #[test]
    fn a_class_something_still_names_stops_the_build() {
        let glue = format!("{GLUE}\nconsole.log(Adapter);");
        assert!(without_unreachable_classes(&glue).is_err());
        let glue = format!("{GLUE}\nwasm.adapter_pull(0);");
        assert!(without_unreachable_classes(&glue).is_err());
        let constructed = GLUE.replace(
            "    __destroy_into_raw() {",
            "    constructor() {\n    }\n    __destroy_into_raw() {",
        );
        assert_eq!(
            without_unreachable_classes(&constructed).unwrap().1,
            Vec::<String>::new()
        );
    }

    #[test]
    fn keys_are_renamed_once_and_a_missing_key_is_an_error() {
        let js = "const i = {\n        __wbg_f_0123456789abcdef: function() {},\n    };";
        let renamed = vec![("__wbg_f_0123456789abcdef".to_owned(), "a".to_owned())];
        assert_eq!(
            rename_keys(js, &renamed).unwrap(),
            "const i = {\n        a: function() {},\n    };"
        );
        assert!(rename_keys("const i = {};", &renamed).is_err());
    }
}
