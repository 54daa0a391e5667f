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

use crate::domain::declaration::FunctionDeclaration;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Borrow;

/// Where a body parameter goes.
pub const BODY: &str = "PARAMETER_LOCATION_BODY";
/// The JSON Schema key that keeps non-body Ultravox parameters.
pub const OTHER_LOCATIONS_KEY: &str = "x-ultravox-parameters";

/// One Ultravox dynamic parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UltravoxParameter {
    /// Argument name.
    pub name: String,
    /// `PARAMETER_LOCATION_BODY`, `…_QUERY`, `…_HEADER`, `…_PATH`.
    pub location: String,
    /// The argument's own JSON Schema.
    pub schema: Value,
    /// Whether the model must pass it.
    #[serde(default)]
    pub required: bool,
}

/// A JSON Schema object's properties as Ultravox parameters (body), then
/// any kept non-body parameters.
pub fn to_ultravox(schema: &Value) -> Vec<UltravoxParameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<UltravoxParameter> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, schema)| UltravoxParameter {
                    name: name.clone(),
                    location: BODY.to_owned(),
                    schema: schema.clone(),
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(others) = schema.get(OTHER_LOCATIONS_KEY) {
        out.extend(
            serde_json::from_value::<Vec<UltravoxParameter>>(others.clone()).unwrap_or_default(),
        );
    }
    out
}

/// Ultravox parameters as a JSON Schema object: body parameters become
/// `properties` (and `required`); the others are kept under
/// [`OTHER_LOCATIONS_KEY`].
pub fn from_ultravox(parameters: &[UltravoxParameter]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut others = Vec::new();
    for p in parameters {
        if p.location == BODY {
            properties.insert(p.name.clone(), p.schema.clone());
            if p.required {
                required.push(Value::String(p.name.clone()));
            }
        } else {
            others.push(serde_json::to_value(p).unwrap_or(Value::Null));
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    if !others.is_empty() {
        schema[OTHER_LOCATIONS_KEY] = Value::Array(others);
    }
    schema
}

/// The header an HTTP tool's answer sets to change the call
/// (`new-stage`, `hang-up`).
pub const RESPONSE_TYPE_HEADER: &str = "X-Ultravox-Response-Type";
/// [`RESPONSE_TYPE_HEADER`]'s value for a new stage (the stage is the
/// body).
pub const NEW_STAGE: &str = "new-stage";
/// [`RESPONSE_TYPE_HEADER`]'s value that ends the call.
pub const HANG_UP: &str = "hang-up";
/// Where a static parameter carrying the session's credential goes.
pub const HEADER: &str = "PARAMETER_LOCATION_HEADER";
/// The header the credential travels in (`Bearer st_…`), so Switchboard
/// lets Ultravox's calls in through the same door as any session call.
pub const CREDENTIAL_HEADER: &str = "Authorization";
/// What stands for the session token in a stage kept in a call's record
/// (watchers read records, and a plugin token may watch): the door that
/// answers fills the real one in ([`with_credential`]).
pub const CREDENTIAL_PLACEHOLDER: &str = "{sessionToken}";

/// Who runs a tool in an Ultravox call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Runner {
    /// Ultravox itself: selected by name (`{"toolName"}`).
    Ultravox,
    /// The page the call runs in: a client tool (`"client": {}`).
    Client,
    /// Switchboard: an HTTP tool pointing at it when the call has a
    /// [`HttpTarget`]; without one, as before HTTP tools (a built-in by
    /// name, any other as a client tool the backend relays).
    Switchboard {
        /// Whether Ultravox has it built in too (`hangUp`).
        builtin: bool,
    },
}

impl Runner {
    /// A tool no page runs: an Ultravox built-in stays Ultravox's unless
    /// Switchboard `must_see` its calls; every other tool is Switchboard's.
    pub fn server(builtin: bool, must_see: bool) -> Self {
        if builtin && !must_see {
            Self::Ultravox
        } else {
            Self::Switchboard { builtin }
        }
    }
}

/// Where one session's HTTP tools are called: Switchboard's public origin
/// (never a request's `Host`: Ultravox calls from its own servers), the
/// session, and the credential sent as a static header parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpTarget<'a> {
    /// `https://sb.example`, without a trailing slash.
    pub origin: &'a str,
    /// The session's id.
    pub session: &'a str,
    /// The session token, or [`CREDENTIAL_PLACEHOLDER`].
    pub token: &'a str,
}

