//! The workflow-editing agent's model: any OpenAI-compatible
//! chat-completions endpoint with tool calling (OpenAI, Ollama, vLLM,
//! llama.cpp's server), configured by environment.
//!
//! A small client on reqwest rather than an SDK, so its deadline is its own
//! (shorter than the server's 30 s request timeout, so the admin gets words
//! rather than a bare 408) and every failure — unreachable, slow, an HTTP
//! error, an answer that is not chat-completions JSON — becomes a sentence
//! the chat shows as the assistant's message.

use crate::domain::limits::excerpt;
use crate::domain::workflow_chat::{model_history, read_reply, ChatMessage, ChatRole};
use crate::server::ServerError;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a model call may take unless `SWITCHBOARD_LLM_TIMEOUT_SECONDS`
/// says otherwise.
pub const DEFAULT_TIMEOUT_SECONDS: usize = 25;
/// The longest allowed: under the server's 30 s request timeout, so the
/// step still answers with the reason.
pub const MAX_TIMEOUT_SECONDS: usize = 25;
/// Largest model answer read; a bigger one is refused in words.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// How long connecting to the model may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The three settings that make a model, named for the 503 and the panel.
const SETTINGS: [&str; 3] = [
    "SWITCHBOARD_LLM_BASE_URL",
    "SWITCHBOARD_LLM_API_KEY",
    "SWITCHBOARD_LLM_MODEL",
];

/// A configured model endpoint. Its `Debug` leaves the key out, so
/// logging the configuration never prints it.
#[derive(Clone)]
pub struct LlmConfig {
    /// The API root, e.g. `https://api.openai.com/v1` (`/chat/completions`
    /// is appended).
    pub base_url: String,
    /// The model name sent with each request.
    pub model: String,
    /// How long one call may take.
    pub timeout: Duration,
    api_key: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("api_key", &"<set>")
            .finish()
    }
}

impl LlmConfig {
    /// The model the settings describe; `Ok(Err(words))` when some are
    /// unset (the words say which and how to set them), `Err` when a set
    /// one is unusable (start-up fails, as for any setting).
    pub fn from_lookup(
        get: &impl Fn(&str) -> Option<String>,
        timeout_secs: usize,
    ) -> Result<Result<Self, String>, ServerError> {
        let values: Vec<Option<String>> = SETTINGS
            .iter()
            .map(|k| get(k).filter(|v| !v.trim().is_empty()))
            .collect();
        let missing: Vec<&str> = SETTINGS
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            return Ok(Err(not_configured(&missing)));
        }
        let [base_url, api_key, model] = [0, 1, 2].map(|i| values[i].clone().unwrap_or_default());
        let base_url = base_url.trim().trim_end_matches('/').to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ServerError::Config(format!(
                "SWITCHBOARD_LLM_BASE_URL must start with http:// or https://, got {base_url:?}"
            )));
        }
        let timeout = Duration::from_secs(timeout_secs as u64);
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(timeout)
            .build()
            .map_err(|e| ServerError::Config(format!("the model client: {e}")))?;
        Ok(Ok(Self {
            base_url,
            model: model.trim().to_owned(),
            timeout,
            api_key,
            client,
        }))
    }

    /// Asks the model for the next message: `messages` (system prompt
    /// first) and the `tools` it may call, in chat-completions form. The
    /// reply's `choices[0].message`, or why there is none, in words.
    pub async fn complete(&self, messages: &[Value], tools: &[Value]) -> Result<Value, String> {
        let body = json!({
            "model": self.model,
            "messages": messages,
            "tools": tools,
            "tool_choice": "auto",
        });
        let url = format!("{}/chat/completions", self.base_url);
        let sent = self
            .client
            .post(&url)
            .bearer_auth(&self.api_key)
            .json(&body)
            .send()
            .await;
        let mut response = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => return Err(self.too_slow()),
            Err(e) => {
                return Err(format!(
                    "The model at {} could not be reached ({}). Check SWITCHBOARD_LLM_BASE_URL and that the model server is running.",
                    self.base_url,
                    reason(&e)
                ))
            }
        };
        let status = response.status();
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                        return Err(format!(
                            "The model's answer was larger than {} KiB; it was not read.",
                            MAX_REPLY_BYTES / 1024
                        ));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) if e.is_timeout() => return Err(self.too_slow()),
                Err(e) => return Err(format!("The model's answer broke off ({}).", reason(&e))),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if !status.is_success() {
            let said = json
                .pointer("/error/message")
                .and_then(Value::as_str)
                .or_else(|| json.get("error").and_then(Value::as_str))
                .map(str::to_owned)
                .unwrap_or_else(|| excerpt(text.trim()));
            return Err(format!(
                "The model answered HTTP {}: {}",
                status.as_u16(),
                excerpt(&said)
            ));
        }
        match json.pointer("/choices/0/message") {
            Some(message) if message.is_object() => Ok(message.clone()),
            _ => Err(format!(
                "The model's answer was not a chat completion (no choices[0].message): {}",
                excerpt(text.trim())
            )),
        }
    }

    /// The assistant's next message: the model asked with `system` (the
    /// system prompt, if any), the `history` as a model must see it
    /// (`model_history`), `note` after it (words the turn adds, such as a
    /// lesson's nudges) and the `tools` it may call. A model that cannot
    /// be reached, or asks for a tool call that cannot be used, is the
    /// assistant's words — never an error — for the workflow chat and the
    /// agent runner alike.
    pub async fn next_message(
        &self,
        system: Option<&str>,
        history: &[ChatMessage],
        note: Option<&str>,
        tools: &[Value],
    ) -> ChatMessage {
        let system = system.map(|p| json!({"role": "system", "content": p}));
        let note = note.map(|n| json!({"role": "system", "content": n}));
        let messages: Vec<Value> = system
            .into_iter()
            .chain(
                model_history(history)
                    .iter()
                    .map(|m| serde_json::to_value(m).unwrap_or(Value::Null)),
            )
            .chain(note)
            .collect();
        match self.complete(&messages, tools).await {
            Ok(reply) => read_reply(&reply).unwrap_or_else(|why| {
                ChatMessage::text(
                    ChatRole::Assistant,
                    format!("The model asked for a tool call I could not use: {why}. Nothing was done; say that again, perhaps in other words."),
                )
            }),
            Err(words) => ChatMessage::text(ChatRole::Assistant, words),
        }
    }

    fn too_slow(&self) -> String {
        format!(
            "The model did not answer within {} s (SWITCHBOARD_LLM_TIMEOUT_SECONDS). Try again, or use a faster model.",
            self.timeout.as_secs()
        )
    }
}

