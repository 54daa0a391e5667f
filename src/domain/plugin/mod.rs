//! Plugin tools: the tools an app embedding an agent (a CODAP plugin, a
//! Slack bot, a database console) registers for one session, changes as its
//! state changes, and answers when the agent calls them.
//!
//! Pure: the shapes of the registration API, the checks each tool passes
//! alone (name, description, schema size and depth — compiling the schema
//! is injected, it needs the server's JSON-Schema engine), and the plans
//! that turn a registration or a patch into the session's next tool set
//! with what was added, removed and modified. The server applies a plan
//! atomically, so a refused request changes nothing.
//!
//! Read leaf first: `registration` (the API's shapes and limits),
//! `schema` (a tool's schema as sent), `set` (the tools as stored),
//! `update` (what a change did), `check` (each part alone), `plan`.

mod check;
mod plan;
mod registration;
mod schema;
mod set;
mod shape;
mod update;
pub use check::{check_definition, check_registration};
pub use plan::*;
pub use registration::*;
pub use schema::{depth, Schema};
pub use set::*;
pub use shape::Shape;
pub use update::*;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn def(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: format!("Does {name}."),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}).into(),
        }
    }
    fn none(_: &str) -> bool {
        false
    }
    #[test]
    fn a_registered_tool_reads_back_as_written_with_its_schema_text() {
        let tool = PluginTool {
            definition: ToolDefinition {
                name: "createGraph".into(),
                description: "Draws a graph.".into(),
                parameters: serde_json::from_str(
                    r#"{"type": "object", "properties": {"x": {"type": "string"}}}"#,
                )
                .unwrap(),
            },
            status: ToolStatus::Disabled,
            registered_at: 7,
            usage_count: 3,
        };
        let text = serde_json::to_string(&tool).unwrap();
        assert!(text.contains(r#""parameters":{"type": "object""#), "{text}");
        assert!(text.contains(r#""registeredAt":7"#), "{text}");
        let back: PluginTool = serde_json::from_str(&text).unwrap();
        assert_eq!(back, tool);
        assert_eq!(
            serde_json::from_value::<PluginTool>(serde_json::to_value(&tool).unwrap()).unwrap(),
            tool
        );
    }

    fn ok(_: &Schema) -> Result<(), String> {
        Ok(())
    }

    #[test]
    fn a_schema_holding_a_number_no_tree_can_hold_fails_alone_naming_it() {
        let mut big = def("bigNumber");
        big.parameters = serde_json::from_str(r#"{"type": "object", "maximum": 1e400}"#).unwrap();
        // The server compiles (and so builds the tree) before it checks.
        assert!(big.parameters.value().is_null());
        let err = check_definition(&big, &none, &ok).unwrap_err();
        assert!(
            err.error.starts_with("parameters: number out of range"),
            "{}",
            err.error
        );
        assert!(err.recoverable);
        assert!(check_definition(&def("fine"), &none, &ok).is_ok());
    }
    const LIMITS: Limits = Limits {
        max_tools: 5,
        max_bytes: 1024 * 1024,
    };

    #[test]
    fn each_field_is_checked_and_named() {
        let catalogue = |n: &str| n == "get_server_time";
        let cases = [
            (
                ToolDefinition {
                    name: "bad name".into(),
                    ..def("x")
                },
                "name: tool id",
            ),
            (def("get_server_time"), "is a catalogue tool"),
            (
                ToolDefinition {
                    description: " ".into(),
                    ..def("a")
                },
                "description: is required",
            ),
            (
                ToolDefinition {
                    description: "d".repeat(1025),
                    ..def("a")
                },
                "at most 1024 characters (got 1025)",
            ),
            (
                ToolDefinition {
                    parameters: json!({"type": "string"}).into(),
                    ..def("a")
                },
                "\"type\": \"object\"",
            ),
            (
                ToolDefinition {
                    parameters: json!({"type": "object", "description": "x".repeat(17_000)}).into(),
                    ..def("a")
                },
                "at most 16384 bytes",
            ),
        ];
        for (d, expected) in cases {
            let e = check_definition(&d, &catalogue, &ok).unwrap_err();
            assert!(e.error.contains(expected), "{} → {}", d.name, e.error);
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..13 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        let e = check_definition(
            &ToolDefinition {
                parameters: deep.into(),
                ..def("a")
            },
            &none,
            &ok,
        )
        .unwrap_err();
        assert!(e.error.contains("nest at most 12 levels"), "{}", e.error);
        let e = check_definition(&def("a"), &none, &|_| Err("bad regex".into())).unwrap_err();
        assert_eq!(e.error, "parameters: bad regex");
        assert!(e.recoverable);
        assert!(check_definition(&def("createGraph"), &none, &ok).is_ok());
    }

    #[test]
    fn a_registrations_own_fields_are_bounded_and_named() {
        let ok = Registration {
            plugin_type: PluginType::Codap,
            plugin_version: "1".into(),
            capabilities: vec![],
            available_tools: vec![],
            environment: Environment::default(),
            constraints: None,
        };
        assert!(check_registration(&ok).is_ok());
        let long = Registration {
            plugin_version: "v".repeat(65),
            ..ok.clone()
        };
        assert_eq!(
            check_registration(&long).unwrap_err().field,
            "pluginVersion"
        );
        let mut many = ok.clone();
        many.environment.features = vec!["f".into(); 51];
        assert_eq!(
            check_registration(&many).unwrap_err().field,
            "environment.features"
        );
        let big = Registration {
            constraints: Some(json!({"x": "y".repeat(33_000)})),
            ..ok
        };
        let e = check_registration(&big).unwrap_err();
        assert_eq!(e.field, "constraints");
        assert!(e.rule.contains("at most 32768 bytes"), "{}", e.rule);
    }

    #[test]
    fn a_registration_keeps_good_tools_and_lists_bad_ones() {
        let incoming = vec![
            def("createTable"),
            def("bad name"),
            def("addRow"),
            def("createTable"),
        ];
        let plan = plan_registration(&[], &incoming, 7, LIMITS, &none, &ok).unwrap();
        assert_eq!(plan.registered, ["createTable", "addRow"]);
        assert_eq!(plan.failed.len(), 2);
        assert_eq!(plan.failed[0].tool_name, "bad name");
        assert!(plan.failed[1].error.contains("sent twice"));
        assert_eq!(plan.diff.added.len(), 2);
        assert!(plan
            .tools
            .iter()
            .all(|t| t.registered_at == 7 && t.status == ToolStatus::Active));
    }

    #[test]
    fn a_second_registration_replaces_and_says_what_changed() {
        let first = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok).unwrap();
        let mut tools = first.tools;
        tools[0].usage_count = 3;
        let changed = ToolDefinition {
            description: "New.".into(),
            ..def("a")
        };
        let second =
            plan_registration(&tools, &[changed.clone(), def("c")], 9, LIMITS, &none, &ok).unwrap();
        assert_eq!(second.diff.added, vec![def("c")]);
        assert_eq!(second.diff.removed, vec!["b".to_owned()]);
        assert_eq!(second.diff.modified, vec![changed]);
        assert_eq!(
            (second.tools[0].usage_count, second.tools[0].registered_at),
            (3, 1)
        );
        assert_eq!(update_kind(&second.diff, true), "tools-registered");
    }

    #[test]
    fn over_the_limit_nothing_is_registered() {
        let many: Vec<_> = (0..6).map(|i| def(&format!("t{i}"))).collect();
        let e = plan_registration(&[], &many, 1, LIMITS, &none, &ok).unwrap_err();
        assert_eq!(
            e,
            OverLimit::Tools {
                would_hold: 6,
                max: 5
            }
        );
        let four = plan_registration(&[], &many[..4], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let patch = Patch {
            add: vec![def("x"), def("y")],
            ..Patch::default()
        };
        assert!(plan_patch(&four, &patch, 2, LIMITS, &none, &ok).is_err());
        let patch = Patch {
            add: vec![def("x")],
            ..Patch::default()
        };
        assert_eq!(
            plan_patch(&four, &patch, 2, LIMITS, &none, &ok)
                .unwrap()
                .tools
                .len(),
            5
        );
    }

    #[test]
    fn a_patch_removes_modifies_and_adds_each_entry_alone() {
        let tools = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let patch = Patch {
            add: vec![def("c"), def("a")],
            remove: vec!["b".into(), "zz".into()],
            modify: vec![
                ToolChange {
                    name: "a".into(),
                    description: None,
                    parameters: None,
                    status: Some(ToolStatus::Disabled),
                },
                ToolChange {
                    name: "ghost".into(),
                    description: Some("x".into()),
                    parameters: None,
                    status: None,
                },
            ],
        };
        let plan = plan_patch(&tools, &patch, 5, LIMITS, &none, &ok).unwrap();
        let names: Vec<_> = plan
            .tools
            .iter()
            .map(|t| t.definition.name.as_str())
            .collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(plan.tools[0].status, ToolStatus::Disabled);
        assert_eq!(plan.diff.removed, ["b"]);
        assert_eq!(plan.diff.added, vec![def("c")]);
        assert!(plan.diff.modified.is_empty(), "only its status changed");
        assert_eq!(
            plan.diff.status_changed,
            [StatusChange {
                name: "a".into(),
                status: ToolStatus::Disabled
            }]
        );
        assert_eq!(plan.diff.changed_names(), ["a"]);
        let errors: Vec<_> = plan
            .failed
            .iter()
            .map(|f| (f.tool_name.as_str(), f.error.as_str()))
            .collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "zz" && e.starts_with("remove:")));
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "ghost" && e.starts_with("modify:")));
        assert!(errors
            .iter()
            .any(|(n, e)| *n == "a" && e.starts_with("add:")));
        let removed_only = ToolDiff {
            removed: vec!["b".into()],
            ..ToolDiff::default()
        };
        assert_eq!(update_kind(&removed_only, false), "tools-removed");
    }

    #[test]
    fn a_watcher_rebuilds_the_tools_from_an_update_and_what_it_had() {
        let first = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok).unwrap();
        let mut had = first.tools.clone();
        had[1].usage_count = 4;
        let changed = ToolDefinition {
            description: "New.".into(),
            ..def("b")
        };
        let second =
            plan_registration(&had, &[changed.clone(), def("c")], 2, LIMITS, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&second.diff, true, 2, second.tools.len());
        assert_eq!(update.apply_to(&had), second.tools);
        let patch = Patch {
            modify: vec![ToolChange {
                name: "c".into(),
                description: None,
                parameters: None,
                status: Some(ToolStatus::Disabled),
            }],
            remove: vec!["b".into()],
            ..Patch::default()
        };
        let third = plan_patch(&second.tools, &patch, 3, LIMITS, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&third.diff, false, 3, third.tools.len());
        assert_eq!(update.apply_to(&second.tools), third.tools);
        assert_eq!(update.kind, "tools-updated");
        assert!(update.added.is_empty() && update.modified.is_empty());
        assert_eq!(update.tool_count, 1);
    }

    #[test]
    fn an_update_carries_the_change_not_the_whole_set() {
        let many: Vec<_> = (0..50).map(|i| def(&format!("t{i}"))).collect();
        let limits = Limits {
            max_tools: 100,
            ..LIMITS
        };
        let first = plan_registration(&[], &many, 1, limits, &none, &ok).unwrap();
        let patch = Patch {
            add: vec![def("extra")],
            ..Patch::default()
        };
        let plan = plan_patch(&first.tools, &patch, 2, limits, &none, &ok).unwrap();
        let update = AvailabilityUpdate::of(&plan.diff, false, 2, plan.tools.len());
        let text = serde_json::to_string(&update).unwrap();
        assert!(!text.contains("\"t7\""), "{text}");
        assert!(text.len() < tools_bytes(&plan.tools[..2]), "{text}");
        assert_eq!(update.tool_count, 51);
    }

    #[test]
    fn the_byte_budget_counts_every_tool_as_sent_and_refuses_whole_requests() {
        let tools = plan_registration(&[], &[def("a"), def("b")], 1, LIMITS, &none, &ok)
            .unwrap()
            .tools;
        let mut widest = tools.clone();
        for t in &mut widest {
            t.usage_count = u64::MAX;
        }
        assert_eq!(
            tools_bytes(&tools),
            serde_json::to_string(&widest).unwrap().len()
        );
        assert_eq!(tools_bytes(&[]), 2);
        let tight = Limits {
            max_tools: 10,
            max_bytes: tools_bytes(&tools),
        };
        assert!(plan_registration(&[], &[def("a"), def("b")], 1, tight, &none, &ok).is_ok());
        let e = plan_registration(&[], &[def("a"), def("b"), def("c")], 1, tight, &none, &ok)
            .unwrap_err();
        assert!(matches!(e, OverLimit::Bytes { would_take, max } if would_take > max));
        let add = Patch {
            add: vec![def("c")],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &add, 2, tight, &none, &ok).is_err());
        // A set already over a (lowered) budget may still shrink.
        let lower = Limits {
            max_bytes: 10,
            ..tight
        };
        let remove = Patch {
            remove: vec!["b".into()],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &remove, 2, lower, &none, &ok).is_ok());
        let grow = Patch {
            modify: vec![ToolChange {
                name: "a".into(),
                description: Some("A much longer description than before.".into()),
                parameters: None,
                status: None,
            }],
            ..Patch::default()
        };
        assert!(plan_patch(&tools, &grow, 2, lower, &none, &ok).is_err());
    }

    #[test]
    fn the_union_adds_only_active_plugin_tools_after_the_base() {
        let mut tools = plan_registration(
            &[],
            &[def("x"), def("y"), def("hangUp")],
            1,
            LIMITS,
            &none,
            &ok,
        )
        .unwrap()
        .tools;
        tools[1].status = ToolStatus::Disabled;
        let set = PluginSet {
            plugin_type: PluginType::Codap,
            plugin_version: "1".into(),
            capabilities: vec![],
            environment: Environment::default(),
            constraints: None,
            tools,
            updated_at: 1,
        };
        let base = vec!["hangUp".to_owned(), "a".to_owned()];
        assert_eq!(union(base.clone(), Some(&set)), ["hangUp", "a", "x"]);
        assert_eq!(union(base.clone(), None), base);
    }

    proptest! {
        #[test]
        fn the_diff_of_two_registrations_accounts_for_every_name(
            a in proptest::collection::btree_set("[a-e]", 0..5),
            b in proptest::collection::btree_set("[a-e]", 0..5),
        ) {
            let limits = Limits { max_tools: 10, max_bytes: 1 << 20 };
            let first: Vec<_> = a.iter().map(|n| def(n)).collect();
            let second: Vec<_> = b.iter().map(|n| def(n)).collect();
            let old = plan_registration(&[], &first, 1, limits, &none, &ok).unwrap().tools;
            let plan = plan_registration(&old, &second, 2, limits, &none, &ok).unwrap();
            let added: BTreeSet<_> = plan.diff.added.iter().map(|d| d.name.clone()).collect();
            let removed: BTreeSet<_> = plan.diff.removed.iter().cloned().collect();
            prop_assert_eq!(added, b.difference(&a).cloned().collect::<BTreeSet<_>>());
            prop_assert_eq!(removed, a.difference(&b).cloned().collect::<BTreeSet<_>>());
            prop_assert!(plan.diff.modified.is_empty());
            prop_assert_eq!(plan.tools.len(), b.len());
        }
    }
}
