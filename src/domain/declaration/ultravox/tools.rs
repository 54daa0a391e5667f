//! The `selectedTools` of a call: each tool an HTTP tool Ultravox calls on
//! Switchboard (or a client tool, or an Ultravox built-in), with the
//! session's credential as a header parameter filled in at the last moment,
//! and the body such a call carries.

use super::parameters::{to_ultravox, UltravoxParameter, BODY};
use crate::domain::declaration::FunctionDeclaration;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Borrow;

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
pub(super) fn credential_parameter(token: &str) -> Value {
    json!({"name": CREDENTIAL_HEADER, "location": HEADER, "value": format!("Bearer {token}")})
}

/// A tool's dynamic parameters, all sent in the body: Switchboard reads a
/// call's arguments from the JSON body only, so a parameter kept from an
/// imported tool's query or header is moved there.
pub(super) fn body_parameters(schema: &Value) -> Vec<UltravoxParameter> {
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
