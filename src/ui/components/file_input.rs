//! The file an `<input type="file">` was just given, for the pages that
//! import one (manifests on `/agents`, a workflow's definition).

/// The first file the input behind `ev` holds, with the input emptied so
/// picking the same file again fires `change` again.
#[cfg(feature = "hydrate")]
pub fn picked_file(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    use wasm_bindgen::JsCast;
    let input: web_sys::HtmlInputElement = ev.target()?.dyn_into().ok()?;
    let file = input.files()?.get(0)?;
    input.set_value("");
    Some(file)
}
