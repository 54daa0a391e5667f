//! Join codes: a session's backend or a signed-in user makes a short
//! one-use code (`issue_code`); a plugin exchanges it for a plugin token of
//! that session (`join`) without ever seeing the session token. The token
//! it gets is a plugin token like the session's own (`Credential::Plugin`
//! in `access::admit`), kept beside it, so several plugins may join one
//! session. The code's rules are `domain::join_code`; only hashes are
//! stored (`store::join_codes`).

use super::access::{may_drive, new_plugin_token};
use crate::domain::join_code::{self, IssuedJoinCode};
use crate::domain::limits::{JOIN_CODES_LIVE_PER_SESSION, JOIN_CODE_LENGTH};
use crate::domain::time::iso_utc_ms;
use crate::error::ApiError;
use crate::server::auth::{throttle, token_hash, AuthUser};
use crate::server::store::agent_sessions::SessionRow;
use crate::server::store::join_codes::{self as store, CreatedBy, Inserted, NewCode};
use crate::server::{AppState, ServerError};
use rand::Rng;
use std::net::IpAddr;

/// Draws before giving up on a code whose hash is taken (by an earlier code
/// not yet swept): with 31⁸ codes, a second draw is already one in
/// billions.
const DRAWS: usize = 4;

/// A fresh code: [`JOIN_CODE_LENGTH`] characters drawn uniformly from the
/// alphabet with the CSPRNG the tokens use.
fn draw() -> String {
    let mut rng = rand::rng();
    join_code::from_positions(
        (0..JOIN_CODE_LENGTH).map(|_| rng.random_range(0..join_code::ALPHABET.len())),
    )
}

/// Makes a join code for session `row`, by `by`: 409 once the session has
/// ended, 429 with `Retry-After` while it holds
/// [`JOIN_CODES_LIVE_PER_SESSION`] live codes (nothing stored).
pub async fn issue_code(
    state: &AppState,
    row: &SessionRow,
    by: CreatedBy,
) -> Result<IssuedJoinCode, ServerError> {
    row.still_open()?;
    let now = state.clock.now();
    let expires_at = join_code::expires_at(now);
    for _ in 0..DRAWS {
        let code = draw();
        let hash = token_hash(&code);
        let new = NewCode {
            code_hash: &hash,
            session_id: &row.id,
            created_by: by,
            now,
            expires_at,
        };
        match store::insert(&state.db, &new, JOIN_CODES_LIVE_PER_SESSION).await? {
            Inserted::Stored => {
                return Ok(IssuedJoinCode {
                    code,
                    expires_at: iso_utc_ms(expires_at * 1000),
                })
            }
            Inserted::Full { frees_at } => {
                return Err(ApiError::RateLimited {
                    limit: format!("{JOIN_CODES_LIVE_PER_SESSION} live join codes per session"),
                    retry_after_secs: (frees_at - now).max(1).unsigned_abs(),
                }
                .into())
            }
            Inserted::Taken => continue,
        }
    }
    tracing::error!(session = %row.id, draws = DRAWS, "every join code drawn was taken");
    Err(ApiError::Internal.into())
}

/// Whether signed-in `user` may make a join code for session `row` on its
/// page: it is open and not a trial, and they may drive it (an admin, or
/// whoever opened it: `access::may_drive`), since a plugin let in adds
/// tools the agent may call. 409 or 403 saying why not.
pub fn may_make_code(row: &SessionRow, user: &AuthUser) -> Result<(), ApiError> {
    if row.ended_at.is_some() {
        return Err(ApiError::Conflict(format!(
            "Session {} has ended: plugins can no longer join it.",
            row.id
        )));
    }
    if row.trial {
        return Err(ApiError::Conflict(
            "A trial takes no plugins: open a session from the playground or a backend for that."
                .into(),
        ));
    }
    may_drive(row, user)
}

/// A plugin that joined: its session and its own plugin token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Joined {
    /// The session.
    pub session_id: String,
    /// A new plugin token (`pt_…`) of it, plugin rights only.
    pub plugin_token: String,
}

/// Exchanges the code `typed` (any case, dashes and spaces ignored) sent
/// from `address` for a plugin token of its session. `Ok(None)` for a code
/// that is unknown, used, expired or of an ended session: counted against
/// the address like a wrong password (`throttle::join_keys`); past that
/// limit every exchange from the address is 429 until the window frees.
/// Text that cannot be a code at all is 422 naming `code`, not counted.
pub async fn join(
    state: &AppState,
    typed: &str,
    address: Option<IpAddr>,
) -> Result<Option<Joined>, ServerError> {
    let code =
        join_code::normalise(typed).map_err(|why| ApiError::invalid("code", why.to_string()))?;
    let keys = throttle::join_keys(address);
    let now = state.clock.now();
    if let Some(wait) = state.login_throttle.wait(&keys, now).await? {
        return Err(ApiError::TooManyAttempts {
            retry_after_secs: wait,
        }
        .into());
    }
    let token = new_plugin_token();
    match store::redeem(&state.db, &token_hash(&code), &token_hash(&token), now).await? {
        Some(session_id) => {
            tracing::info!(session = %session_id, ?address, "a plugin joined with a code");
            Ok(Some(Joined {
                session_id,
                plugin_token: token,
            }))
        }
        None => {
            state.login_throttle.begin(&keys, now).await?;
            tracing::info!(?address, "join code refused");
            Ok(None)
        }
    }
}

/// Deletes codes expired before `now` (run by the periodic sweep).
pub async fn purge_expired(state: &AppState) -> Result<u64, ServerError> {
    store::purge_expired(&state.db, state.clock.now()).await
}
