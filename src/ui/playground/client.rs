//! The playground's link to its session: the JavaScript plugin client that
//! Switchboard serves (`/clients/switchboard.js`, `clients/js/`), bound
//! with wasm-bindgen, so the page joins, registers, answers relayed calls
//! and hears of tool changes exactly as any plugin page does. Browser only.

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(raw_module = "/clients/switchboard.js")]
extern "C" {
    /// The client's `Plugin`: one plugin of one session.
    #[derive(Debug, Clone)]
    pub type Plugin;

    #[wasm_bindgen(constructor)]
    fn new(init: &JsValue) -> Plugin;

    #[wasm_bindgen(catch, js_name = join)]
    async fn join_js(code: &str) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = registerTools)]
    async fn register_tools(this: &Plugin, registration: JsValue) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, js_name = onCall)]
    fn on_call_js(this: &Plugin, handler: &js_sys::Function) -> Plugin;

    #[wasm_bindgen(method, js_name = onToolsChanged)]
    fn on_tools_changed_js(this: &Plugin, handler: &js_sys::Function) -> Plugin;

    #[wasm_bindgen(method, js_name = onStatus)]
    fn on_status_js(this: &Plugin, handler: &js_sys::Function) -> Plugin;

    /// Stops listening.
    #[wasm_bindgen(method)]
    pub fn close(this: &Plugin);

    /// The session joined.
    #[wasm_bindgen(method, getter, js_name = sessionId)]
    pub fn session_id(this: &Plugin) -> String;
}

/// A JSON value as a JavaScript one.
fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// A JavaScript value as JSON (`null` for what JSON cannot hold).
fn from_js(value: &JsValue) -> Value {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// A thrown JavaScript value's words.
fn message(error: &JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "the request failed".into())
}

/// A field of a JavaScript object.
fn field(object: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// The plugin of a session whose plugin token the page holds (a session
/// the playground opened).
pub fn with_token(session_id: &str, plugin_token: &str) -> Plugin {
    let init = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&init, &"sessionId".into(), &session_id.into());
    let _ = js_sys::Reflect::set(&init, &"pluginToken".into(), &plugin_token.into());
    Plugin::new(&init)
}

/// Joins a session with a join code (`POST /api/plugins/join`).
pub async fn join(code: &str) -> Result<Plugin, String> {
    join_js(code)
        .await
        .map(JsCast::unchecked_into)
        .map_err(|e| message(&e))
}

/// Registers `registration` (a whole `register-tools` body).
pub async fn register(plugin: &Plugin, registration: &Value) -> Result<(), String> {
    plugin
        .register_tools(to_js(registration))
        .await
        .map(|_| ())
        .map_err(|e| message(&e))
}

/// Answers each relayed call with `run(name, arguments)`: `Ok` is sent as
/// its result, `Err` as its error. The handler lives as long as the page.
pub fn on_call(plugin: &Plugin, run: impl Fn(String, Value) -> Result<Value, String> + 'static) {
    let handler = Closure::<dyn Fn(JsValue) -> JsValue>::new(move |call: JsValue| {
        let name = field(&call, "name").as_string().unwrap_or_default();
        match run(name, from_js(&field(&call, "arguments"))) {
            Ok(result) => to_js(&result),
            Err(e) => js_sys::Promise::reject(&js_sys::Error::new(&e)).into(),
        }
    });
    plugin.on_call_js(handler.as_ref().unchecked_ref());
    handler.forget();
}

/// Calls `changed` with each `tool-availability-update` of the session.
pub fn on_tools_changed(plugin: &Plugin, changed: impl Fn(Value) + 'static) {
    let handler = Closure::<dyn Fn(JsValue)>::new(move |update: JsValue| changed(from_js(&update)));
    plugin.on_tools_changed_js(handler.as_ref().unchecked_ref());
    handler.forget();
}

/// Calls `status` with the stream's state (`connecting`, `live`,
/// `reconnecting`, `closed`) and, when it closed on an error, its words.
pub fn on_status(plugin: &Plugin, status: impl Fn(String, Option<String>) + 'static) {
    let handler = Closure::<dyn Fn(JsValue, JsValue)>::new(move |s: JsValue, e: JsValue| {
        let error = (!e.is_undefined()).then(|| message(&e));
        status(s.as_string().unwrap_or_default(), error)
    });
    plugin.on_status_js(handler.as_ref().unchecked_ref());
    handler.forget();
}
