//! The browser bundles and their file names. There is one bundle per group
//! of pages (`Bundle`), each with only its own pages' islands. The build
//! names each file after a hash of its content (`editor.3f9c….wasm`) and
//! lists the hashes beside the site (`hash.txt` for the shared stylesheet,
//! `hash-{bundle}.txt` for each bundle's glue and module), so a browser may
//! keep a file for a year: a new build is a new name. The page shell links
//! whatever these say.

/// A browser bundle: the islands of one group of pages, built on its own
/// (the library's `pages-{name}` feature, linked by `bundles/{name}`)
/// so that a page downloads its own group's code and no other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bundle {
    /// Sign-in, the start page, the lesson list and a lesson's runs.
    Start,
    /// The lesson editor, the largest island.
    Editor,
    /// The live sessions list and the visualiser.
    Sessions,
    /// The admins' agents and bindings pages.
    Admin,
    /// The workflows, their settings and chat, and the plugin playground.
    Workflows,
}

impl Bundle {
    /// Every bundle, in the order the build makes them.
    pub const ALL: [Bundle; 5] = [
        Bundle::Start,
        Bundle::Editor,
        Bundle::Sessions,
        Bundle::Admin,
        Bundle::Workflows,
    ];

    /// The bundle's name: its files' (`pkg/{name}.HASH.wasm`), its feature's
    /// (`pages-{name}`) and its hash file's (`hash-{name}.txt`).
    pub fn name(self) -> &'static str {
        match self {
            Bundle::Start => "start",
            Bundle::Editor => "editor",
            Bundle::Sessions => "sessions",
            Bundle::Admin => "admin",
            Bundle::Workflows => "workflows",
        }
    }

    /// Where the bundle is in `ALL` (a table per bundle is an array).
    pub fn position(self) -> usize {
        self as usize
    }

    /// The file in the site root listing this bundle's `js` and `wasm`
    /// hashes (Leptos' hydration scripts read it).
    pub fn hash_file(self) -> String {
        format!("hash-{}.txt", self.name())
    }
}

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

    /// Whether a bundle's glue and module are both hashed (the hydration
    /// scripts then use the hashed names for both).
    pub fn scripts_hashed(&self) -> bool {
        self.js.is_some() && self.wasm.is_some()
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
        assert!(hashes.scripts_hashed());
        assert_eq!(
            hashes.stylesheet("switchboard"),
            "/pkg/switchboard.1234567890abcdef.css"
        );
    }

    #[test]
    fn odd_lines_and_unsafe_hashes_are_ignored() {
        let hashes = AssetHashes::parse("js: ../../etc\nwasm: a b\nfont: abc\nnonsense\ncss:\n");
        assert_eq!(hashes, AssetHashes::default());
        assert!(!hashes.scripts_hashed());
        assert_eq!(hashes.stylesheet("switchboard"), "/pkg/switchboard.css");
        let long = format!("js: {}", "a".repeat(MAX_HASH_CHARS + 1));
        assert_eq!(AssetHashes::parse(&long).js, None);
    }

    #[test]
    fn bundles_are_the_libraries_page_groups() {
        // Each bundle is a feature of the library and a package linking it
        // (`bundles/NAME`); a name here without both would be a bundle the
        // build never makes.
        let manifest = include_str!("../../Cargo.toml");
        let all_pages = manifest
            .lines()
            .find_map(|line| line.strip_prefix("all-pages = "))
            .expect("Cargo.toml lists all-pages");
        let names: Vec<String> = Bundle::ALL
            .iter()
            .map(|b| format!("\"pages-{}\"", b.name()))
            .collect();
        assert_eq!(all_pages, format!("[{}]", names.join(", ")));
        for bundle in Bundle::ALL {
            let package = match bundle {
                Bundle::Start => include_str!("../../bundles/start/Cargo.toml"),
                Bundle::Editor => include_str!("../../bundles/editor/Cargo.toml"),
                Bundle::Sessions => include_str!("../../bundles/sessions/Cargo.toml"),
                Bundle::Admin => include_str!("../../bundles/admin/Cargo.toml"),
                Bundle::Workflows => include_str!("../../bundles/workflows/Cargo.toml"),
            };
            let name = bundle.name();
            assert!(package.contains(&format!("name = \"bundle-{name}\"\n")));
            assert!(package.contains(&format!("features = [\"hydrate\", \"pages-{name}\"]")));
            assert_eq!(bundle.hash_file(), format!("hash-{name}.txt"));
            assert_eq!(Bundle::ALL[bundle.position()], bundle);
        }
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
