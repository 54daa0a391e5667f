//! The check that lets the release bundles be optimised with binaryen's
//! `--low-memory-unused` (`scripts/bundle.sh`): the module must never
//! touch the first KiB of its memory.
//!
//! With that promise, `wasm-opt` folds a constant added to an address into
//! the load's or store's own offset (`optimize-added-constants`): the two
//! differ only when the sum wraps past 2^32, which can happen only for an
//! address below 1 KiB. It saves 0.4–0.7 % of every bundle's brotli
//! (`docs/building.md`). The promise holds because `wasm-ld` lays a Rust
//! module out stack first: the stack starts at 1 MiB and grows down, the
//! static data and the heap lie above it, and Rust never reads through a
//! null pointer. A module laid out otherwise (data placed low, or a stack
//! so small that a deep call could reach the first KiB) stops the build
//! here, instead of being optimised on a promise it breaks.

use anyhow::{ensure, Context, Result};
use walrus::ir::Value;
use walrus::{ConstExpr, DataKind, GlobalKind, Module};

/// The memory `--low-memory-unused` lets binaryen assume untouched
/// (binaryen's `PassOptions::LowMemoryBound`).
pub const LOW_MEMORY: u32 = 1024;

/// The least stack a module may start with: a stack of less would let a
/// call chain reach [`LOW_MEMORY`] before the browser's own limits stop
/// it. Rust's wasm target gives 1 MiB.
pub const MIN_STACK: u32 = 64 * 1024;

/// Fails unless every active data segment lies at or above [`LOW_MEMORY`]
/// and the stack (`__stack_pointer`, named by `wasm-ld`) starts at
/// [`MIN_STACK`] or higher.
pub fn low_memory_unused(module: &Module) -> Result<()> {
    for data in module.data.iter() {
        if let DataKind::Active { offset, .. } = &data.kind {
            let at = constant(offset).with_context(|| {
                format!("data segment {:?} is not at a constant address", data.name)
            })?;
            ensure!(
                at >= LOW_MEMORY,
                "data segment {:?} starts at {at}, inside the first {LOW_MEMORY} bytes that --low-memory-unused promises are untouched",
                data.name
            );
        }
    }
    let stack = module
        .globals
        .iter()
        .find(|g| g.name.as_deref() == Some("__stack_pointer"))
        .context("the module names no __stack_pointer, so where its stack lies is unknown")?;
    let start = match &stack.kind {
        GlobalKind::Local(init) => constant(init),
        GlobalKind::Import(_) => None,
    }
    .context("__stack_pointer does not start at a constant address")?;
    ensure!(
        start >= MIN_STACK,
        "the stack starts at {start}, below {MIN_STACK}: a deep call could reach the first {LOW_MEMORY} bytes that --low-memory-unused promises are untouched"
    );
    Ok(())
}

/// The address a constant expression gives, if it is a plain `i32`.
fn constant(expr: &ConstExpr) -> Option<u32> {
    match expr {
        ConstExpr::Value(Value::I32(n)) => Some(*n as u32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use walrus::{ModuleConfig, ValType};

    /// A module with one memory, a data segment at `data_at` and a stack
    /// pointer starting at `stack`.
    fn module(data_at: i32, stack: i32) -> Module {
        let mut module = Module::with_config(ModuleConfig::new());
        let memory = module.memories.add_local(false, false, 17, None, None);
        module.data.add(
            DataKind::Active {
                memory,
                offset: ConstExpr::Value(Value::I32(data_at)),
            },
            b"text".to_vec(),
        );
        let sp = module.globals.add_local(
            ValType::I32,
            true,
            false,
            ConstExpr::Value(Value::I32(stack)),
        );
        module.globals.get_mut(sp).name = Some("__stack_pointer".into());
        module
    }

    #[test]
    fn a_stack_first_module_passes() {
        assert!(low_memory_unused(&module(1 << 20, 1 << 20)).is_ok());
    }

    #[test]
    fn data_in_the_first_kib_or_a_small_stack_stops_the_build() {
        let low = low_memory_unused(&module(16, 1 << 20)).unwrap_err();
        assert!(low.to_string().contains("starts at 16"), "{low}");
        let small = low_memory_unused(&module(1 << 20, 4096)).unwrap_err();
        assert!(
            small.to_string().contains("stack starts at 4096"),
            "{small}"
        );
        let mut unnamed = module(1 << 20, 1 << 20);
        let ids: Vec<_> = unnamed.globals.iter().map(|g| g.id()).collect();
        for id in ids {
            unnamed.globals.get_mut(id).name = None;
        }
        assert!(low_memory_unused(&unnamed).is_err());
    }
}
