//! Connected MCP servers: an upstream MCP server an admin adds (a name, a
//! Streamable HTTP URL, optional headers) and what its tools become in the
//! catalogue.
//!
//! Each value is parsed once at the edge, so the store and the client only
//! ever hold a name that makes valid tool ids, a URL with a scheme they can
//! speak and headers that fit in a request. An upstream `tools/list` entry
//! is outside input too: its name is mapped to a catalogue id that names
//! its server (`everything__echo`), and its description and schema are
//! capped like a plugin's before they reach a model.

mod settings;
mod status;
mod tools;

pub use settings::*;
pub use status::*;
pub use tools::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::limits::{
        MCP_HEADERS_MAX_BYTES, MCP_SERVER_NAME_MAX_CHARS, MCP_TOOLS_PER_SERVER_MAX,
    };
    use crate::domain::plugin::{SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH};
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn server() -> McpServerName {
        McpServerName::parse("everything").unwrap()
    }

    fn listed(name: &str) -> UpstreamTool {
        UpstreamTool {
            name: name.to_owned(),
            title: None,
            description: Some(format!("Does {name}")),
            input_schema: json!({"type": "object", "properties": {}}),
        }
    }

    #[test]
    fn a_server_name_is_a_short_slug() {
        assert!(McpServerName::parse("everything-2").is_ok());
        for bad in ["", "-lead", "Upper", "a_b", "a b", &"a".repeat(25)] {
            assert_eq!(
                McpServerName::parse(bad).unwrap_err().field,
                "name",
                "{bad}"
            );
        }
    }

    #[test]
    fn an_upstream_url_is_http_or_https_with_a_host_and_no_credentials() {
        assert!(UpstreamUrl::parse("http://127.0.0.1:3001/mcp").is_ok());
        assert!(UpstreamUrl::parse("HTTPS://mcp.example.com").is_ok());
        assert!(UpstreamUrl::parse("http://[::1]:8080/mcp").is_ok());
        for bad in [
            "ftp://x",
            "http://",
            "http:///mcp",
            "http://user:pw@host/mcp",
            "http://a b",
            "mcp.example.com",
        ] {
            assert_eq!(UpstreamUrl::parse(bad).unwrap_err().field, "url", "{bad}");
        }
    }

    #[test]
    fn headers_are_capped_checked_and_never_shown_in_debug() {
        let ok = UpstreamHeaders::parse(BTreeMap::from([(
            "Authorization".to_owned(),
            "Bearer s3cret".to_owned(),
        )]))
        .unwrap();
        assert_eq!(ok.iter().next(), Some(("authorization", "Bearer s3cret")));
        assert!(!format!("{ok:?}").contains("s3cret"));
        let big = BTreeMap::from([("x-key".to_owned(), "k".repeat(MCP_HEADERS_MAX_BYTES))]);
        assert_eq!(UpstreamHeaders::parse(big).unwrap_err().field, "headers");
        let reserved = BTreeMap::from([("Host".to_owned(), "evil".to_owned())]);
        assert_eq!(
            UpstreamHeaders::parse(reserved).unwrap_err().field,
            "headers.Host"
        );
        let broken = BTreeMap::from([("x-a".to_owned(), "a\r\nx-b: c".to_owned())]);
        assert_eq!(
            UpstreamHeaders::parse(broken).unwrap_err().field,
            "headers.x-a"
        );
        let twice = BTreeMap::from([
            ("X-A".to_owned(), "1".to_owned()),
            ("x-a".to_owned(), "2".to_owned()),
        ]);
        assert!(UpstreamHeaders::parse(twice).is_err());
    }

    #[test]
    fn an_imported_id_names_its_server_and_maps_odd_characters_alike() {
        assert_eq!(
            imported_id(&server(), "echo").unwrap().as_str(),
            "everything__echo"
        );
        assert_eq!(
            imported_id(&server(), "get-sum").unwrap().as_str(),
            "everything__get-sum"
        );
        assert_eq!(
            imported_id(&server(), "fs.read file").unwrap().as_str(),
            "everything__fs_read_file"
        );
        assert!(imported_id(&server(), &"x".repeat(60)).is_err());
        assert!(imported_id(&server(), "").is_err());
    }

    #[test]
    fn an_import_takes_names_in_order_and_refuses_the_later_of_a_collision() {
        let got = import(&server(), &[listed("a_b"), listed("echo"), listed("a.b")]);
        let ids: Vec<&str> = got.tools.iter().map(|t| t.tool.id.as_str()).collect();
        assert_eq!(ids, ["everything__a_b", "everything__echo"]);
        assert_eq!(got.tools[0].upstream_name, "a.b");
        assert_eq!(got.skipped.len(), 1);
        assert!(got.skipped[0].contains("\"a_b\""), "{}", got.skipped[0]);
    }

    #[test]
    fn an_imported_tool_keeps_its_schema_and_describes_itself_when_upstream_does_not() {
        let mut entry = listed("echo");
        entry.description = None;
        entry.input_schema =
            json!({"type": "object", "properties": {"message": {"type": "string"}}});
        let got = import(&server(), &[entry.clone()]);
        let tool = &got.tools[0].tool;
        assert_eq!(tool.parameters, entry.input_schema);
        assert_eq!(tool.category, "mcp:everything");
        assert_eq!(tool.description, "Tool echo of MCP server everything.");
        assert!(tool.problems().is_empty(), "{:?}", tool.problems());
    }

    #[test]
    fn schemas_too_big_too_deep_or_not_objects_are_left_out_saying_why() {
        let mut deep = json!({"type": "string"});
        for _ in 0..SCHEMA_MAX_DEPTH {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let mut big = listed("big");
        big.input_schema = json!({"type": "object", "description": "d".repeat(SCHEMA_MAX_BYTES)});
        let mut nested = listed("deep");
        nested.input_schema = deep;
        let mut flat = listed("flat");
        flat.input_schema = json!({"type": "string"});
        let got = import(&server(), &[big, nested, flat]);
        assert!(got.tools.is_empty());
        assert_eq!(got.skipped.len(), 3, "{:?}", got.skipped);
    }

    #[test]
    fn an_import_stops_at_the_tools_per_server_limit() {
        let many: Vec<UpstreamTool> = (0..MCP_TOOLS_PER_SERVER_MAX + 3)
            .map(|i| listed(&format!("t{i:04}")))
            .collect();
        let got = import(&server(), &many);
        assert_eq!(got.tools.len(), MCP_TOOLS_PER_SERVER_MAX);
        assert_eq!(got.skipped.len(), 1);
    }

    #[test]
    fn a_reimport_keeps_an_admins_description_requirements_and_effects() {
        let fresh = import(&server(), &[listed("echo")]).tools.remove(0);
        let mut edited = fresh.tool.clone();
        edited.description = "Say it back, politely.".to_owned();
        edited.requires = vec!["identity_verified".to_owned()];
        let merged = fresh.clone().over(Some(&edited), Some("Does echo"));
        assert_eq!(merged.tool.description, "Say it back, politely.");
        assert_eq!(merged.tool.requires, edited.requires);
        let untouched = fresh.clone().over(Some(&fresh.tool), Some("Does echo"));
        assert_eq!(untouched.tool.description, "Does echo");
    }

    #[test]
    fn a_call_result_carries_text_structured_content_and_the_error_flag() {
        let got = call_result(&["a".into(), "b".into()], Some(json!({"sum": 3})), false);
        assert_eq!(
            got,
            json!({"text": "a\nb", "isError": false, "structuredContent": {"sum": 3}})
        );
    }

    proptest! {
        #[test]
        fn a_parsed_name_always_makes_valid_ids(name in "[a-z0-9-]{0,30}", tool in "\\PC{0,70}") {
            if let Ok(server) = McpServerName::parse(&name) {
                prop_assert!(name.len() <= MCP_SERVER_NAME_MAX_CHARS && !name.starts_with('-'));
                if let Ok(id) = imported_id(&server, &tool) {
                    let prefix = format!("{name}__");
                    prop_assert!(id.as_str().starts_with(&prefix));
                    prop_assert_eq!(imported_id(&server, &tool).unwrap(), id);
                }
            }
        }

        #[test]
        fn a_parsed_url_is_http_without_spaces(raw in "\\PC{0,60}") {
            if let Ok(url) = UpstreamUrl::parse(&raw) {
                let lower = url.as_str().to_ascii_lowercase();
                prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
                prop_assert!(!url.as_str().contains(' '));
            }
        }

        #[test]
        fn parsed_headers_never_hold_a_line_break(name in "[A-Za-z-]{1,10}", value in "\\PC{0,40}") {
            if let Ok(h) = UpstreamHeaders::parse(BTreeMap::from([(name, value)])) {
                prop_assert!(h.iter().all(|(_, v)| !v.contains(['\r', '\n'])));
            }
        }
    }
}
