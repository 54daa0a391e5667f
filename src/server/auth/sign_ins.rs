//! Sign-in sessions: random tokens stored as hashes, started and ended,
//! and carried in the `sb_session` cookie.

use super::SESSION_COOKIE;
use crate::server::store::auth_sessions;
use crate::server::{AppState, ServerError};
use axum::http::{header, HeaderMap};
use rand::distr::{Alphanumeric, SampleString};
use sha2::{Digest, Sha256};

/// A fresh random token (43 alphanumerics ≈ 256 bits).
pub fn random_token() -> String {
    Alphanumeric.sample_string(&mut rand::rng(), 43)
}

/// What is stored for a token: its SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Starts a session for `user_id` and returns the token for the cookie.
pub async fn start_session(state: &AppState, user_id: i64) -> Result<String, ServerError> {
    let token = random_token();
    let expires_at = crate::server::platform::db::now() + state.config.session_ttl.as_secs() as i64;
    auth_sessions::create(&state.db, &token_hash(&token), user_id, expires_at).await?;
    Ok(token)
}

/// Ends the session behind `token`.
pub async fn end_session(state: &AppState, token: &str) -> Result<(), ServerError> {
    auth_sessions::delete(&state.db, &token_hash(token)).await
}

/// The sign-in token in a request's `Cookie` headers, if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.to_owned())
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value for `token`; `max_age` of `None` clears the cookie.
pub fn session_cookie(
    state: &AppState,
    token: &str,
    max_age: Option<std::time::Duration>,
) -> String {
    let age = max_age.map_or(0, |d| d.as_secs());
    let secure = if state.config.secure_cookies() {
        "; Secure"
    } else {
        ""
    };
    format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={age}{secure}")
}
