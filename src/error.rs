//! The one error type every caller sees: the browser from a server function,
//! an agent backend from the JSON API.
//!
//! It lives outside the layers (`ui → api → server → domain`) because every
//! one of them produces or shows it; defining it in `api` made the server
//! import from the layer above it.
//!
//! It is deliberately coarse and safe to show: server-side details (SQL, file
//! paths, hashes) are logged where they happen and replaced by `Internal`, so
//! a client never sees a stack trace. Each variant maps to one HTTP status so
//! scripted clients can branch on the code alone.

use crate::domain::error::FieldError;
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// A failed server-function call, as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ApiError {
    /// No valid session: sign in first.
    #[error("Please sign in to continue.")]
    Unauthenticated,
    /// The e-mail and password did not match an account.
    #[error("The e-mail or password is incorrect.")]
    InvalidCredentials,
    /// The password was right, but an admin has disabled the account.
    #[error("This account is disabled. Ask an administrator to enable it.")]
    AccountDisabled,
    /// Signed in, but the account's role does not allow this.
    #[error("This needs the {needed} role.")]
    Forbidden {
        /// The role that would have been allowed.
        needed: String,
    },
    /// The request could not be read: malformed JSON, a missing JSON
    /// content type, or a path that does not exist.
    #[error("{0}")]
    BadRequest(String),
    /// The body, or one field in it, is larger than its limit; nothing was
    /// recorded.
    #[error("{field} is too large: the limit is {limit}.")]
    TooLarge {
        /// `body`, or the field that is too large.
        field: String,
        /// The limit, in words ("64 KiB").
        limit: String,
    },
    /// The API key is valid but was not given the scope this call needs.
    #[error("This API key lacks the `{scope}` scope.")]
    MissingScope {
        /// The scope that would have allowed it (`bindings:write`).
        scope: String,
    },
    /// A field broke a rule; shown next to that field.
    #[error("{0}")]
    Invalid(FieldError),
    /// The thing asked for does not exist (or is not visible to this user).
    #[error("{0} was not found.")]
    NotFound(String),
    /// Someone else changed the data first; nothing was overwritten.
    #[error("{0}")]
    Conflict(String),
    /// A conditional request named a version that is no longer current.
    #[error("{0}")]
    PreconditionFailed(String),
    /// A replace request did not say which version it replaces.
    #[error("Send {send}, so a newer version is never overwritten.")]
    PreconditionRequired {
        /// The header (or headers) the request must carry, in words.
        send: String,
    },
    /// A state-changing call that did not come from Switchboard's own pages
    /// (cross-site request forgery defence).
    #[error("Refused: this request did not come from Switchboard's own pages.")]
    CrossOrigin,
    /// Too many wrong passwords for this account or from this address;
    /// sent with `Retry-After`.
    #[error("Too many attempts — try again in {}.", minutes_text(*retry_after_secs))]
    TooManyAttempts {
        /// Seconds until an attempt will be considered again.
        retry_after_secs: u64,
    },
    /// Too many changes in a window (a session's plugin updates); sent
    /// with `Retry-After`.
    #[error("Too many requests: the limit is {limit}; try again in {retry_after_secs} s.")]
    RateLimited {
        /// The limit, in words.
        limit: String,
        /// Seconds until a request will be taken again.
        retry_after_secs: u64,
    },
    /// A session has used all it may store (calls or bytes in all); its
    /// backend opens a new session. No `Retry-After`: waiting frees nothing.
    #[error("This session has used its budget: the limit is {limit}; open a new session.")]
    BudgetSpent {
        /// The limit that is spent, in words.
        limit: String,
    },
    /// Too many event streams are open for this session or account.
    #[error("Too many open streams: the limit is {limit}.")]
    TooManyStreams {
        /// The cap that is full, in words.
        limit: String,
    },
    /// The server is at capacity for this kind of work (password checks);
    /// try again shortly.
    #[error("The server is busy; please try again in a moment.")]
    Busy,
    /// A service this call needs is not set up (the workflow agent's
    /// model); the words say what to configure.
    #[error("{0}")]
    Unavailable(String),
    /// Something failed on the server; details are in the server log.
    #[error("Something went wrong on the server. It has been logged; please try again.")]
    Internal,
    /// The call never reached the function (network, encoding, …).
    #[error("The request failed: {0}")]
    Transport(String),
}

