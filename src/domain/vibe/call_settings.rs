//! A vibe's voice-call settings: the model and language settings an
//! Ultravox call is created with (`model`, `languageHint`, `temperature`,
//! `maxDuration`, `firstSpeaker`), kept with the vibe so the call-config
//! Switchboard hands out is complete.
//!
//! Every field is optional: one left out is left out of the call, and
//! Ultravox uses its own default. Checked with the rest of the vibe
//! ([`problems`], called by `vibe::rules::problems`), so a typo such as
//! `"FIRST_SPEAKER_BOT"` is refused at save instead of failing every call.

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};

/// Longest model name, in characters (`fixie-ai/ultravox-70B` is 21).
pub const MODEL_MAX_CHARS: usize = 100;
/// Longest language hint, in characters: a BCP47 tag (`en`, `pt-BR`);
/// Ultravox takes at most 16.
pub const LANGUAGE_HINT_MAX_CHARS: usize = 16;
/// Longest call a vibe may ask for, in seconds (Ultravox's own default is
/// one hour; a day bounds a forgotten call's cost).
pub const MAX_DURATION_MAX_SECONDS: u32 = 24 * 60 * 60;
/// Who speaks first, as Ultravox spells it.
pub const FIRST_SPEAKERS: [&str; 2] = ["FIRST_SPEAKER_AGENT", "FIRST_SPEAKER_USER"];

/// The settings of a vibe's calls (Ultravox create-call fields).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallSettings {
    /// The model (`fixie-ai/ultravox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The language the user speaks, a BCP47 tag (`en`, `de`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language_hint: Option<String>,
    /// Sampling temperature, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Temperature>,
    /// The longest the call may last, as Ultravox writes a duration
    /// (`"600s"`), at most [`MAX_DURATION_MAX_SECONDS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<String>,
    /// Who speaks first: one of [`FIRST_SPEAKERS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_speaker: Option<String>,
}

/// A sampling temperature. JSON numbers are never NaN, so equality is
/// total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Temperature(pub f64);

impl Eq for Temperature {}

impl CallSettings {
    /// Whether nothing is set (then the vibe's JSON leaves it out).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The settings as create-call fields, in Ultravox's names; only those
    /// set.
    pub fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

/// Seconds in an Ultravox duration (`"600s"`, `"90.5s"`), if it is one.
pub fn duration_seconds(raw: &str) -> Option<f64> {
    let number = raw.strip_suffix('s')?;
    let valid = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().filter(|c| *c == '.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    valid.then(|| number.parse().ok()).flatten()
}

/// Every rule `settings` break; fields are named under `at`
/// (`vibes.todos.callSettings`).
pub fn problems(settings: &CallSettings, at: &str) -> Vec<FieldError> {
    let mut problems = Vec::new();
    let field = |name: &str| format!("{at}.{name}");
    if let Some(model) = &settings.model {
        let n = model.chars().count();
        if model.trim().is_empty() || n > MODEL_MAX_CHARS {
            problems.push(FieldError::new(
                field("model"),
                format!("must be 1-{MODEL_MAX_CHARS} characters"),
            ));
        }
    }
    if let Some(hint) = &settings.language_hint {
        let ok = !hint.is_empty()
            && hint.len() <= LANGUAGE_HINT_MAX_CHARS
            && hint.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !ok {
            problems.push(FieldError::new(
                field("languageHint"),
                format!("must be a BCP47 language tag (en, pt-BR) of at most {LANGUAGE_HINT_MAX_CHARS} characters"),
            ));
        }
    }
    if let Some(Temperature(t)) = settings.temperature {
        if !(0.0..=1.0).contains(&t) {
            problems.push(FieldError::new(
                field("temperature"),
                "must be between 0 and 1",
            ));
        }
    }
    if let Some(raw) = &settings.max_duration {
        let ok = duration_seconds(raw)
            .is_some_and(|s| s > 0.0 && s <= f64::from(MAX_DURATION_MAX_SECONDS));
        if !ok {
            problems.push(FieldError::new(
                field("maxDuration"),
                format!("must be a duration in seconds such as \"600s\", at most {MAX_DURATION_MAX_SECONDS}s"),
            ));
        }
    }
    if let Some(first) = &settings.first_speaker {
        if !FIRST_SPEAKERS.contains(&first.as_str()) {
            problems.push(FieldError::new(
                field("firstSpeaker"),
                format!("must be {}", FIRST_SPEAKERS.join(" or ")),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(value: serde_json::Value) -> CallSettings {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_the_fields_set_reach_the_call_in_ultravox_names() {
        let s = settings(
            json!({"model": "fixie-ai/ultravox", "temperature": 0.4, "firstSpeaker": "FIRST_SPEAKER_AGENT"}),
        );
        assert_eq!(
            serde_json::Value::Object(s.fields()),
            json!({"model": "fixie-ai/ultravox", "temperature": 0.4, "firstSpeaker": "FIRST_SPEAKER_AGENT"})
        );
        assert!(CallSettings::default().is_empty());
        assert!(CallSettings::default().fields().is_empty());
    }

    #[test]
    fn good_settings_have_no_problems() {
        let s = settings(json!({
            "model": "fixie-ai/ultravox", "languageHint": "pt-BR", "temperature": 0,
            "maxDuration": "600s", "firstSpeaker": "FIRST_SPEAKER_USER"
        }));
        assert!(problems(&s, "vibes.todos.callSettings").is_empty());
    }

    #[test]
    fn each_bad_field_is_named() {
        let s = settings(json!({
            "model": " ", "languageHint": "english please", "temperature": 1.5,
            "maxDuration": "10 minutes", "firstSpeaker": "FIRST_SPEAKER_BOT"
        }));
        let fields: Vec<String> = problems(&s, "vibes.todos.callSettings")
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(
            fields,
            [
                "vibes.todos.callSettings.model",
                "vibes.todos.callSettings.languageHint",
                "vibes.todos.callSettings.temperature",
                "vibes.todos.callSettings.maxDuration",
                "vibes.todos.callSettings.firstSpeaker",
            ]
        );
    }

    #[test]
    fn durations_are_read_as_ultravox_writes_them() {
        assert_eq!(duration_seconds("600s"), Some(600.0));
        assert_eq!(duration_seconds("90.5s"), Some(90.5));
        for bad in ["600", "s", ".5s", "5.s", "1.2.3s", "-5s", "10m"] {
            assert_eq!(duration_seconds(bad), None, "{bad}");
        }
        let too_long = settings(json!({"maxDuration": "86401s"}));
        assert_eq!(problems(&too_long, "x").len(), 1);
        let unknown: Result<CallSettings, _> = serde_json::from_value(json!({"voice": "Mark"}));
        assert!(unknown.is_err());
    }
}
