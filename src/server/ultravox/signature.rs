//! Checking an Ultravox webhook's signature, as Ultravox documents it
//! (<https://docs.ultravox.ai/webhooks/securing-webhooks>): the
//! `X-Ultravox-Webhook-Signature` header holds one or more (comma-separated,
//! for key rotation) hex HMAC-SHA256 digests of the raw body followed by the
//! `X-Ultravox-Webhook-Timestamp` header's value, keyed with the webhook's
//! secret; the timestamp must be recent, so a recorded webhook cannot be
//! replayed later.
//!
//! Pure (the time is passed in), so it is tested with fixed vectors.

use crate::domain::limits::ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header with the signatures.
pub const SIGNATURE_HEADER: &str = "X-Ultravox-Webhook-Signature";
/// The header with the time the webhook was sent (ISO 8601).
pub const TIMESTAMP_HEADER: &str = "X-Ultravox-Webhook-Timestamp";

/// Why a webhook is not let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A header is missing (its name).
    Missing(&'static str),
    /// The timestamp is not a time, or not within
    /// [`ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS`] of now.
    Stale,
    /// No signature matches.
    BadSignature,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing(header) => write!(f, "the {header} header is missing"),
            Self::Stale => write!(
                f,
                "the {TIMESTAMP_HEADER} is not within {ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS} s of now"
            ),
            Self::BadSignature => write!(f, "no {SIGNATURE_HEADER} matches the body"),
        }
    }
}

/// Unix seconds of an ISO 8601 timestamp: with an offset
/// (`2025-01-15T12:00:00.123Z`, `…+00:00`), or without one, read as UTC
/// (Ultravox's example compares it with a naive `datetime`).
pub fn timestamp_seconds(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    if let Ok(ts) = raw.parse::<jiff::Timestamp>() {
        return Some(ts.as_second());
    }
    let civil = raw.parse::<jiff::civil::DateTime>().ok()?;
    Some(
        civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()?
            .timestamp()
            .as_second(),
    )
}

/// Whether `signatures` (the header, comma-separated) holds the HMAC-SHA256
/// of `body` then `timestamp` under `secret`, and `timestamp` is within
/// [`ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS`] of `now` (Unix seconds). Each
/// candidate is compared in constant time.
pub fn verify(
    secret: &str,
    body: &[u8],
    timestamp: Option<&str>,
    signatures: Option<&str>,
    now: i64,
) -> Result<(), Refusal> {
    let timestamp = timestamp.ok_or(Refusal::Missing(TIMESTAMP_HEADER))?;
    let signatures = signatures.ok_or(Refusal::Missing(SIGNATURE_HEADER))?;
    let sent = timestamp_seconds(timestamp).ok_or(Refusal::Stale)?;
    if (now - sent).abs() > ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS {
        return Err(Refusal::Stale);
    }
    let matches = signatures.split(',').any(|candidate| {
        let Some(bytes) = from_hex(candidate.trim()) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return false;
        };
        mac.update(body);
        mac.update(timestamp.as_bytes());
        mac.verify_slice(&bytes).is_ok()
    });
    if matches {
        Ok(())
    } else {
        Err(Refusal::BadSignature)
    }
}

/// The hex signature of `body` sent at `timestamp` under `secret`, as
/// Ultravox computes it (for tests and scripted senders).
pub fn sign(secret: &str, body: &[u8], timestamp: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.update(timestamp.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The bytes of a hex string (either case), if it is one.
fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec-test";
    const BODY: &[u8] =
        br#"{"event":"call.ended","call":{"callId":"c1","metadata":{"sessionId":"s1"}}}"#;
    const SENT: &str = "2025-01-15T12:00:00Z";
    /// HMAC-SHA256("whsec-test", BODY + SENT), computed independently with
    /// Python's `hmac.new(secret, body + ts, "sha256").hexdigest()`.
    const DIGEST: &str = "795efb8d4b69e94812845ef282f321aa58857d7404337127233c6004919af74e";

    fn at() -> i64 {
        timestamp_seconds(SENT).unwrap()
    }

    #[test]
    fn a_fixed_vector_signs_as_ultravox_does() {
        assert_eq!(sign(SECRET, BODY, SENT), DIGEST);
    }

    #[test]
    fn a_good_signature_among_several_is_let_in() {
        let header = format!("deadbeef, {DIGEST}");
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), Some(&header), at() + 30),
            Ok(())
        );
        let upper = DIGEST.to_uppercase();
        assert_eq!(verify(SECRET, BODY, Some(SENT), Some(&upper), at()), Ok(()));
    }

    #[test]
    fn a_changed_body_timestamp_or_secret_is_refused() {
        let tampered = br#"{"event":"call.ended","call":{"callId":"c2"}}"#;
        assert_eq!(
            verify(SECRET, tampered, Some(SENT), Some(DIGEST), at()),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify("other", BODY, Some(SENT), Some(DIGEST), at()),
            Err(Refusal::BadSignature)
        );
        let later = "2025-01-15T12:00:01Z";
        assert_eq!(
            verify(SECRET, BODY, Some(later), Some(DIGEST), at()),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), Some("zz"), at()),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn an_old_or_future_timestamp_is_stale_and_missing_headers_are_named() {
        let window = ULTRAVOX_WEBHOOK_MAX_AGE_SECONDS;
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), Some(DIGEST), at() + window),
            Ok(())
        );
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), Some(DIGEST), at() + window + 1),
            Err(Refusal::Stale)
        );
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), Some(DIGEST), at() - window - 1),
            Err(Refusal::Stale)
        );
        assert_eq!(
            verify(SECRET, BODY, Some("yesterday"), Some(DIGEST), at()),
            Err(Refusal::Stale)
        );
        assert_eq!(
            verify(SECRET, BODY, None, Some(DIGEST), at()),
            Err(Refusal::Missing(TIMESTAMP_HEADER))
        );
        assert_eq!(
            verify(SECRET, BODY, Some(SENT), None, at()),
            Err(Refusal::Missing(SIGNATURE_HEADER))
        );
    }

    #[test]
    fn timestamps_are_read_with_or_without_an_offset() {
        assert_eq!(
            timestamp_seconds("2025-01-15T12:00:00Z"),
            Some(1_736_942_400)
        );
        assert_eq!(
            timestamp_seconds("2025-01-15T13:00:00.5+01:00"),
            Some(1_736_942_400)
        );
        assert_eq!(
            timestamp_seconds("2025-01-15T12:00:00.123456"),
            Some(1_736_942_400)
        );
        assert_eq!(timestamp_seconds("soon"), None);
    }
}
