//! A workflow's definition beyond its id, name and bound tools: the start
//! trigger (what starts it, with filter rules checked against the trigger
//! type's JSON Schema) and its ordered steps (`custom_llm` steps with a
//! system prompt, `custom_agent` steps with a prompt and tools).
//!
//! Words: "start trigger" and "workflow step" are named so because
//! `lesson::trigger` (when a tutor tool fires) and
//! `WorkflowState::current_step` (an outcome label) already exist.
//!
//! Pure: every edit the settings page and the workflow-editing agent make is
//! an [`Edit`] applied by [`apply`], which refuses with a message written
//! for a person and a model alike ("step type `custom_llm` has no tools;
//! use a `custom_agent` step"). Checking filter rules against a schema and
//! making new uuids are injected ([`EditContext`]).

mod definition;
mod edit;
mod error;
mod step;
mod trigger;
pub use definition::*;
pub use edit::*;
pub use error::*;
pub use step::*;
pub use trigger::*;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn run(def: &Definition, edit: Edit) -> Result<Definition, EditError> {
        run_as(def, edit, false)
    }

    fn run_as(def: &Definition, edit: Edit, by_key: bool) -> Result<Definition, EditError> {
        let mut n = 0;
        let mut new_uuid = move || {
            n += 1;
            format!("u{n}")
        };
        let mut ctx = EditContext {
            is_tool: &|t| t == "perform_idv_check" || t == "check_balance",
            check_filter: &|_, rules| {
                if rules.get("bad").is_some() {
                    Err("`bad` is not allowed".into())
                } else {
                    Ok(())
                }
            },
            new_uuid: &mut new_uuid,
            by_key,
        };
        apply(def, &edit, &mut ctx)
    }

    fn add(def: &Definition, kind: &str, name: &str) -> Definition {
        let mut next = run(
            def,
            Edit::AddStep {
                step_type: kind.into(),
                name: name.into(),
            },
        )
        .unwrap();
        let last = next.steps.len();
        next.steps[last - 1].uuid = format!("s{last}");
        next
    }

    #[test]
    fn a_keys_step_tools_are_in_force_only_while_bound_and_an_admins_always() {
        let def = add(&Definition::default(), "custom_agent", "Verify");
        let set = |def: &Definition, tools: &[&str], by_key: bool| {
            run_as(
                def,
                Edit::UpdateStepTools {
                    step_uuid: "s1".into(),
                    enabled_tools: tools.iter().map(|t| t.to_string()).collect(),
                },
                by_key,
            )
            .unwrap()
        };
        let names = |def: &Definition, bound: &[&str]| -> Vec<String> {
            def.step_of("s1")
                .unwrap()
                .tools_in_force(|t| bound.contains(&t))
                .into_iter()
                .map(ToString::to_string)
                .collect()
        };
        let by_key = set(&def, &["perform_idv_check"], true);
        assert_eq!(
            names(&by_key, &["perform_idv_check"]),
            ["perform_idv_check"]
        );
        assert!(
            names(&by_key, &[]).is_empty(),
            "unbound: the key's grant lapses"
        );
        assert!(by_key
            .step_of("s1")
            .unwrap()
            .lapsed("perform_idv_check", |_| false));
        // The admin adds one: theirs is in force whatever the bindings; the
        // key's keeps its provenance.
        let both = set(&by_key, &["perform_idv_check", "check_balance"], false);
        assert_eq!(names(&both, &[]), ["check_balance"]);
        // A key re-saving the list does not take over the admin's grant.
        let again = set(&both, &["check_balance", "perform_idv_check"], true);
        assert_eq!(names(&again, &[]), ["check_balance"]);
        // Definitions saved before provenance was kept: every tool in force.
        let old: Definition = serde_json::from_value(json!({"steps": [{"uuid": "s1", "stepType": "custom_agent", "name": "V", "tools": ["check_balance"]}]})).unwrap();
        assert_eq!(names(&old, &[]), ["check_balance"]);
    }

    #[test]
    fn a_whole_definition_from_a_file_passes_the_editors_rules_by_its_place_in_the_file() {
        let built = add(
            &add(&Definition::default(), "custom_llm", "Greet"),
            "custom_agent",
            "Verify",
        );
        let built = run_as(
            &built,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into()],
            },
            true,
        )
        .unwrap();
        let replace = |file: Value, by_key: bool| {
            let definition: Definition = serde_json::from_value(file).unwrap();
            run_as(&built, Edit::ReplaceDefinition { definition }, by_key)
        };
        // Its own export comes back as it is, provenance and all.
        let same = replace(serde_json::to_value(&built).unwrap(), false).unwrap();
        assert_eq!(same, built);
        // Another file: checked step by step, named by place.
        let file = |steps: Value| json!({"steps": steps});
        let err = replace(
            file(json!([
                {"uuid": "a", "stepType": "custom_llm", "name": "Greet"},
                {"uuid": "b", "stepType": "custom_agent", "name": " "}
            ])),
            false,
        )
        .unwrap_err();
        assert_eq!(err.field, "definition.steps[1].name");
        let err = replace(
            file(json!([{"uuid": "a", "stepType": "custom_llm", "name": "G", "tools": ["check_balance"]}])),
            false,
        )
        .unwrap_err();
        assert_eq!(err.field, "definition.steps[0].step_uuid");
        let err = replace(
            file(json!([
                {"uuid": "a", "stepType": "custom_llm", "name": "G"},
                {"uuid": "a", "stepType": "custom_llm", "name": "H"}
            ])),
            false,
        )
        .unwrap_err();
        assert_eq!(err.field, "definition.steps[1].uuid");
        let err = replace(
            file(json!([{"uuid": "a", "stepType": "custom_agent", "name": "G", "tools": ["fly"]}])),
            false,
        )
        .unwrap_err();
        assert_eq!(err.field, "definition.steps[0].enabled_tools[0]");
        let err = replace(json!({"trigger": {"uuid": "t", "triggerTypeId": "manual", "filterRules": {"bad": 1}}, "steps": []}), false).unwrap_err();
        assert_eq!(err.field, "definition.trigger.filter_rules");
        let err = replace(
            json!({"trigger": {"uuid": "", "triggerTypeId": "manual", "filterRules": {}}, "steps": []}),
            false,
        )
        .unwrap_err();
        assert_eq!(err.field, "definition.trigger.uuid");
        // A key's import: the tools it gives are the key's, whatever the
        // file says.
        let by_key = replace(
            file(json!([{"uuid": "s2", "stepType": "custom_agent", "name": "Verify", "tools": ["perform_idv_check", "check_balance"], "boundOnly": []}])),
            true,
        )
        .unwrap();
        assert_eq!(
            by_key.steps[0]
                .bound_only
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["perform_idv_check", "check_balance"],
            "a file cannot say a key's tools are an admin's"
        );
        let edit = Edit::ReplaceDefinition { definition: by_key };
        assert_eq!(
            edit.recorded(),
            json!({"edit": "replace_definition", "steps": 1, "trigger": null})
        );
    }

    #[test]
    fn an_edit_with_a_key_it_does_not_take_is_refused_naming_the_key() {
        let read = |v| serde_json::from_value::<Edit>(v);
        let ok =
            read(json!({"edit": "update_system_prompt", "step_uuid": "s1", "system_prompt": "Hi"}));
        assert_eq!(
            ok.unwrap(),
            Edit::UpdateSystemPrompt {
                step_uuid: "s1".into(),
                system_prompt: "Hi".into()
            }
        );
        let typo = read(
            json!({"edit": "update_system_prompt", "step_uuid": "s1", "system_prompt": "Hi", "systemPrompt": "Hi"}),
        );
        assert!(
            typo.unwrap_err()
                .to_string()
                .contains("unknown field `systemPrompt`"),
            "the misspelt key is named"
        );
    }

    #[test]
    fn steps_are_added_reordered_prompted_and_tooled() {
        let def = add(
            &add(&Definition::default(), "custom_llm", "Greet"),
            "custom_agent",
            "Verify identity",
        );
        assert_eq!(def.steps.len(), 2);
        let def = run(
            &def,
            Edit::ReorderSteps {
                ordered_step_uuids: vec!["s2".into(), "s1".into()],
            },
        )
        .unwrap();
        assert_eq!(def.steps[0].name, "Verify identity");
        let def = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into()],
            },
        )
        .unwrap();
        assert_eq!(def.step_tools("s2")[0].as_str(), "perform_idv_check");
        let def = run(
            &def,
            Edit::UpdateSystemPrompt {
                step_uuid: "s1".into(),
                system_prompt: "Be brief.".into(),
            },
        )
        .unwrap();
        assert_eq!(def.step("s1").unwrap().system_prompt, "Be brief.");
        let def = run(
            &def,
            Edit::RemoveStep {
                step_uuid: "s1".into(),
            },
        )
        .unwrap();
        assert_eq!(def.steps.len(), 1);
    }

    #[test]
    fn a_steps_tools_outside_the_bindings_are_named_with_its_position() {
        let def = add(
            &add(&Definition::default(), "custom_llm", "Greet"),
            "custom_agent",
            "Balance",
        );
        let def = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into(), "check_balance".into()],
            },
        )
        .unwrap();
        let allowed = vec!["get_server_time".to_owned(), "perform_idv_check".to_owned()];
        assert_eq!(
            def.tools_outside("s2", &allowed),
            Some((1, vec!["check_balance".to_owned()]))
        );
        assert_eq!(def.tools_outside("s1", &allowed), None, "no tools");
        assert_eq!(def.tools_outside("nope", &allowed), None);
        let all = vec!["perform_idv_check".to_owned(), "check_balance".to_owned()];
        assert_eq!(def.tools_outside("s2", &all), None);
    }

    #[test]
    fn refusals_say_what_to_do_instead() {
        let def = add(&Definition::default(), "custom_llm", "Greet");
        let e = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s1".into(),
                enabled_tools: vec![],
            },
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "step type `custom_llm` has no tools; use a `custom_agent` step"
        );
        let e = run(
            &def,
            Edit::AddStep {
                step_type: "robot".into(),
                name: "x".into(),
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (
                "step_type",
                "there is no step type `robot`; step types: custom_llm, custom_agent"
            )
        );
        let e = run(
            &def,
            Edit::RemoveStep {
                step_uuid: "nope".into(),
            },
        )
        .unwrap_err();
        assert!(e.message.contains("steps: s1 (Greet)"), "{}", e.message);
        let e = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: "t".into(),
                filter_rules: json!({}),
            },
        )
        .unwrap_err();
        assert!(e.message.contains("call set_trigger first"));
        let def = add(&def, "custom_agent", "Agent");
        let e = run(
            &def,
            Edit::UpdateStepTools {
                step_uuid: "s2".into(),
                enabled_tools: vec!["perform_idv_check".into(), "launch".into()],
            },
        )
        .unwrap_err();
        assert_eq!(e.field, "enabled_tools[1]");
        assert!(e.message.contains("list_available_mcp_tools"));
        let e = run(
            &def,
            Edit::AddStep {
                step_type: "custom_llm".into(),
                name: " ".into(),
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("name", "is required")
        );
    }

    #[test]
    fn a_trigger_is_set_then_its_rules_checked_against_its_type() {
        let def = run(
            &Definition::default(),
            Edit::SetTrigger {
                trigger_type_id: "inbound_call".into(),
            },
        )
        .unwrap();
        let uuid = def.trigger.as_ref().unwrap().uuid.clone();
        let ok = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: uuid.clone(),
                filter_rules: json!({"calledNumbers": ["+441234567890"]}),
            },
        )
        .unwrap();
        assert_eq!(
            ok.trigger.unwrap().filter_rules["calledNumbers"][0],
            "+441234567890"
        );
        let e = run(
            &def,
            Edit::UpdateTriggerSettings {
                trigger_uuid: uuid,
                filter_rules: json!({"bad": 1}),
            },
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "do not fit trigger type `inbound_call`: `bad` is not allowed"
        );
        let e = run(
            &def,
            Edit::SetTrigger {
                trigger_type_id: "fax".into(),
            },
        )
        .unwrap_err();
        assert!(e
            .message
            .ends_with("manual, inbound_call, chat_message, schedule, webhook"));
    }

    #[test]
    fn reordering_needs_every_step_once() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let current = ids(&["a", "b", "c"]);
        assert!(check_permutation(&current, &ids(&["c", "a", "b"])).is_ok());
        assert_eq!(
            check_permutation(&current, &ids(&["a", "b"])).unwrap_err(),
            "every step must be listed once; missing: c"
        );
        assert_eq!(
            check_permutation(&current, &ids(&["a", "a", "b", "c"])).unwrap_err(),
            "`a` is listed twice"
        );
        assert_eq!(
            check_permutation(&current, &ids(&["a", "b", "z"])).unwrap_err(),
            "`z` is not a step of this workflow"
        );
    }

    proptest! {
        #[test]
        fn a_permutation_is_accepted_and_anything_else_refused(
            n in 0usize..8,
            seed in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let current: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let mut shuffled = current.clone();
            for (i, b) in seed.iter().enumerate() {
                if n > 1 { shuffled.swap(i % n, *b as usize % n); }
            }
            prop_assert!(check_permutation(&current, &shuffled).is_ok());
            if n > 0 {
                let mut short = shuffled.clone();
                short.pop();
                prop_assert!(check_permutation(&current, &short).is_err());
                let mut doubled = shuffled.clone();
                doubled.push(shuffled[0].clone());
                prop_assert!(check_permutation(&current, &doubled).is_err());
            }
        }
    }
}