impl ApiError {
    /// Input that broke a rule: `field` names the input (JSON key or form
    /// name), `rule` says in words what it must be.
    pub fn invalid(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self::Invalid(FieldError::new(field, rule))
    }

    /// The HTTP status that carries this error.
    pub fn status(&self) -> u16 {
        match self {
            Self::Unauthenticated | Self::InvalidCredentials => 401,
            Self::Forbidden { .. }
            | Self::CrossOrigin
            | Self::MissingScope { .. }
            | Self::AccountDisabled => 403,
            Self::NotFound(_) => 404,
            Self::Conflict(_) => 409,
            Self::PreconditionFailed(_) => 412,
            Self::PreconditionRequired { .. } => 428,
            Self::Invalid(_) => 422,
            Self::Transport(_) | Self::BadRequest(_) => 400,
            Self::TooLarge { .. } => 413,
            Self::TooManyAttempts { .. }
            | Self::TooManyStreams { .. }
            | Self::RateLimited { .. }
            | Self::BudgetSpent { .. } => 429,
            Self::Busy | Self::Unavailable(_) => 503,
            Self::Internal => 500,
        }
    }

    /// Seconds to wait before trying again, for a 429 that says.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::TooManyAttempts { retry_after_secs }
            | Self::RateLimited {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The field an `Invalid` error is about, for showing it in place.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid(err) => Some(&err.field),
            Self::TooLarge { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// Whole minutes, rounded up, in words: "1 minute", "15 minutes".
fn minutes_text(secs: u64) -> String {
    match secs.div_ceil(60).max(1) {
        1 => "1 minute".to_owned(),
        n => format!("{n} minutes"),
    }
}

impl From<FieldError> for ApiError {
    fn from(err: FieldError) -> Self {
        Self::Invalid(err)
    }
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    /// On the server, the only thing a server function decodes is its
    /// request, so a decoding error there is the caller's input (server_fn
    /// words a body it cannot read as "results" too): a bad request, in
    /// the decoder's words. In the browser it is the answer that could not
    /// be read, which the user cannot fix: a transport failure.
    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            ServerFnErrorErr::Deserialization(why) | ServerFnErrorErr::Args(why)
                if cfg!(feature = "ssr") =>
            {
                Self::BadRequest(format!("The request could not be read: {why}"))
            }
            other => Self::Transport(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_client_error_or_500_status() {
        assert_eq!(ApiError::Unauthenticated.status(), 401);
        assert_eq!(ApiError::InvalidCredentials.status(), 401);
        assert_eq!(
            ApiError::Forbidden {
                needed: "admin".into()
            }
            .status(),
            403
        );
        assert_eq!(ApiError::invalid("email", "is required").status(), 422);
        assert_eq!(ApiError::Conflict("x".into()).status(), 409);
        assert_eq!(ApiError::AccountDisabled.status(), 403);
        assert_eq!(ApiError::Internal.status(), 500);
    }

    #[test]
    fn throttled_sign_ins_say_how_many_minutes_to_wait() {
        let err = ApiError::TooManyAttempts {
            retry_after_secs: 601,
        };
        assert_eq!(err.status(), 429);
        assert_eq!(
            err.to_string(),
            "Too many attempts — try again in 11 minutes."
        );
        let err = ApiError::TooManyAttempts {
            retry_after_secs: 20,
        };
        assert_eq!(
            err.to_string(),
            "Too many attempts — try again in 1 minute."
        );
    }

    #[test]
    fn invalid_errors_name_their_field() {
        let err = ApiError::from(FieldError::new("email", "is required"));
        assert_eq!(err.field(), Some("email"));
        assert_eq!(err.to_string(), "email: is required");
    }
}
