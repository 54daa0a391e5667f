//! JSON calls to the app's own `/api/…` from the browser: the playground's
//! calls to the plugin API (with the session's token as a bearer token, as
//! any plugin makes them), the chats' steps and the opening of trials (the
//! signed-in user's cookie, sent by the browser to its own origin).

use serde_json::Value;

/// Sends `body` (if any) to `url` with `method`, and `token` (if any) as
/// a bearer token; the JSON answer, or the error's words (the API's
/// message when it sent one).
#[cfg(feature = "hydrate")]
pub async fn send(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Value, String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let headers = web_sys::Headers::new().map_err(|_| "no headers".to_owned())?;
    if let Some(token) = token {
        let _ = headers.set("Authorization", &format!("Bearer {token}"));
    }
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(body) = body {
        let _ = headers.set("Content-Type", "application/json");
        init.set_body(&wasm_bindgen::JsValue::from_str(&body.to_string()));
    }
    init.set_headers(&headers);
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| "the server could not be reached".to_owned())?
        .dyn_into()
        .map_err(|_| "no response".to_owned())?;
    let text = match response.text() {
        Ok(promise) => JsFuture::from(promise)
            .await
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    let json: Value = crate::ui::components::read_json(&text).unwrap_or(Value::Null);
    if response.ok() {
        Ok(json)
    } else {
        Err(error_words(response.status(), &json))
    }
}

/// The words for a failed answer: the plugin API's `message`, an
/// `{"error": words}` answer's words (a chat step with no model), the
/// API's error, or the status.
pub fn error_words(status: u16, body: &Value) -> String {
    if let Some(m) = body.get("message").and_then(Value::as_str) {
        return m.to_owned();
    }
    if let Some(words) = body.get("error").and_then(Value::as_str) {
        return words.to_owned();
    }
    match serde_json::from_value::<crate::error::ApiError>(body.clone()) {
        Ok(e) => e.to_string(),
        Err(_) => format!("HTTP {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_read_as_words() {
        assert_eq!(
            error_words(
                404,
                &json!({"error": "session_not_found", "message": "gone"})
            ),
            "gone"
        );
        assert!(error_words(
            429,
            &json!({"RateLimited": {"limit": "10 a minute", "retry_after_secs": 5}})
        )
        .contains("try again in 5 s"));
        assert_eq!(error_words(502, &Value::Null), "HTTP 502");
        assert_eq!(
            error_words(503, &json!({"error": "No model is configured."})),
            "No model is configured."
        );
    }
}
