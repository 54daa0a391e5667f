//! Code no page can run, left out of a bundle's module after the linker:
//! each function named for it gets an `unreachable` body, so `wasm-opt`
//! drops everything only it called. Two kinds are left out this way.
//!
//! **Lazy hydration.** Leptos 0.8 stores, in every type-erased view
//! (`AnyView`, which the `erase_components` build makes of every
//! component's view), a pointer to that view's *lazy* hydration
//! (`hydrate_async`), so the async hydration code of every view type is
//! compiled into the module whether or not the app can ever run it: about
//! a tenth of the editor's module before `wasm-opt`. Only lazy routes and
//! lazy islands (`hydrate_lazy`, `#[lazy]`) start it; this app hydrates its
//! islands at once (`hydrate_islands`), so nothing runs it. Leptos 0.9 puts
//! it behind a `lazy` feature (leptos-rs/leptos#4438).
//!
//! **The methods of classes left out of the glue.** A class JavaScript can
//! never hold an instance of goes, with its exports
//! (`without_unreachable_classes` in `main.rs`); what its methods built and
//! left only in the function table stays reachable for `wasm-opt` (a
//! closure's vtable holds its index as data). For `server_fn`'s browser
//! client these are `wasm-streams`' stream adapters: the futures their
//! `pull`, `write`, `close` and `abort` hand to JavaScript, 6 KB of the
//! editor's module before `wasm-opt` and 2.0 KB of its brotli after.
//!
//! Taken out only where that is sure: a function is kept whole when
//! anything not taken out calls it or names it (the optimiser merges
//! identical functions, so a helper the eager hydration shares can carry
//! the lazy one's name), when the module exports it, and drop glue is
//! always kept (merged drop glue is shared by unrelated types through
//! their vtables, which no call names); a left-out class is cut by its
//! type's name only when one path carries that name. What is left that
//! only the function table reaches are the views' lazy entry points (the
//! pointer each `AnyView` keeps), the futures they return and the effects
//! those build (an `unreachable!` where the eager ones hydrate), and the
//! left-out classes' futures, which no kept code shares. The Playwright
//! suite runs the debug bundles, cut the same way.

use std::collections::HashSet;
use walrus::ir::Visitor;
use walrus::{ExportItem, FunctionId, Module};

/// What names a function of the lazy hydration (its methods, the futures
/// they return and their helpers).
const LAZY_HYDRATION: &str = "hydrate_async";
/// What names drop glue, kept whatever type it was compiled for.
const DROP_GLUE: &str = "drop_in_place";

/// Gives every function named for the lazy hydration that nothing else
/// reaches an `unreachable` body; returns how many.
pub fn without_lazy_hydration(module: &mut Module) -> usize {
    unreached(module, |name| name.contains(LAZY_HYDRATION))
}

/// Gives every method of the left-out `classes` (the Rust types of those
/// names), and what they built, that nothing else reaches an `unreachable`
/// body; returns how many. A class whose name two types of different
/// paths carry (`a::Adapter`, `b::Adapter`) is not cut at all: the names
/// could not tell the kept type's code from the left-out one's.
pub fn without_classes(module: &mut Module, classes: &[String]) -> usize {
    let names: Vec<&str> = module
        .funcs
        .iter_local()
        .filter_map(|(id, _)| module.funcs.get(id).name.as_deref())
        .collect();
    let certain: Vec<&String> = classes
        .iter()
        .filter(|class| {
            let paths: HashSet<&str> = names
                .iter()
                .flat_map(|name| type_paths(name, class))
                .collect();
            paths.len() == 1
        })
        .collect();
    unreached(module, |name| {
        certain
            .iter()
            .any(|class| type_paths(name, class).next().is_some())
    })
}

/// The paths by which a demangled `name` names the type `ty`, each a path
/// segment of it: `wasm_streams::readable::` in
/// `<wasm_streams::readable::IntoUnderlyingSource>::pull`, nothing for
/// `IntoUnderlyingSourceX`.
fn type_paths<'a>(name: &'a str, ty: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    name.match_indices(ty).filter_map(move |(at, _)| {
        let before = &name[..at];
        let segment_ends =
            !name[at + ty.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_:[]".contains(c)))
            .map_or(0, |i| i + 1);
        (before.ends_with("::") && segment_ends).then(|| &before[start..])
    })
}

/// Gives every function whose name `marked` picks, but no export, drop
/// glue or function outside reaches, an `unreachable` body; returns how
/// many.
fn unreached(module: &mut Module, marked: impl Fn(&str) -> bool) -> usize {
    let mut cut: HashSet<FunctionId> = module
        .funcs
        .iter_local()
        .map(|(id, _)| id)
        .filter(|id| {
            module
                .funcs
                .get(*id)
                .name
                .as_deref()
                .is_some_and(|name| marked(name) && !name.contains(DROP_GLUE))
        })
        .collect();
    for export in module.exports.iter() {
        if let ExportItem::Function(id) = export.item {
            cut.remove(&id);
        }
    }
    // Until no function left outside names one inside: each round keeps
    // whole what the functions outside name.
    loop {
        let mut named = Names {
            cut: &cut,
            found: Vec::new(),
        };
        for (id, function) in module.funcs.iter_local() {
            if !cut.contains(&id) {
                walrus::ir::dfs_in_order(&mut named, function, function.entry_block());
            }
        }
        if named.found.is_empty() {
            break;
        }
        let found = named.found;
        for id in found {
            cut.remove(&id);
        }
    }
    for id in &cut {
        let function = module.funcs.get_mut(*id).kind.unwrap_local_mut();
        let entry = function.entry_block();
        function.block_mut(entry).instrs.clear();
        function.builder_mut().func_body().unreachable();
    }
    cut.len()
}

