//! What the chat needs to know besides the messages: whether a model is
//! configured (`GET /api/model`, so a panel can say how to configure one
//! instead of offering a dead input) and how a tool's result reads —
//! done, failed or refused, with the reason in words rather than as JSON.

use leptos::prelude::*;
use serde_json::Value;

/// Said when the server has no model and gave no help of its own.
const NO_MODEL: &str = "No model is configured: set SWITCHBOARD_LLM_BASE_URL, SWITCHBOARD_LLM_API_KEY and SWITCHBOARD_LLM_MODEL and restart Switchboard.";

/// Why no model can answer, from `GET /api/model`'s answer; `None` when
/// one is configured.
pub fn unavailable_from(answer: &Value) -> Option<String> {
    if answer.get("configured").and_then(Value::as_bool) != Some(false) {
        return None;
    }
    let help = answer
        .get("help")
        .and_then(Value::as_str)
        .unwrap_or(NO_MODEL);
    Some(help.to_owned())
}

/// Whether a model can answer, asked of the server once the page is in
/// the browser (on the server, and until the answer, it is assumed it
/// can: a step without one is refused with the same help).
pub fn model_unavailable() -> Signal<Option<String>> {
    let unavailable = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            use crate::ui::components::http;
            if let Ok(answer) = http::send("GET", "/api/model", None, None).await {
                let _ = unavailable.try_set(unavailable_from(&answer));
            }
        });
    });
    unavailable.into()
}

/// How a tool call ended, as its result says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It ran.
    Done,
    /// It ran and failed.
    Failed,
    /// The rules refused it.
    Refused,
}

impl Outcome {
    /// The word shown beside the call (and its `data-state`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "error",
            Self::Refused => "refused",
        }
    }
}

/// A tool message's content read for people: how the call ended, and the
/// reason in words when it did not run (else the result, pretty-printed).
pub fn read_result(text: &str) -> (Outcome, String) {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("Error:") {
        let refused = rest.to_lowercase().contains("refused");
        let outcome = if refused {
            Outcome::Refused
        } else {
            Outcome::Failed
        };
        return (outcome, rest.trim().to_owned());
    }
    // The agent runner's words (`domain::agent_runner::call_answer`).
    if let Some(reason) = trimmed.strip_prefix("Refused by Switchboard:") {
        return (Outcome::Refused, reason.trim().to_owned());
    }
    if trimmed.to_lowercase().starts_with("refused") {
        return (Outcome::Refused, trimmed.to_owned());
    }
    if trimmed.starts_with("The tool `") && trimmed.contains("` failed:") {
        return (Outcome::Failed, trimmed.to_owned());
    }
    let Ok(json) = crate::ui::components::read_json::<Value>(text) else {
        return (Outcome::Done, text.to_owned());
    };
    let words = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_owned);
    if json.get("allowed").and_then(Value::as_bool) == Some(false) {
        let reason = words("reason").unwrap_or_else(|| "refused".into());
        return (Outcome::Refused, reason);
    }
    if json.get("status").and_then(Value::as_str) == Some("failed") {
        return (Outcome::Failed, pretty(text));
    }
    if let Some(error) = words("error") {
        return (Outcome::Failed, error);
    }
    (Outcome::Done, pretty(text))
}

/// JSON as the chat shows it: pretty, or as sent when it is not JSON.
pub fn pretty(raw: &str) -> String {
    crate::ui::components::read_json::<Value>(raw)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_configured_model_leaves_the_chat_open() {
        assert_eq!(
            unavailable_from(&json!({"configured": true, "model": "m"})),
            None
        );
        assert_eq!(unavailable_from(&json!({})), None);
    }

    #[test]
    fn no_model_says_how_to_configure_one() {
        let help = json!({"configured": false, "help": "Set SWITCHBOARD_LLM_MODEL."});
        assert_eq!(
            unavailable_from(&help).as_deref(),
            Some("Set SWITCHBOARD_LLM_MODEL.")
        );
        let bare = unavailable_from(&json!({"configured": false})).unwrap();
        assert!(bare.contains("SWITCHBOARD_LLM_BASE_URL"));
    }

    #[test]
    fn a_refusal_reads_as_its_reason() {
        let refused = json!({"allowed": false, "reason": "`x` is not available here"}).to_string();
        assert_eq!(
            read_result(&refused),
            (Outcome::Refused, "`x` is not available here".into())
        );
        let said = read_result("Error: refused: `x` is not available here");
        assert_eq!(said.0, Outcome::Refused);
        assert_eq!(
            read_result("Refused by Switchboard: `check_balance` needs identity_verified"),
            (
                Outcome::Refused,
                "`check_balance` needs identity_verified".into()
            )
        );
    }

    #[test]
    fn an_error_reads_as_a_failure() {
        assert_eq!(read_result("Error: no such step").0, Outcome::Failed);
        assert_eq!(
            read_result("The tool `x` failed: timeout").0,
            Outcome::Failed
        );
        assert_eq!(
            read_result(r#"{"error": "the plugin timed out"}"#),
            (Outcome::Failed, "the plugin timed out".into())
        );
    }

    #[test]
    fn a_result_is_pretty_printed() {
        let (outcome, words) = read_result(r#"{"allowed":true,"result":{"ok":1}}"#);
        assert_eq!(outcome, Outcome::Done);
        assert!(words.contains("\n"));
        assert_eq!(
            read_result("plain words"),
            (Outcome::Done, "plain words".into())
        );
    }
}
