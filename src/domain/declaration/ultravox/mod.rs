//! Ultravox's shapes: its parameter list form of a tool's arguments, the
//! `selectedTools` of a call or stage, the stage-change answer that
//! switches the agent mid-call, and the body of a create-call request.
//!
//! A tool in an Ultravox call is run by one of three ([`Runner`]):
//! Ultravox itself (a built-in, `{"toolName"}`), the page the call runs in
//! (a client tool, `"client": {}`), or Switchboard, which Ultravox then
//! calls over HTTP (an HTTP tool whose `http.baseUrlPattern` is
//! Switchboard's, [`tool_path`], with the session's credential as a static
//! header parameter). Shapes as documented at
//! <https://docs.ultravox.ai/tools/custom/http-vs-client-tools>,
//! <https://docs.ultravox.ai/tools/custom/parameters> and
//! <https://docs.ultravox.ai/agents/call-stages>.
//!
//! Ultravox describes arguments as a list
//! `[{"name","location":"PARAMETER_LOCATION_BODY","schema","required"}]`
//! where the other providers take one JSON Schema object. Body parameters
//! convert both ways without loss; parameters in other locations (query,
//! header, path) have no JSON Schema equivalent and are kept under
//! [`OTHER_LOCATIONS_KEY`] so they round-trip.

mod parameters;
mod stages;
mod tools;

