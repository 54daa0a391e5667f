//! What a notification on the events channel says, as text: PostgreSQL
//! `NOTIFY` payloads are strings of under 8,000 bytes, so each is one
//! line of tab-separated fields with a one-letter kind first. A frame that
//! would not fit stays in its table and the notification carries its key.
//!
//! Session ids, workflow ids, event names and the owners list never hold a
//! tab; the JSON comes last and is taken whole, tabs or not.

use crate::domain::ownership::SessionOwners;

/// Largest notification payload sent, in bytes: PostgreSQL refuses 8,000
/// and more; the margin covers the number added by the database
/// (`append_event` appends the seq) and leaves room to spare.
pub const NOTIFY_PAYLOAD_MAX_BYTES: usize = 7_000;

/// One notification on the events channel, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Event `seq` of `session`, with its frame (`name`, `json`) when it
    /// fitted; without, it is read from `session_events`.
    Event {
        /// The session.
        session: String,
        /// Its number in the session.
        seq: u64,
        /// The event's name and JSON, if carried.
        frame: Option<(String, String)>,
    },
    /// `session` ended: its channels close once its events are delivered.
    Close {
        /// The session.
        session: String,
    },
    /// A change to the session list.
    List(ListFrame),
    /// A session-list change too large to carry: row `id` of `cluster_frames`.
    ListStored(i64),
    /// A workflow's change, for its settings pages.
    Workflow {
        /// The workflow.
        id: String,
        /// The event's name.
        name: String,
        /// The event's JSON.
        json: String,
    },
    /// A workflow change too large to carry: row `id` of `cluster_frames`.
    WorkflowStored(i64),
    /// The credential counted under `holder` (`user:<id>`, `key:<id>`)
    /// is no longer good: its streams and MCP sessions end here too.
    CutOff {
        /// The key its streams count under.
        holder: String,
    },
}

/// A session-list change as relayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFrame {
    /// The session it is about.
    pub session: String,
    /// Whose it is, when the publisher knew.
    pub owners: Option<SessionOwners>,
    /// `opened`, `updated` or `ended`.
    pub name: String,
    /// The change's JSON.
    pub json: String,
}

/// The text before and after the seq of event `name` of `session` (the
/// database puts the seq between them): with the frame when the whole
/// payload stays under [`NOTIFY_PAYLOAD_MAX_BYTES`], without otherwise.
pub fn event_parts(session: &str, name: &str, json: &str) -> (String, String) {
    let head = format!("e\t{session}\t");
    let tail = format!("\t{name}\t{json}");
    // A seq has at most 20 digits.
    if head.len() + 20 + tail.len() <= NOTIFY_PAYLOAD_MAX_BYTES {
        (head, tail)
    } else {
        (format!("E\t{session}\t"), String::new())
    }
}

/// The payload telling that `session` ended.
pub fn close(session: &str) -> String {
    format!("c\t{session}")
}

/// The payload telling that what `holder` holds open must end.
pub fn cut_off(holder: &str) -> String {
    format!("x\t{holder}")
}

/// The payload of a session-list change, or `None` when it is too large to
/// carry (then it is stored and [`list_stored`] sent).
pub fn list(frame: &ListFrame) -> Option<String> {
    let owners = owners_text(frame.owners);
    let text = format!(
        "l\t{}\t{owners}\t{}\t{}",
        frame.session, frame.name, frame.json
    );
    (text.len() <= NOTIFY_PAYLOAD_MAX_BYTES).then_some(text)
}

/// What precedes a stored session-list change's id (the database appends
/// the id as it stores the change).
pub const LIST_STORED: &str = "L\t";

/// What precedes a stored workflow change's id.
pub const WORKFLOW_STORED: &str = "W\t";

/// The payload pointing at a stored session-list change.
pub fn list_stored(id: i64) -> String {
    format!("{LIST_STORED}{id}")
}

/// The payload of workflow `id`'s change, or `None` when it is too large.
pub fn workflow(id: &str, name: &str, json: &str) -> Option<String> {
    let text = format!("w\t{id}\t{name}\t{json}");
    (text.len() <= NOTIFY_PAYLOAD_MAX_BYTES).then_some(text)
}

/// The payload pointing at a stored workflow change.
pub fn workflow_stored(id: i64) -> String {
    format!("{WORKFLOW_STORED}{id}")
}

/// Reads a payload; `None` for one this version does not know.
pub fn parse(payload: &str) -> Option<Notice> {
    let (kind, rest) = payload.split_once('\t')?;
    match kind {
        "e" => {
            let mut parts = rest.splitn(4, '\t');
            let session = parts.next()?.to_owned();
            let seq = parts.next()?.parse().ok()?;
            let name = parts.next()?.to_owned();
            let json = parts.next()?.to_owned();
            Some(Notice::Event {
                session,
                seq,
                frame: Some((name, json)),
            })
        }
        "E" => {
            let (session, seq) = rest.split_once('\t')?;
            Some(Notice::Event {
                session: session.to_owned(),
                seq: seq.parse().ok()?,
                frame: None,
            })
        }
        "c" => Some(Notice::Close {
            session: rest.to_owned(),
        }),
        "l" => {
            let mut parts = rest.splitn(4, '\t');
            Some(Notice::List(ListFrame {
                session: parts.next()?.to_owned(),
                owners: parse_owners(parts.next()?),
                name: parts.next()?.to_owned(),
                json: parts.next()?.to_owned(),
            }))
        }
        "L" => Some(Notice::ListStored(rest.parse().ok()?)),
        "w" => {
            let mut parts = rest.splitn(3, '\t');
            Some(Notice::Workflow {
                id: parts.next()?.to_owned(),
                name: parts.next()?.to_owned(),
                json: parts.next()?.to_owned(),
            })
        }
        "W" => Some(Notice::WorkflowStored(rest.parse().ok()?)),
        "x" => Some(Notice::CutOff {
            holder: rest.to_owned(),
        }),
        _ => None,
    }
}

