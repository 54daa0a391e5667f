//! Whether a workflow's start trigger lets an outside event open a
//! session: a webhook's event type, a chat message's channel and words, a
//! phone call's numbers; and the schedule's rules as the scheduler reads
//! them.
//!
//! Pure decisions on the trigger's filter rules (already checked against
//! the trigger type's JSON Schema when saved, `workflow_def`), so every
//! entry point decides the same way and each rule is tested on its own.
//! A decision to start carries the line the session keeps as what started
//! it ([`StartedBy`]).

use crate::domain::session_origin::StartedBy;
use serde_json::Value;

/// The `manual` trigger type: a person or an API call.
pub const MANUAL: &str = "manual";
/// The `webhook` trigger type.
pub const WEBHOOK: &str = "webhook";
/// The `chat_message` trigger type.
pub const CHAT_MESSAGE: &str = "chat_message";
/// The `inbound_call` trigger type.
pub const INBOUND_CALL: &str = "inbound_call";
/// The `schedule` trigger type.
pub const SCHEDULE: &str = "schedule";

/// Largest webhook or inbound-call body accepted, bytes: a webhook's
/// payload is only read for its event type and a summary line.
pub const HOOK_BODY_MAX_BYTES: usize = 64 * 1024;
/// Largest chat message, characters.
pub const CHAT_TEXT_MAX_CHARS: usize = 4_000;
/// The channel a chat message without one came on.
pub const DEFAULT_CHANNEL: &str = "web";
/// The channels a chat message may come on (the `channels` rule's values).
pub const CHANNELS: [&str; 4] = ["web", "whatsapp", "sms", "slack"];

/// What a trigger does with an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Open a session, started by this.
    Start(StartedBy),
    /// Let it pass: the filter rules leave it out (why, for logs).
    Skip(String),
}

/// The strings of filter rule `name` (`eventTypes`), when it is set and
/// not empty; `None` means the rule lets everything through.
fn listed<'a>(rules: &'a Value, name: &str) -> Option<Vec<&'a str>> {
    let items: Vec<&str> = rules
        .get(name)?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    (!items.is_empty()).then_some(items)
}

/// A webhook body's event type: its `type` field, else its `event` field
/// (the two names senders use), when a string.
pub fn event_type(body: &Value) -> Option<&str> {
    ["type", "event"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
}

/// A webhook: with `eventTypes` set, only a body whose event type is one
/// of them starts the workflow; without, every body does.
pub fn webhook(rules: &Value, body: &Value) -> Decision {
    let kind = event_type(body);
    if let Some(wanted) = listed(rules, "eventTypes") {
        match kind {
            Some(k) if wanted.contains(&k) => {}
            Some(k) => return Decision::Skip(format!("event type `{k}` is not in eventTypes")),
            None => return Decision::Skip("the body has no `type` or `event`".into()),
        }
    }
    let summary = kind.map_or_else(|| "no event type".to_owned(), |k| format!("event {k}"));
    Decision::Start(StartedBy::new(WEBHOOK, &summary))
}

/// A chat message on `channel`: with `channels` set, only those channels;
/// with `keywords` set, only a message holding one of them (any case).
pub fn chat_message(rules: &Value, text: &str, channel: &str) -> Decision {
    if listed(rules, "channels").is_some_and(|c| !c.contains(&channel)) {
        return Decision::Skip(format!("channel `{channel}` is not in channels"));
    }
    if let Some(words) = listed(rules, "keywords") {
        let text = text.to_lowercase();
        if !words.iter().any(|w| text.contains(&w.to_lowercase())) {
            return Decision::Skip("the message holds none of the keywords".into());
        }
    }
    let line: String = text.chars().take(80).collect();
    Decision::Start(StartedBy::new(
        CHAT_MESSAGE,
        &format!("{channel} message “{line}”"),
    ))
}

/// A phone call from `from` to `to`: with `calledNumbers` set, only calls
/// to one of them; with `callerPrefixes` set, only callers whose number
/// starts with one of them.
pub fn inbound_call(rules: &Value, from: &str, to: &str) -> Decision {
    if listed(rules, "calledNumbers").is_some_and(|n| !n.contains(&to)) {
        return Decision::Skip(format!("`{to}` is not in calledNumbers"));
    }
    if listed(rules, "callerPrefixes").is_some_and(|p| !p.iter().any(|p| from.starts_with(p))) {
        return Decision::Skip(format!("`{from}` matches no callerPrefixes"));
    }
    Decision::Start(StartedBy::new(
        INBOUND_CALL,
        &format!("call from {from} to {to}"),
    ))
}

/// A schedule's rules: a five-field cron expression and the time zone it
/// is read in (UTC when none is named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRules {
    /// `minute hour day-of-month month day-of-week`.
    pub cron: String,
    /// An IANA time zone name (`Europe/London`).
    pub timezone: String,
}