/// The configured model, or 503 with the words saying what to set.
pub fn configured(llm: &Result<LlmConfig, String>) -> Result<&LlmConfig, crate::error::ApiError> {
    llm.as_ref()
        .map_err(|words| crate::error::ApiError::Unavailable(words.clone()))
}

/// The innermost cause of a request error, which says what happened
/// ("Connection refused") where the outer one only says where.
fn reason(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    excerpt(&cause.to_string())
}

/// What the chat says when no model is set up.
fn not_configured(missing: &[&str]) -> String {
    format!(
        "No model is configured for the workflow agent and the agent runner ({} not set). Set SWITCHBOARD_LLM_BASE_URL to an OpenAI-compatible endpoint (https://api.openai.com/v1, or http://localhost:11434/v1 for Ollama), SWITCHBOARD_LLM_API_KEY (any value for a server that needs none) and SWITCHBOARD_LLM_MODEL (a model with tool calling), then restart Switchboard.",
        missing.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Result<LlmConfig, String>, ServerError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        LlmConfig::from_lookup(&|k: &str| map.get(k).cloned(), 25)
    }

    #[test]
    fn unset_settings_are_named_in_the_words() {
        let words = read(&[("SWITCHBOARD_LLM_MODEL", "m")])
            .unwrap()
            .unwrap_err();
        assert!(words.contains("SWITCHBOARD_LLM_BASE_URL, SWITCHBOARD_LLM_API_KEY not set"));
        assert!(words.contains("restart"));
    }

    #[test]
    fn a_set_model_is_read_and_a_bad_url_refused() {
        let ok = read(&[
            ("SWITCHBOARD_LLM_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("SWITCHBOARD_LLM_API_KEY", "k"),
            ("SWITCHBOARD_LLM_MODEL", "gpt"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(ok.base_url, "http://127.0.0.1:9/v1");
        assert!(
            !format!("{ok:?}").contains("\"k\""),
            "the key stays out of logs"
        );
        assert!(read(&[
            ("SWITCHBOARD_LLM_BASE_URL", "ftp://x"),
            ("SWITCHBOARD_LLM_API_KEY", "k"),
            ("SWITCHBOARD_LLM_MODEL", "gpt"),
        ])
        .is_err());
    }
}
