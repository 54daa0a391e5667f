//! Whole-number inputs (a lesson's minutes, a trigger's turns): what the
//! teacher types stays as typed while they type, and what is not a whole
//! number is never read as "nothing".
//!
//! A `type="number"` input bound to the draft with a reactive `prop:value`
//! rewrote half-typed text: `12.` reads as no value, the draft changed, and
//! the value written back cleared the field under the cursor (`12.5`
//! became `512`); a decimal read as "none" was dropped on save without a
//! word. These inputs are text with a numeric keyboard, keep the typed
//! text while focused ([`typing`]), and read text that is not a whole
//! number as [`NOT_WHOLE`], which every range rule refuses by name.

/// What a number that is not whole (`2.5`, `1e2`, `-3`) is read as: 0,
/// outside every range these fields take (1 and up), so the field's rule
/// names the range and Save stays off until it is fixed.
pub const NOT_WHOLE: u32 = 0;

/// The field's text as a number: `None` when blank, [`NOT_WHOLE`] for
/// anything but digits.
pub fn whole_number(raw: &str) -> Option<u32> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    Some(raw.parse().unwrap_or(NOT_WHOLE))
}

/// What the input with element id `id` shows while it has the focus (the
/// teacher is typing in it), for its `prop:value` to write back unchanged;
/// `None` when another element has the focus (the draft changed by other
/// means: a preset, a restore), and always on the server. By id rather
/// than a `NodeRef`: the focused element is read when the value is, and
/// no element is kept for it.
pub fn typing(id: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let active = leptos::prelude::document().active_element()?;
        (active.id() == id).then(|| active.unchecked_into::<web_sys::HtmlInputElement>().value())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = id;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_digits_read_as_a_number_and_blank_as_none() {
        assert_eq!(whole_number(" 12 "), Some(12));
        assert_eq!(whole_number(""), None);
        assert_eq!(whole_number("  "), None);
        for raw in ["2.5", "1e2", "-3", "12.", "x"] {
            assert_eq!(whole_number(raw), Some(NOT_WHOLE), "{raw}");
        }
    }
}