impl ScheduleRules {
    /// The rules of a `schedule` trigger; `None` without a `cron`.
    pub fn of(rules: &Value) -> Option<Self> {
        let cron = rules.get("cron")?.as_str()?.trim();
        if cron.is_empty() {
            return None;
        }
        let timezone = rules
            .get("timezone")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or("UTC");
        Some(Self {
            cron: cron.to_owned(),
            timezone: timezone.to_owned(),
        })
    }

    /// What a session it opens keeps as its start.
    pub fn started_by(&self, due: &str) -> StartedBy {
        StartedBy::new(
            SCHEDULE,
            &format!("`{}` ({}) due {due}", self.cron, self.timezone),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn started(d: Decision) -> StartedBy {
        match d {
            Decision::Start(s) => s,
            Decision::Skip(why) => panic!("skipped: {why}"),
        }
    }

    #[test]
    fn a_webhook_without_event_types_starts_on_any_body() {
        let s = started(webhook(&json!({}), &json!({"anything": 1})));
        assert_eq!(s.trigger, "webhook");
        assert_eq!(s.summary, "no event type");
        assert_eq!(
            started(webhook(&json!({"eventTypes": []}), &json!({"type": "x"}))).summary,
            "event x"
        );
    }

    #[test]
    fn a_webhook_reads_the_event_type_from_type_then_event() {
        let rules = json!({"eventTypes": ["order.created"]});
        assert_eq!(
            started(webhook(&rules, &json!({"type": "order.created"}))).summary,
            "event order.created"
        );
        assert!(matches!(
            webhook(&rules, &json!({"event": "order.created"})),
            Decision::Start(_)
        ));
        assert_eq!(event_type(&json!({"type": 3, "event": "e"})), Some("e"));
    }

    #[test]
    fn a_webhook_skips_other_event_types_and_bodies_without_one() {
        let rules = json!({"eventTypes": ["order.created"]});
        assert!(matches!(
            webhook(&rules, &json!({"type": "order.cancelled"})),
            Decision::Skip(_)
        ));
        assert!(matches!(webhook(&rules, &json!({})), Decision::Skip(_)));
    }

    #[test]
    fn a_chat_message_is_filtered_by_channel_and_by_keywords_in_any_case() {
        let rules = json!({"channels": ["sms", "web"], "keywords": ["refund"]});
        assert!(matches!(
            chat_message(&rules, "I want a REFUND", "web"),
            Decision::Start(_)
        ));
        assert!(matches!(
            chat_message(&rules, "I want a refund", "slack"),
            Decision::Skip(_)
        ));
        assert!(matches!(
            chat_message(&rules, "hello", "sms"),
            Decision::Skip(_)
        ));
        let s = started(chat_message(&json!({}), "hello", DEFAULT_CHANNEL));
        assert_eq!(s.summary, "web message “hello”");
    }

    #[test]
    fn an_inbound_call_is_filtered_by_the_number_called_and_the_callers_prefix() {
        let rules = json!({"calledNumbers": ["+441234567890"], "callerPrefixes": ["+44"]});
        let s = started(inbound_call(&rules, "+447700900123", "+441234567890"));
        assert_eq!(s.summary, "call from +447700900123 to +441234567890");
        assert!(matches!(
            inbound_call(&rules, "+15550100", "+441234567890"),
            Decision::Skip(_)
        ));
        assert!(matches!(
            inbound_call(&rules, "+447700900123", "+449999999999"),
            Decision::Skip(_)
        ));
        assert!(matches!(
            inbound_call(&json!({}), "+1", "+2"),
            Decision::Start(_)
        ));
    }

    #[test]
    fn schedule_rules_need_a_cron_and_default_to_utc() {
        assert_eq!(ScheduleRules::of(&json!({})), None);
        assert_eq!(ScheduleRules::of(&json!({"cron": "  "})), None);
        let r = ScheduleRules::of(&json!({"cron": "0 9 * * 1-5"})).unwrap();
        assert_eq!(r.timezone, "UTC");
        let r =
            ScheduleRules::of(&json!({"cron": "0 9 * * *", "timezone": "Europe/London"})).unwrap();
        assert_eq!(r.timezone, "Europe/London");
        assert_eq!(
            r.started_by("2026-01-01 09:00").summary,
            "`0 9 * * *` (Europe/London) due 2026-01-01 09:00"
        );
    }
}