/// The path of session `session`'s tool `tool` as an HTTP tool (tool ids
/// are ASCII letters, digits, `_` and `-`, so they need no escaping).
pub fn tool_path(session: &str, tool: &str) -> String {
    format!("/api/sessions/{session}/ultravox/tools/{tool}")
}

/// One entry of `selectedTools`: Ultravox's own tool by name, or a
/// temporary tool declared in full (the client, i.e. the backend, runs it).
pub fn selected_tool(declaration: &FunctionDeclaration, ultravox_builtin: bool) -> Value {
    selected_tool_for(declaration, Runner::server(ultravox_builtin, false), None)
}

/// One entry of `selectedTools` for a tool run by `runner`, with `target`
/// when the call has one (see [`Runner::Switchboard`]).
pub fn selected_tool_for(
    declaration: &FunctionDeclaration,
    runner: Runner,
    target: Option<&HttpTarget<'_>>,
) -> Value {
    match (runner, target) {
        (Runner::Ultravox, _) | (Runner::Switchboard { builtin: true }, None) => {
            json!({"toolName": declaration.name})
        }
        (Runner::Client, _) | (Runner::Switchboard { builtin: false }, None) => {
            json!({"temporaryTool": {
                "modelToolName": declaration.name,
                "description": declaration.description,
                "dynamicParameters": to_ultravox(&declaration.parameters),
                "client": {},
            }})
        }
        (Runner::Switchboard { .. }, Some(target)) => json!({"temporaryTool": {
            "modelToolName": declaration.name,
            "description": declaration.description,
            "dynamicParameters": body_parameters(&declaration.parameters),
            "staticParameters": [credential_parameter(target.token)],
            "http": {
                "baseUrlPattern": format!("{}{}", target.origin, tool_path(target.session, &declaration.name)),
                "httpMethod": "POST",
            },
        }}),
    }
}

/// The static parameter that carries `token` to Switchboard.
fn credential_parameter(token: &str) -> Value {
    json!({"name": CREDENTIAL_HEADER, "location": HEADER, "value": format!("Bearer {token}")})
}

/// A tool's dynamic parameters, all sent in the body: Switchboard reads a
/// call's arguments from the JSON body only, so a parameter kept from an
/// imported tool's query or header is moved there.
fn body_parameters(schema: &Value) -> Vec<UltravoxParameter> {
    let mut parameters = to_ultravox(schema);
    for p in &mut parameters {
        p.location = BODY.to_owned();
    }
    parameters
}

/// `selectedTools` for `declarations`; `builtin` says which are Ultravox's own.
pub fn selected_tools<D: Borrow<FunctionDeclaration>>(
    declarations: &[D],
    builtin: impl Fn(&str) -> bool,
) -> Vec<Value> {
    declarations
        .iter()
        .map(Borrow::borrow)
        .map(|d: &FunctionDeclaration| selected_tool(d, builtin(&d.name)))
        .collect()
}

/// A tool of a stage: what the model is told and who runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTool {
    /// The declaration.
    pub declaration: FunctionDeclaration,
    /// Who runs it.
    pub runner: Runner,
}

/// What an agent's stage gets: its prompt, voice and tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    /// The rendered system prompt.
    pub system_prompt: String,
    /// The agent's voice.
    pub voice: String,
    /// Its tools, in Ultravox's shape without an [`HttpTarget`].
    pub selected_tools: Vec<Value>,
    /// Its tools and who runs each, to render them for a session.
    #[serde(default)]
    pub tools: Vec<StageTool>,
}

impl Stage {
    /// A stage of `tools`: `selected_tools` rendered without a target.
    pub fn new(system_prompt: String, voice: String, tools: Vec<StageTool>) -> Self {
        let selected_tools = tools
            .iter()
            .map(|t| selected_tool_for(&t.declaration, t.runner, None))
            .collect();
        Self {
            system_prompt,
            voice,
            selected_tools,
            tools,
        }
    }