/// `owners` as text: its five ids, comma-separated, empty for none; `-`
/// when unknown.
pub fn owners_text(owners: Option<SessionOwners>) -> String {
    let Some(o) = owners else {
        return "-".to_owned();
    };
    [
        o.lesson_owner,
        o.opened_by,
        o.key,
        o.key_maker,
        o.student_teacher,
    ]
    .iter()
    .map(|id| id.map(|n| n.to_string()).unwrap_or_default())
    .collect::<Vec<_>>()
    .join(",")
}

/// Reads [`owners_text`]; unknown (`None`) for anything malformed, so the
/// list's stream looks the owners up.
pub fn parse_owners(text: &str) -> Option<SessionOwners> {
    let ids: Vec<Option<i64>> = text
        .split(',')
        .map(|part| (!part.is_empty()).then(|| part.parse().ok()).flatten())
        .collect();
    let [lesson_owner, opened_by, key, key_maker, student_teacher] = ids[..] else {
        return None;
    };
    Some(SessionOwners {
        lesson_owner,
        opened_by,
        key,
        key_maker,
        student_teacher,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(session: &str, seq: u64, name: &str, json: &str) -> Option<Notice> {
        let (head, tail) = event_parts(session, name, json);
        parse(&format!("{head}{seq}{tail}"))
    }

    #[test]
    fn a_small_event_carries_its_frame() {
        assert_eq!(
            event("s1", 42, "tool_call", "{\"a\":\"x\\ty\"}"),
            Some(Notice::Event {
                session: "s1".into(),
                seq: 42,
                frame: Some(("tool_call".into(), "{\"a\":\"x\\ty\"}".into())),
            })
        );
    }

    #[test]
    fn a_large_event_carries_only_its_key() {
        let json = format!("\"{}\"", "x".repeat(20_000));
        assert_eq!(
            event("s1", 7, "ended", &json),
            Some(Notice::Event {
                session: "s1".into(),
                seq: 7,
                frame: None,
            })
        );
        let (head, tail) = event_parts("s1", "ended", &"x".repeat(6_900));
        assert!(head.len() + 20 + tail.len() <= NOTIFY_PAYLOAD_MAX_BYTES || tail.is_empty());
    }

    #[test]
    fn list_and_workflow_frames_carry_or_point() {
        let frame = ListFrame {
            session: "s".into(),
            owners: Some(SessionOwners {
                lesson_owner: Some(3),
                key: Some(9),
                ..SessionOwners::default()
            }),
            name: "opened".into(),
            json: "{}".into(),
        };
        assert_eq!(
            parse(&list(&frame).unwrap()),
            Some(Notice::List(frame.clone()))
        );
        let unknown = ListFrame {
            owners: None,
            ..frame.clone()
        };
        assert_eq!(parse(&list(&unknown).unwrap()), Some(Notice::List(unknown)));
        let big = ListFrame {
            json: "x".repeat(NOTIFY_PAYLOAD_MAX_BYTES),
            ..frame
        };
        assert_eq!(list(&big), None);
        assert_eq!(parse(&list_stored(5)), Some(Notice::ListStored(5)));
        assert_eq!(
            parse(&workflow("wf", "workflow_changed", "{}").unwrap()),
            Some(Notice::Workflow {
                id: "wf".into(),
                name: "workflow_changed".into(),
                json: "{}".into()
            })
        );
        assert_eq!(parse(&workflow_stored(6)), Some(Notice::WorkflowStored(6)));
        assert_eq!(
            parse(&close("s")),
            Some(Notice::Close {
                session: "s".into()
            })
        );
    }

    #[test]
    fn a_cut_off_names_its_holder() {
        assert_eq!(
            parse(&cut_off("key:12")),
            Some(Notice::CutOff {
                holder: "key:12".into()
            })
        );
    }

    #[test]
    fn an_unknown_or_broken_payload_is_ignored() {
        assert_eq!(parse("z\tanything"), None);
        assert_eq!(parse("e\ts\tnot-a-number\tn\t{}"), None);
        assert_eq!(parse(""), None);
    }

    proptest! {
        #[test]
        fn every_payload_sent_stays_under_the_limit_and_reads_back(
            session in "[a-z0-9-]{1,40}",
            name in "[a-z_]{1,30}",
            json in "[ -~\t]{0,9000}",
            seq in any::<u64>(),
        ) {
            let (head, tail) = event_parts(&session, &name, &json);
            let payload = format!("{head}{seq}{tail}");
            prop_assert!(payload.len() < 8_000);
            let expected_frame = (!tail.is_empty()).then(|| (name.clone(), json.clone()));
            prop_assert_eq!(
                parse(&payload),
                Some(Notice::Event { session: session.clone(), seq, frame: expected_frame })
            );
            if let Some(payload) = workflow(&session, &name, &json) {
                prop_assert!(payload.len() < 8_000);
            }
        }
    }
}
