//! The browser bundle's file names. The build names each file after a hash
//! of its content (`switchboard.3f9c….wasm`) and lists the hashes in
//! `hash.txt` beside the site, so a browser may keep a file for a year: a
//! new build is a new name. The page shell links whatever this says.

/// The hashes `hash.txt` gives, per kind of file; a kind it does not name
/// keeps the plain name (a bundle built without hashing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssetHashes {
    /// Of the JavaScript glue.
    pub js: Option<String>,
    /// Of the WebAssembly module.
    pub wasm: Option<String>,
    /// Of the stylesheet.
    pub css: Option<String>,
}

/// Longest hash accepted: names stay short and a stray file cannot turn
/// into a long URL.
pub const MAX_HASH_CHARS: usize = 64;

impl AssetHashes {
    /// Reads `hash.txt`: one `kind: hash` a line (`js`, `wasm`, `css`; the
    /// format Leptos' hydration scripts read). Lines of other kinds, and
    /// hashes that are not 1-64 ASCII letters and digits, are ignored, so
    /// nothing but a plain name segment reaches a URL.
    pub fn parse(text: &str) -> Self {
        let mut hashes = Self::default();
        for line in text.lines() {
            let Some((kind, hash)) = line.split_once(':') else {
                continue;
            };
            let hash = hash.trim();
            let plain = !hash.is_empty()
                && hash.len() <= MAX_HASH_CHARS
                && hash.bytes().all(|b| b.is_ascii_alphanumeric());
            if !plain {
                continue;
            }
            let slot = match kind.trim() {
                "js" => &mut hashes.js,
                "wasm" => &mut hashes.wasm,
                "css" => &mut hashes.css,
                _ => continue,
            };
            *slot = Some(hash.to_owned());
        }
        hashes
    }

    /// Whether every file is hashed (the hydration scripts then use the
    /// hashed names for both the glue and the module).
    pub fn complete(&self) -> bool {
        self.js.is_some() && self.wasm.is_some() && self.css.is_some()
    }

    /// The stylesheet's URL under `/pkg`, for the output `name`.
    pub fn stylesheet(&self, name: &str) -> String {
        match &self.css {
            Some(hash) => format!("/pkg/{name}.{hash}.css"),
            None => format!("/pkg/{name}.css"),
        }
    }
}

/// Whether a file name under `/pkg` is content-hashed
/// (`NAME.HASH.EXT`, optionally with `.br` / `.gz`): such a file never
/// changes, so it may be cached for good.
pub fn is_hashed(file: &str) -> bool {
    let file = file
        .strip_suffix(".br")
        .or_else(|| file.strip_suffix(".gz"))
        .unwrap_or(file);
    let mut parts = file.rsplit('.');
    let (Some(_ext), Some(hash), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !name.is_empty()
        && (8..=MAX_HASH_CHARS).contains(&hash.len())
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_file_lines_name_each_kind() {
        let hashes = AssetHashes::parse(
            "js: 0a1b2c3d4e5f6071\nwasm:ffeeddccbbaa9988\n css : 1234567890abcdef \n",
        );
        assert_eq!(hashes.js.as_deref(), Some("0a1b2c3d4e5f6071"));
        assert_eq!(hashes.wasm.as_deref(), Some("ffeeddccbbaa9988"));
        assert!(hashes.complete());
        assert_eq!(
            hashes.stylesheet("switchboard"),
            "/pkg/switchboard.1234567890abcdef.css"
        );
    }

    #[test]
    fn odd_lines_and_unsafe_hashes_are_ignored() {
        let hashes = AssetHashes::parse("js: ../../etc\nwasm: a b\nfont: abc\nnonsense\ncss:\n");
        assert_eq!(hashes, AssetHashes::default());
        assert!(!hashes.complete());
        assert_eq!(hashes.stylesheet("switchboard"), "/pkg/switchboard.css");
        let long = format!("js: {}", "a".repeat(MAX_HASH_CHARS + 1));
        assert_eq!(AssetHashes::parse(&long).js, None);
    }

    #[test]
    fn only_content_hashed_names_are_immutable() {
        for hashed in [
            "switchboard.0a1b2c3d4e5f6071.wasm",
            "switchboard.0a1b2c3d4e5f6071.wasm.br",
            "switchboard.0a1b2c3d4e5f6071.js.gz",
            "switchboard.0a1b2c3d4e5f6071.css",
        ] {
            assert!(is_hashed(hashed), "{hashed}");
        }
        for plain in [
            "switchboard.wasm",
            "switchboard_bg.wasm",
            "switchboard.css.br",
            "switchboard.notahexhash.js",
            ".0a1b2c3d4e5f6071.js",
            "favicon.svg",
        ] {
            assert!(!is_hashed(plain), "{plain}");
        }
    }
}
