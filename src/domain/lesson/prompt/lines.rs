//! The prompt's wording that is not a section of its own: each trigger
//! kind's instruction template and a tool's line in the functions section,
//! written through [`Text`], so the builder's counting writer and a plain
//! `String` (for nudges and the editor) get the same words. Nudges reuse
//! the templates, so the model hears one voice.

use super::writer::Text;
use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::optimise::trimmed;
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind};

/// The instruction template of each trigger kind, in the design's full
/// wording (the concrete error types and "wait for clear completion" are
/// what keep the model from over- or under-calling); `{name}` placeholders
/// are filled by [`trigger_instruction`].
pub const fn template(kind: TriggerKind) -> &'static str {
    match kind {
        TriggerKind::Always => "",
        TriggerKind::ErrorDetected => "Call silently whenever the student makes an error: grammar (wrong tense, conjugation, word order), pronunciation (incorrect sounds and stress), vocabulary (wrong word, false friends) or cultural (inappropriate formality). Do not interrupt the conversation or mention the call.",
        TriggerKind::SessionEnding => "Call only when the session timer expires, the student says goodbye, or all objectives are wrapped up. Never call it mid-conversation.",
        TriggerKind::TaskContext => "Call only when the student clearly completes one of the listed objectives, with its task id; wait for clear completion, not partial attempts. Call once per task.",
        TriggerKind::Keyword => "Call when the student mentions these topics: {keywords}.",
        TriggerKind::TurnCount => "Call after at least {minTurns} turns of conversation.",
        TriggerKind::TimeRemaining => "Call when the session has about {minutesRemaining} left.",
    }
}

/// What has happened when a trigger fires during a session, as the start
/// of a nudge ("About 2 minutes remain: call `tool` now."); kept beside the
/// prompt's templates so the model hears one voice. Empty for triggers the
/// model judges itself (always, error detected, task context).
pub fn situation_template(kind: TriggerKind) -> &'static str {
    match kind {
        TriggerKind::Keyword => "The student mentioned {keyword}",
        TriggerKind::TurnCount => "{minTurns} turns of conversation have passed",
        TriggerKind::TimeRemaining => "About {minutesRemaining} remain",
        TriggerKind::SessionEnding => "The session is ending",
        TriggerKind::Always | TriggerKind::ErrorDetected | TriggerKind::TaskContext => "",
    }
}

/// `1 minute`, `2 minutes`: how the prompt and nudges say a minute count.
pub fn minutes_phrase(minutes: u8) -> String {
    let mut out = String::new();
    push_minutes_phrase(&mut out, minutes);
    out
}

/// Writes [`minutes_phrase`] onto `out`.
pub(super) fn push_minutes_phrase(out: &mut impl Text, minutes: u8) {
    if minutes == 1 {
        out.fixed("1 minute");
    } else {
        out.number(minutes.into());
        out.fixed(" minutes");
    }
}

/// Replaces each `{name}` in `template` with its value.
pub fn interpolate(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.to_owned();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// The trigger's instruction with its parameters filled in (empty for
/// `always`).
pub fn trigger_instruction(condition: &TriggerCondition) -> String {
    let mut out = String::new();
    push_trigger_instruction(&mut out, condition);
    out
}

/// Writes [`trigger_instruction`] onto `out`: the template with its
/// placeholder replaced by the condition's value. Each template has at
/// most one placeholder, named for its kind's parameter, and is split
/// around it when compiling, so a build searches no template.
pub(super) fn push_trigger_instruction(out: &mut impl Text, condition: &TriggerCondition) {
    const KEYWORD: (&str, &str) = around_placeholder(template(TriggerKind::Keyword));
    const TURNS: (&str, &str) = around_placeholder(template(TriggerKind::TurnCount));
    const MINUTES: (&str, &str) = around_placeholder(template(TriggerKind::TimeRemaining));
    match condition {
        TriggerCondition::Keyword { keywords } => {
            out.fixed(KEYWORD.0);
            for (i, keyword) in keywords.iter().enumerate() {
                if i > 0 {
                    out.fixed(", ");
                }
                out.copied(trimmed(keyword));
            }
            out.fixed(KEYWORD.1);
        }
        TriggerCondition::TurnCount { min_turns } => {
            out.fixed(TURNS.0);
            out.number(*min_turns);
            out.fixed(TURNS.1);
        }
        TriggerCondition::TimeRemaining { minutes_remaining } => {
            out.fixed(MINUTES.0);
            push_minutes_phrase(out, *minutes_remaining);
            out.fixed(MINUTES.1);
        }
        _ => out.fixed(template(condition.kind())),
    }
}

/// `template` without its `{placeholder}`: what comes before and after it.
const fn around_placeholder(template: &'static str) -> (&'static str, &'static str) {
    let bytes = template.as_bytes();
    let mut open = 0;
    while bytes[open] != b'{' {
        open += 1;
    }
    let mut close = open;
    while bytes[close] != b'}' {
        close += 1;
    }
    let (before, rest) = template.split_at(open);
    let (_, after) = rest.split_at(close + 1 - open);
    (before, after)
}

/// The tool's line in the functions section:
/// `**tool_id**: <trigger instruction> <custom instructions>`.
pub fn tool_line(config: &ToolConfig) -> String {
    let mut out = String::new();
    push_tool_line(&mut out, config, |out| out.push_str(&config.tool_id));
    out
}

/// Writes [`tool_line`] onto `out`, the tool's id written by `id` (the
/// builder writes the catalogue's, which it matched the setting's to).
pub(super) fn push_tool_line<T: Text>(out: &mut T, config: &ToolConfig, id: impl FnOnce(&mut T)) {
    out.fixed("**");
    id(out);
    out.fixed("**");
    let colon = out.written();
    out.fixed(": ");
    let instruction = out.written();
    push_trigger_instruction(out, &config.trigger_condition);
    let has_trigger = out.written() > instruction;
    if let Some(extra) = config.instructions() {
        if has_trigger {
            out.fixed(" ");
        }
        out.copied(extra);
    } else if !has_trigger {
        out.take_back(colon);
    }
}
