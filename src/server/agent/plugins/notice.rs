//! What instances tell each other about relayed plugin calls: a
//! notification on the relay channel as it is read, and a relayed call's
//! answer as its row stores it. Kept apart from `across`, which writes the
//! notifications and handles them, so these formats and their tests stand
//! alone.

use super::offer::Answer;
use serde_json::{json, Value};

/// One notification on [`RELAY_CHANNEL`](super::RELAY_CHANNEL).
#[derive(Debug, PartialEq)]
pub(super) enum Notice<'a> {
    /// Instance `from` relayed call `call_id` (its row holds the rest).
    Call { from: &'a str, call_id: i64 },
    /// Call `call_id` of `session` was answered.
    Answer { call_id: i64, session: &'a str },
    /// Instance `from` changed a plugin set; frame `frame` of
    /// `cluster_frames` is its availability update for the streams.
    Update { from: &'a str, frame: i64 },
    /// Instance `from` changed `session`'s plugin set (no update to send).
    Tools { from: &'a str, session: &'a str },
    /// `session` ended.
    End { session: &'a str },
}

/// Reads a notification as written by `across` (`None`: not one of ours).
pub(super) fn parse(text: &str) -> Option<Notice<'_>> {
    let (kind, rest) = text.split_once(' ')?;
    match kind {
        "call" => {
            let (from, id) = rest.split_once(' ')?;
            Some(Notice::Call {
                from,
                call_id: id.parse().ok()?,
            })
        }
        "answer" => {
            let (id, session) = rest.split_once(' ')?;
            Some(Notice::Answer {
                call_id: id.parse().ok()?,
                session,
            })
        }
        "update" => {
            let (from, id) = rest.split_once(' ')?;
            Some(Notice::Update {
                from,
                frame: id.parse().ok()?,
            })
        }
        "tools" => {
            let (from, session) = rest.split_once(' ')?;
            Some(Notice::Tools { from, session })
        }
        "end" => Some(Notice::End { session: rest }),
        _ => None,
    }
}

/// An answer as stored: `{"result": …}` or `{"error": "…"}`.
pub(super) fn encode(answer: &Answer) -> String {
    match answer {
        Ok(result) => json!({ "result": result }),
        Err(error) => json!({ "error": error }),
    }
    .to_string()
}

/// An answer as [`encode`] stored it.
pub(super) fn decode(text: &str) -> Answer {
    let mut value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    match value.get("error").and_then(Value::as_str) {
        Some(error) => Err(error.to_owned()),
        None => Ok(value.get_mut("result").map(Value::take).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_back_as_written() {
        assert_eq!(
            parse("call 00ab 42"),
            Some(Notice::Call {
                from: "00ab",
                call_id: 42
            })
        );
        assert_eq!(
            parse("answer 42 s 1"),
            Some(Notice::Answer {
                call_id: 42,
                session: "s 1"
            })
        );
        assert_eq!(
            parse("update 00ab 7"),
            Some(Notice::Update {
                from: "00ab",
                frame: 7
            })
        );
        assert_eq!(
            parse("tools 00ab s"),
            Some(Notice::Tools {
                from: "00ab",
                session: "s"
            })
        );
        assert_eq!(parse("end s"), Some(Notice::End { session: "s" }));
        assert_eq!(parse("call 00ab x"), None);
        assert_eq!(parse("what"), None);
    }

    #[test]
    fn an_answer_is_stored_and_read_back_whole() {
        for answer in [
            Ok(json!({"notes": [1, 2]})),
            Ok(Value::Null),
            Err("no table".to_owned()),
        ] {
            assert_eq!(decode(&encode(&answer)), answer);
        }
    }
}