pub use parameters::*;
pub use stages::*;
pub use tools::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::declaration::FunctionDeclaration;
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    #[test]
    fn body_parameters_convert_both_ways_and_other_locations_are_kept() {
        let params = vec![
            UltravoxParameter {
                name: "text".into(),
                location: BODY.into(),
                schema: json!({"type": "string"}),
                required: true,
            },
            UltravoxParameter {
                name: "X-Trace".into(),
                location: "PARAMETER_LOCATION_HEADER".into(),
                schema: json!({"type": "string"}),
                required: false,
            },
        ];
        let schema = from_ultravox(&params);
        assert_eq!(schema["properties"]["text"], json!({"type": "string"}));
        assert_eq!(schema["required"], json!(["text"]));
        assert_eq!(
            schema[OTHER_LOCATIONS_KEY][0]["location"],
            "PARAMETER_LOCATION_HEADER"
        );
        assert_eq!(to_ultravox(&schema), params);
    }

    #[test]
    fn a_builtin_is_selected_by_name_and_others_declared() {
        let d = FunctionDeclaration {
            name: "createTodo".into(),
            description: "Adds a todo.".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        };
        assert_eq!(selected_tool(&d, true), json!({"toolName": "createTodo"}));
        let t = selected_tool(&d, false);
        assert_eq!(t["temporaryTool"]["modelToolName"], "createTodo");
        assert_eq!(t["temporaryTool"]["client"], json!({}));
        assert_eq!(
            t["temporaryTool"]["dynamicParameters"],
            json!([{"name": "text", "location": BODY, "schema": {"type": "string"}, "required": true}])
        );
    }

    #[test]
    fn a_prepared_stage_answers_exactly_as_a_fresh_one() {
        let stage = Stage {
            system_prompt: "You are \"Oliver\".\nBe brief.".into(),
            voice: "Mark".into(),
            selected_tools: vec![
                json!({"toolName": "hangUp"}),
                json!({"temporaryTool": {"modelToolName": "x"}}),
            ],
            tools: Vec::new(),
        };
        let text = "I'm now switching you to \"Oliver\"...";
        let prepared = PreparedStage::new(stage.clone()).change(text);
        let fresh = stage_change(&stage, text);
        assert_eq!(prepared["responseType"], fresh["responseType"]);
        let a: Value = serde_json::from_str(prepared["result"].as_str().unwrap()).unwrap();
        let b: Value = serde_json::from_str(fresh["result"].as_str().unwrap()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn a_stage_change_carries_the_stage_as_a_json_string() {
        let stage = Stage {
            system_prompt: "You are Oliver.".into(),
            voice: "Mark".into(),
            selected_tools: vec![json!({"toolName": "hangUp"})],
            tools: Vec::new(),
        };
        let answer = stage_change(&stage, "I'm now switching you to Oliver...");
        assert_eq!(answer["responseType"], "new-stage");
        let inner: Value = serde_json::from_str(answer["result"].as_str().unwrap()).unwrap();
        assert_eq!(
            inner["toolResultText"],
            "I'm now switching you to Oliver..."
        );
        assert_eq!(inner["selectedTools"][0]["toolName"], "hangUp");
        assert_eq!(inner["voice"], "Mark");
    }

    fn todo(name: &str) -> FunctionDeclaration {
        FunctionDeclaration {
            name: name.into(),
            description: format!("Runs {name}."),
            parameters: json!({"type": "object", "properties": {"todoText": {"type": "string"}}, "required": ["todoText"]}),
        }
    }

    const TARGET: HttpTarget<'static> = HttpTarget {
        origin: "https://sb.example",
        session: "s1",
        token: "st_abc",
    };

    #[test]
    fn a_tool_switchboard_runs_is_an_http_tool_with_the_credential_as_a_header() {
        let t = selected_tool_for(
            &todo("createTodo"),
            Runner::Switchboard { builtin: false },
            Some(&TARGET),
        );
        assert_eq!(
            t,
            json!({"temporaryTool": {
                "modelToolName": "createTodo",
                "description": "Runs createTodo.",
                "dynamicParameters": [{"name": "todoText", "location": BODY, "schema": {"type": "string"}, "required": true}],
                "staticParameters": [{"name": "Authorization", "location": "PARAMETER_LOCATION_HEADER", "value": "Bearer st_abc"}],
                "http": {"baseUrlPattern": "https://sb.example/api/sessions/s1/ultravox/tools/createTodo", "httpMethod": "POST"},
            }})
        );
        // hangUp, which Switchboard must see, is an HTTP tool too.
        let hang_up = selected_tool_for(&todo("hangUp"), Runner::server(true, true), Some(&TARGET));
        assert!(hang_up["temporaryTool"]["http"].is_object());
    }

    #[test]
    fn built_ins_stay_by_name_and_client_tools_stay_client_tools() {
        let d = todo("x");
        assert_eq!(
            selected_tool_for(&d, Runner::Ultravox, Some(&TARGET)),
            json!({"toolName": "x"})
        );
        let client = selected_tool_for(&d, Runner::Client, Some(&TARGET));
        assert_eq!(client["temporaryTool"]["client"], json!({}));
        assert!(client["temporaryTool"].get("http").is_none());
        // Without a target, as before HTTP tools.
        assert_eq!(
            selected_tool_for(&d, Runner::server(true, true), None),
            json!({"toolName": "x"})
        );
        assert_eq!(
            selected_tool_for(&d, Runner::Switchboard { builtin: false }, None),
            selected_tool(&d, false)
        );
    }

    #[test]
    fn parameters_kept_from_other_locations_move_to_the_body_of_an_http_tool() {
        let mut d = todo("x");
        d.parameters[OTHER_LOCATIONS_KEY] = json!([{"name": "q", "location": "PARAMETER_LOCATION_QUERY", "schema": {"type": "string"}, "required": false}]);
        let t = selected_tool_for(&d, Runner::Switchboard { builtin: false }, Some(&TARGET));
        let locations: Vec<&str> = t["temporaryTool"]["dynamicParameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["location"].as_str().unwrap())
            .collect();
        assert_eq!(locations, [BODY, BODY]);
    }

    fn mixed_stage() -> Stage {
        Stage::new(
            "You are \"Oliver\".".into(),
            "Mark".into(),
            vec![
                StageTool {
                    declaration: todo("hangUp"),
                    runner: Runner::server(true, true),
                },
                StageTool {
                    declaration: todo("queryCorpus"),
                    runner: Runner::Ultravox,
                },
                StageTool {
                    declaration: todo("showCard"),
                    runner: Runner::Client,
                },
                StageTool {
                    declaration: todo("createTodo"),
                    runner: Runner::Switchboard { builtin: false },
                },
            ],
        )
    }

    #[test]
    fn a_prepared_http_stage_is_exactly_the_stage_rendered_for_the_session() {
        let stage = mixed_stage();
        let body: Value = serde_json::from_str(
            &PreparedStage::new(stage.clone()).body_for(&TARGET, "Hi \"there\""),
        )
        .unwrap();
        assert_eq!(
            body,
            json!({
                "systemPrompt": stage.system_prompt,
                "voice": "Mark",
                "selectedTools": stage.selected_tools_for(Some(&TARGET)),
                "toolResultText": "Hi \"there\"",
            })
        );
        assert_eq!(body["selectedTools"][1], json!({"toolName": "queryCorpus"}));
        // Without a target the stage is the one every session got before.
        assert_eq!(stage.selected_tools_for(None), stage.selected_tools);
    }

    #[test]
    fn the_credential_is_filled_in_only_where_the_placeholder_stands() {
        let placeholder = HttpTarget {
            token: CREDENTIAL_PLACEHOLDER,
            ..TARGET
        };
        let mut stage = mixed_stage();
        stage.tools[3].declaration.description = format!("Never Bearer {CREDENTIAL_PLACEHOLDER}");
        let mut answer = PreparedStage::new(Stage::new(
            stage.system_prompt.clone(),
            stage.voice.clone(),
            stage.tools.clone(),
        ))
        .change_for(&placeholder, "ok");
        with_credential(&mut answer, "st_real");
        let inner: Value = serde_json::from_str(answer["result"].as_str().unwrap()).unwrap();
        let create = &inner["selectedTools"][3]["temporaryTool"];
        assert_eq!(create["staticParameters"][0]["value"], "Bearer st_real");
        assert_eq!(
            create["description"],
            format!("Never Bearer {CREDENTIAL_PLACEHOLDER}")
        );
        let mut other = json!({"ok": CREDENTIAL_PLACEHOLDER});
        with_credential(&mut other, "st_real");
        assert_eq!(other, json!({"ok": CREDENTIAL_PLACEHOLDER}));
    }

    #[test]
    fn a_call_body_has_the_prompt_voice_settings_tools_and_metadata() {
        let mut settings = Map::new();
        settings.insert("model".into(), json!("fixie-ai/ultravox"));
        settings.insert("temperature".into(), json!(0.4));
        let body = call_body(
            "Be kind.",
            Some("Mark"),
            settings,
            vec![json!({"toolName": "hangUp"})],
            &[("sessionId", "s1")],
        );
        assert_eq!(
            body,
            json!({
                "systemPrompt": "Be kind.", "voice": "Mark", "model": "fixie-ai/ultravox",
                "temperature": 0.4, "selectedTools": [{"toolName": "hangUp"}],
                "metadata": {"sessionId": "s1"},
            })
        );
        assert!(call_body("x", Some(""), Map::new(), vec![], &[])
            .get("voice")
            .is_none());
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": "integer", "minimum": 1})),
            "[a-z ]{0,20}".prop_map(|d| json!({"type": "boolean", "description": d})),
            prop::collection::vec("[a-z]{1,5}", 1..4)
                .prop_map(|e| json!({"type": "string", "enum": e})),
        ]
    }

    proptest! {
        /// JSON Schema → Ultravox → JSON Schema is the identity for an
        /// object schema of body parameters.
        #[test]
        fn json_schema_to_ultravox_and_back_is_identity(
            props in prop::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,12}", leaf(), 0..8),
            required_mask in prop::collection::vec(any::<bool>(), 8),
        ) {
            let required: Vec<Value> = props
                .keys()
                .zip(&required_mask)
                .filter(|(_, r)| **r)
                .map(|(k, _)| Value::String(k.clone()))
                .collect();
            let mut schema = json!({"type": "object", "properties": props});
            if !required.is_empty() {
                schema["required"] = Value::Array(required);
            }
            prop_assert_eq!(from_ultravox(&to_ultravox(&schema)), schema);
        }
    }
}
