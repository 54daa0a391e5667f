//! `sb-wasm-bindgen INPUT.wasm OUT_DIR NAME`: writes the JavaScript glue
//! `NAME.js` and the module `NAME_bg.wasm` for a browser bundle, as
//! `wasm-bindgen --target web --no-typescript --out-name NAME --out-dir
//! OUT_DIR INPUT.wasm` does (the same builder calls, so the same bytes).
//! Its library's version is pinned in its Cargo.toml to the `wasm-bindgen`
//! the bundles link.

use anyhow::{bail, Context, Result};
use wasm_bindgen_cli_support::Bindgen;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [input, out_dir, name] => {
            let mut bindgen = Bindgen::new();
            bindgen.web(true)?;
            // Every setting the CLI passes, at the CLI's defaults: the
            // builder's own defaults differ (it omits the module's default
            // path, which the page's loader relies on).
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
            bindgen
                .generate(out_dir)
                .with_context(|| format!("wasm-bindgen of {input}"))
        }
        _ => bail!("usage: sb-wasm-bindgen INPUT.wasm OUT_DIR NAME"),
    }
}