    /// Its tools in Ultravox's shape for `target`'s session (the same as
    /// `selected_tools` without one).
    pub fn selected_tools_for(&self, target: Option<&HttpTarget<'_>>) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| selected_tool_for(&t.declaration, t.runner, target))
            .collect()
    }
}

/// One tool of a [`PreparedStage`], serialised once: fixed, or an HTTP
/// tool's JSON up to its static parameters (the session and credential
/// are filled in per answer).
#[derive(Debug, Clone, PartialEq)]
enum PreparedTool {
    /// The same for every session.
    Fixed(String),
    /// `{"temporaryTool":{"modelToolName":…,"description":…,"dynamicParameters":[…],`
    Http { head: String, name: String },
}

/// A stage with its JSON serialised once (when the rules are built), so
/// the answer to each `switchAgent` only escapes the words to say (and
/// for HTTP tools the session's URL and credential): the switch is on the
/// conversation's critical path.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedStage {
    /// The stage.
    pub stage: Stage,
    /// `{"systemPrompt":…,"voice":…,"selectedTools":[…],"toolResultText":`
    prefix: String,
    /// `{"systemPrompt":…,"voice":…,"selectedTools":[`
    head: String,
    /// The tools, for a session with an [`HttpTarget`].
    tools: Vec<PreparedTool>,
}

impl PreparedStage {
    /// Serialises `stage`'s parts.
    pub fn new(stage: Stage) -> Self {
        let head = format!(
            "{{\"systemPrompt\":{},\"voice\":{},\"selectedTools\":[",
            Value::String(stage.system_prompt.clone()),
            Value::String(stage.voice.clone()),
        );
        let prefix = format!(
            "{{\"systemPrompt\":{},\"voice\":{},\"selectedTools\":{},\"toolResultText\":",
            Value::String(stage.system_prompt.clone()),
            Value::String(stage.voice.clone()),
            Value::Array(stage.selected_tools.clone()),
        );
        let tools = stage.tools.iter().map(prepare_tool).collect();
        Self {
            stage,
            prefix,
            head,
            tools,
        }
    }

    /// The same answer as [`stage_change`], from the prepared parts.
    pub fn change(&self, tool_result_text: &str) -> Value {
        let mut result = String::with_capacity(self.prefix.len() + tool_result_text.len() + 8);
        result.push_str(&self.prefix);
        result.push_str(&serde_json::to_string(tool_result_text).unwrap_or_default());
        result.push('}');
        json!({"responseType": NEW_STAGE, "result": result})
    }

    /// [`change`](Self::change) with the tools Switchboard runs as HTTP
    /// tools of `target`'s session, so its calls after the switch still
    /// reach Switchboard.
    pub fn change_for(&self, target: &HttpTarget<'_>, tool_result_text: &str) -> Value {
        json!({"responseType": NEW_STAGE, "result": self.body_for(target, tool_result_text)})
    }

    /// The new stage itself, as an HTTP tool's answer body:
    /// `{"systemPrompt","voice","selectedTools","toolResultText"}`.
    pub fn body_for(&self, target: &HttpTarget<'_>, tool_result_text: &str) -> String {
        let mut out = String::with_capacity(self.prefix.len() + 256 * self.tools.len());
        out.push_str(&self.head);
        for (i, tool) in self.tools.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match tool {
                PreparedTool::Fixed(json) => out.push_str(json),
                PreparedTool::Http { head, name } => {
                    out.push_str(head);
                    out.push_str("\"staticParameters\":[");
                    out.push_str(&credential_parameter(target.token).to_string());
                    out.push_str("],\"http\":{\"baseUrlPattern\":");
                    let url = format!("{}{}", target.origin, tool_path(target.session, name));
                    out.push_str(&Value::String(url).to_string());
                    out.push_str(",\"httpMethod\":\"POST\"}}}");
                }
            }
        }
        out.push_str("],\"toolResultText\":");
        out.push_str(&serde_json::to_string(tool_result_text).unwrap_or_default());
        out.push('}');
        out
    }
}