/// Collects the functions of `cut` that a body names (a call, a tail
/// call, a `ref.func`).
struct Names<'a> {
    cut: &'a HashSet<FunctionId>,
    found: Vec<FunctionId>,
}

impl<'instr> Visitor<'instr> for Names<'_> {
    fn visit_function_id(&mut self, function: &FunctionId) {
        if self.cut.contains(function) {
            self.found.push(*function);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use walrus::ir::Instr;
    use walrus::{FunctionBuilder, ModuleConfig};

    /// Adds a function named `name` calling each of `calls`.
    fn function(module: &mut Module, name: &str, calls: &[FunctionId]) -> FunctionId {
        let mut builder = FunctionBuilder::new(&mut module.types, &[], &[]);
        let mut body = builder.func_body();
        for callee in calls {
            body.call(*callee);
        }
        let id = builder.finish(Vec::new(), &mut module.funcs);
        module.funcs.get_mut(id).name = Some(name.to_owned());
        id
    }

    fn is_stub(module: &Module, id: FunctionId) -> bool {
        let function = module.funcs.get(id).kind.unwrap_local();
        let body = &function.block(function.entry_block()).instrs;
        body.len() == 1 && matches!(body[0].0, Instr::Unreachable(_))
    }

    #[test]
    fn only_what_nothing_else_reaches_is_taken_out() {
        let mut module = Module::with_config(ModuleConfig::new());
        let helper = function(
            &mut module,
            "<V as RenderHtml>::hydrate_async::{closure#0}::prep",
            &[],
        );
        let inner = function(
            &mut module,
            "<V as RenderHtml>::hydrate_async::{closure#0}",
            &[],
        );
        let lazy = function(
            &mut module,
            "<_ as IntoAny>::into_any::hydrate_async::<V>",
            &[inner, helper],
        );
        let shared = function(
            &mut module,
            "<W as RenderHtml>::hydrate_async::{closure#0}",
            &[],
        );
        let glue = function(
            &mut module,
            "core::ptr::drop_in_place::<<V as RenderHtml>::hydrate_async::{closure#0}>",
            &[],
        );
        let exported = function(&mut module, "<X as RenderHtml>::hydrate_async", &[]);
        let eager = function(
            &mut module,
            "<_ as IntoAny>::into_any::hydrate_from_server::<V>",
            &[helper],
        );
        let caller = function(
            &mut module,
            "<_ as IntoAny>::into_any::build::<W>",
            &[shared],
        );
        module.exports.add("x", exported);

        assert_eq!(without_lazy_hydration(&mut module), 2);
        assert!(is_stub(&module, lazy));
        assert!(is_stub(&module, inner));
        for kept in [helper, shared, glue, exported, eager, caller] {
            assert!(!is_stub(&module, kept), "{:?}", module.funcs.get(kept).name);
        }
    }

    #[test]
    fn a_left_out_class_takes_its_methods_futures_with_it() {
        let mut module = Module::with_config(ModuleConfig::new());
        let future = function(
            &mut module,
            "js_sys::futures::future_to_promise::<<s::IntoSource>::pull::{closure#0}>::{closure#0}",
            &[],
        );
        let other = function(&mut module, "<s::IntoSourceX>::pull::{closure#0}", &[]);
        let glue = function(
            &mut module,
            "core::ptr::drop_in_place::<s::IntoSource>",
            &[],
        );
        let shared = function(&mut module, "<s::IntoSource>::new", &[]);
        let user = function(&mut module, "app::main", &[shared]);

        assert_eq!(without_classes(&mut module, &["IntoSource".into()]), 1);
        assert!(is_stub(&module, future));
        for kept in [other, glue, shared, user] {
            assert!(!is_stub(&module, kept), "{:?}", module.funcs.get(kept).name);
        }
        assert_eq!(without_classes(&mut module, &[]), 0);
    }

    #[test]
    fn a_class_name_two_types_carry_is_not_cut() {
        let mut module = Module::with_config(ModuleConfig::new());
        let left_out = function(&mut module, "<s::IntoSource>::pull::{closure#0}", &[]);
        let kept = function(&mut module, "<t::IntoSource>::pull::{closure#0}", &[]);

        assert_eq!(without_classes(&mut module, &["IntoSource".into()]), 0);
        for kept in [left_out, kept] {
            assert!(!is_stub(&module, kept));
        }
    }

    #[test]
    fn a_function_named_only_by_a_kept_one_is_kept_too() {
        let mut module = Module::with_config(ModuleConfig::new());
        let deepest = function(&mut module, "a::hydrate_async::{closure#1}", &[]);
        let middle = function(&mut module, "a::hydrate_async::{closure#0}", &[deepest]);
        let eager = function(&mut module, "a::hydrate", &[middle]);
        let lazy = function(&mut module, "b::hydrate_async", &[deepest]);

        assert_eq!(without_lazy_hydration(&mut module), 1);
        assert!(is_stub(&module, lazy));
        for kept in [deepest, middle, eager] {
            assert!(!is_stub(&module, kept));
        }
    }
}
