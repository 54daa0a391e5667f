//! A vibe's Ultravox call settings in its editor (`model`, `languageHint`,
//! `temperature`, `maxDuration`, `firstSpeaker`): what the call-config
//! hands Ultravox for every call of the vibe, each checked beside its field
//! by the vibe's rules as the admin types.

use crate::domain::vibe::call_settings::Temperature;
use crate::domain::vibe::Vibe;
use crate::ui::agents::{text_field, EditorProblems};
use leptos::prelude::*;

/// The vibe's Ultravox call settings, each a text field (empty: left to
/// Ultravox's default).
pub fn call_settings_fields(edited: RwSignal<Vibe>, checked: EditorProblems) -> AnyView {
    let field = move |key: &str| checked.field(key);
    fn text(value: &Option<String>) -> String {
        value.clone().unwrap_or_default()
    }
    fn some(value: String) -> Option<String> {
        Some(value.trim().to_owned()).filter(|v| !v.is_empty())
    }
    view! {
        <fieldset data-testid="vibe-call-settings">
            <legend>"Ultravox call settings"</legend>
            {text_field(edited, "Model", "callSettings.model", |v| text(&v.call_settings.model), |v, x| v.call_settings.model = some(x), None, field("callSettings.model"))}
            {text_field(edited, "Language hint (BCP47, e.g. en)", "callSettings.languageHint", |v| text(&v.call_settings.language_hint), |v, x| v.call_settings.language_hint = some(x), None, field("callSettings.languageHint"))}
            {text_field(
                edited,
                "Temperature (0-1)",
                "callSettings.temperature",
                |v| v.call_settings.temperature.map(|t| t.0.to_string()).unwrap_or_default(),
                |v, x| match some(x) {
                    None => v.call_settings.temperature = None,
                    Some(x) => {
                        if let Ok(t) = x.parse::<f64>() {
                            v.call_settings.temperature = Some(Temperature(t));
                        }
                    }
                },
                None,
                field("callSettings.temperature"),
            )}
            {text_field(edited, "Longest call (e.g. 600s)", "callSettings.maxDuration", |v| text(&v.call_settings.max_duration), |v, x| v.call_settings.max_duration = some(x), None, field("callSettings.maxDuration"))}
            {text_field(edited, "First speaker (FIRST_SPEAKER_AGENT or FIRST_SPEAKER_USER)", "callSettings.firstSpeaker", |v| text(&v.call_settings.first_speaker), |v, x| v.call_settings.first_speaker = some(x), None, field("callSettings.firstSpeaker"))}
        </fieldset>
    }
    .into_any()
}