/// A stage tool's prepared JSON: an HTTP tool's when Switchboard runs it,
/// else the one shape every session gets.
fn prepare_tool(tool: &StageTool) -> PreparedTool {
    let Runner::Switchboard { .. } = tool.runner else {
        return PreparedTool::Fixed(
            selected_tool_for(&tool.declaration, tool.runner, None).to_string(),
        );
    };
    let d = &tool.declaration;
    PreparedTool::Http {
        head: format!(
            "{{\"temporaryTool\":{{\"modelToolName\":{},\"description\":{},\"dynamicParameters\":{},",
            Value::String(d.name.clone()),
            Value::String(d.description.clone()),
            serde_json::to_string(&body_parameters(&d.parameters)).unwrap_or_default(),
        ),
        name: d.name.clone(),
    }
}

/// The answer to a `switchAgent` call in Ultravox's stage-change shape:
/// `{"responseType":"new-stage","result":"<JSON of the stage and what to
/// say>"}`.
pub fn stage_change(stage: &Stage, tool_result_text: &str) -> Value {
    let result = json!({
        "systemPrompt": stage.system_prompt,
        "voice": stage.voice,
        "toolResultText": tool_result_text,
        "selectedTools": stage.selected_tools,
    });
    json!({"responseType": NEW_STAGE, "result": result.to_string()})
}

/// The stage in a stage-change answer (`{"responseType":"new-stage",
/// "result":"<stage>"}`) with [`CREDENTIAL_PLACEHOLDER`] replaced by
/// `token` in its HTTP tools' static parameters; any other answer is
/// left as it is. For the door that answers the session's own backend
/// (or Ultravox): the record keeps the placeholder.
pub fn with_credential(answer: &mut Value, token: &str) {
    if answer.get("responseType").and_then(Value::as_str) != Some(NEW_STAGE) {
        return;
    }
    let Some(Value::String(text)) = answer.get_mut("result") else {
        return;
    };
    if !text.contains(CREDENTIAL_PLACEHOLDER) {
        return;
    }
    let Ok(mut stage) = serde_json::from_str::<Value>(text) else {
        return;
    };
    fill_credential(&mut stage, token);
    *text = stage.to_string();
}

/// Replaces [`CREDENTIAL_PLACEHOLDER`] by `token` in `stage`'s HTTP tools'
/// credential parameters (and nowhere else).
pub fn fill_credential(stage: &mut Value, token: &str) {
    let placeholder = format!("Bearer {CREDENTIAL_PLACEHOLDER}");
    let tools = stage
        .get_mut("selectedTools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten();
    for tool in tools {
        let params = tool
            .pointer_mut("/temporaryTool/staticParameters")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten();
        for p in params {
            if p.get("name").and_then(Value::as_str) == Some(CREDENTIAL_HEADER)
                && p.get("value").and_then(Value::as_str) == Some(placeholder.as_str())
            {
                p["value"] = Value::String(format!("Bearer {token}"));
            }
        }
    }
}

/// The body of Ultravox's create-call request (`POST
/// https://api.ultravox.ai/api/calls`): the prompt, the voice if any, the
/// call `settings` (`model`, `languageHint`, `temperature`, …, already in
/// Ultravox's names), `selectedTools` and `metadata` (string values, echoed
/// back on the call object, webhooks included).
pub fn call_body(
    system_prompt: &str,
    voice: Option<&str>,
    settings: Map<String, Value>,
    selected_tools: Vec<Value>,
    metadata: &[(&str, &str)],
) -> Value {
    let mut body = Map::new();
    body.insert(
        "systemPrompt".into(),
        Value::String(system_prompt.to_owned()),
    );
    if let Some(voice) = voice.filter(|v| !v.is_empty()) {
        body.insert("voice".into(), Value::String(voice.to_owned()));
    }
    body.extend(settings);
    body.insert("selectedTools".into(), Value::Array(selected_tools));
    body.insert(
        "metadata".into(),
        Value::Object(
            metadata
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
                .collect(),
        ),
    );
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
