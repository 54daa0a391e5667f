//! Authentication: password hashing, database-backed sign-in sessions, and
//! the middleware that attaches the signed-in user to each request, keeps
//! anonymous visitors out of the app's pages and refuses cross-site calls.

pub mod throttle;

use crate::domain::user::{Email, Role, UserView};
use crate::error::ApiError;
use crate::server::store::{auth_sessions, users};

use crate::server::{AppState, ServerError};
use crate::RPC_PREFIX;
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use rand::distr::{Alphanumeric, SampleString};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// Name of the sign-in cookie.
pub const SESSION_COOKIE: &str = "sb_session";

/// The signed-in user, put in the request's extensions by [`resolve_user`]
/// for server functions and pages to read.
#[derive(Debug, Clone)]
pub struct AuthUser(pub UserView);

impl AuthUser {
    /// The shared view of the account.
    pub fn view(&self) -> UserView {
        self.0.clone()
    }

    /// Refuses unless the account's role satisfies `needed`.
    pub fn require(&self, needed: Role) -> Result<(), ApiError> {
        if self.0.role.satisfies(needed) {
            Ok(())
        } else {
            Err(ApiError::Forbidden {
                needed: needed.to_string(),
            })
        }
    }

    /// The admin as the actor of a catalogue change (attributed by e-mail,
    /// as the catalogue history names its authors); refuses (403) anyone
    /// who is not an admin: the admin role is the browser's
    /// `catalogue:write`.
    pub fn admin_actor(&self) -> Result<crate::domain::actor::Actor, ApiError> {
        self.require(Role::Admin)?;
        Ok(crate::domain::actor::Actor::admin(
            self.0.id,
            self.0.email.as_str(),
        ))
    }
}

/// Hashes a password with Argon2id and a random salt (off the async threads:
/// it is deliberately slow).
pub async fn hash_password(password: String) -> Result<String, ServerError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| ServerError::PasswordHash(e.to_string()))
    })
    .await?
}

/// A valid hash of nothing anyone knows, verified against when the e-mail is
/// unknown so a wrong address takes as long as a wrong password.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(random_token().as_bytes(), &salt)
            .map(|h| h.to_string())
            .unwrap_or_default()
    })
}

/// Longest a sign-in waits for a hashing permit before it is told the
/// server is busy (503).
pub const HASH_QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Signs in from `address`. The attempt is counted before any hashing
/// (see [`throttle`]): refused with `TooManyAttempts` while the account
/// from this address, the account or the address is at its limit. A right
/// password forgives the account's attempts; one the server could not
/// decide (busy, a database error) does not count.
pub async fn sign_in(
    state: &AppState,
    email: &Email,
    password: &str,
    address: Option<std::net::IpAddr>,
) -> Result<UserView, ServerError> {
    let keys = throttle::keys(email.as_str(), address);
    let started = state.clock.now();
    if let throttle::Admission::Full(wait) = state.login_throttle.begin(&keys, started).await? {
        tracing::info!(email = %email.as_str(), ?address, "sign-in throttled");
        return Err(ApiError::TooManyAttempts {
            retry_after_secs: wait,
        }
        .into());
    }
    match authenticate(state, email, password).await {
        Ok(user) => {
            state.login_throttle.succeeded(&keys, started).await?;
            crate::server::store::accounts::signed_in(&state.db, user.id, started).await?;
            Ok(user)
        }
        Err(ServerError::Api(ApiError::InvalidCredentials)) => {
            tracing::info!(email = %email.as_str(), ?address, "wrong password");
            Err(ApiError::InvalidCredentials.into())
        }
        // The attempt stays counted: only a right password of a usable
        // account forgives.
        Err(ServerError::Api(ApiError::AccountDisabled)) => {
            tracing::info!(email = %email.as_str(), ?address, "sign-in of a disabled account");
            Err(ApiError::AccountDisabled.into())
        }
        Err(other) => {
            state.login_throttle.undecided(&keys, started).await?;
            Err(other)
        }
    }
}

/// Returns the account if `password` is right; `InvalidCredentials` for an
/// unknown e-mail or a wrong password alike. Waits for a hashing permit
/// (at most [`HASH_QUEUE_WAIT`], then `Busy`).
pub async fn authenticate(
    state: &AppState,
    email: &Email,
    password: &str,
) -> Result<UserView, ServerError> {
    let _permit = tokio::time::timeout(HASH_QUEUE_WAIT, state.hashing.acquire())
        .await
        .map_err(|_| ApiError::Busy)?
        .map_err(|_| ApiError::Busy)?;
    let row = users::find_by_email(&state.db, email).await?;
    let stored = row.as_ref().map(|r| r.password_hash.clone());
    let password = password.to_owned();
    let matches = tokio::task::spawn_blocking(move || {
        let hash = stored.unwrap_or_else(|| decoy_hash().to_owned());
        let parsed =
            PasswordHash::new(&hash).map_err(|e| ServerError::PasswordHash(e.to_string()))?;
        Ok::<_, ServerError>(
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok(),
        )
    })
    .await??;
    match row {
        // Said only to someone who knows the password.
        Some(row) if matches && row.disabled_at.is_some() => Err(ApiError::AccountDisabled.into()),
        Some(row) if matches => row.view(),
        _ => Err(ApiError::InvalidCredentials.into()),
    }
}

/// Sets `account_id`'s password as `actor`: an admin for their own account
/// (with their `current` password) or a teacher's. The account's other
/// sign-ins end; the actor's own (`keep_token`) stays.
pub async fn set_password(
    state: &AppState,
    actor: &UserView,
    account_id: i64,
    current: &str,
    new: &str,
    keep_token: Option<&str>,
) -> Result<(), ServerError> {
    let target = users::find_by_id(&state.db, account_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Account {account_id}")))?
        .view()?;
    if !crate::domain::user::may_set_password(actor, &target) {
        return Err(ApiError::Forbidden {
            needed: "admin role, for your own account or a teacher's,".into(),
        }
        .into());
    }
    crate::domain::user::check_new_password("new_password", new)?;
    if target.id == actor.id {
        match authenticate(state, &actor.email, current).await {
            Ok(_) => {}
            Err(ServerError::Api(ApiError::InvalidCredentials)) => {
                return Err(
                    ApiError::invalid("current_password", "is not your current password").into(),
                );
            }
            Err(other) => return Err(other),
        }
    }
    let hash = {
        let _permit = tokio::time::timeout(HASH_QUEUE_WAIT, state.hashing.acquire())
            .await
            .map_err(|_| ApiError::Busy)?
            .map_err(|_| ApiError::Busy)?;
        hash_password(new.to_owned()).await?
    };
    users::set_password_hash(&state.db, target.id, &hash).await?;
    let keep = keep_token.map(token_hash);
    auth_sessions::delete_for_user(&state.db, target.id, keep.as_deref()).await?;
    tracing::info!(actor = actor.id, account = target.id, "password changed");
    Ok(())
}

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

/// Middleware: looks up the session cookie and, when it names a live session,
/// adds [`AuthUser`] to the request. Static files skip the lookup.
pub async fn resolve_user(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/pkg/") {
        if let Some(token) = session_token(req.headers()) {
            match auth_sessions::find_user(&state.db, &token_hash(&token)).await {
                Ok(Some(row)) => match row.view() {
                    Ok(view) => {
                        req.extensions_mut().insert(AuthUser(view));
                    }
                    Err(e) => tracing::error!(error = %e, "stored account is unreadable"),
                },
                Ok(None) => {}
                Err(e) => return e.into_response(),
            }
        }
    }
    next.run(req).await
}

/// Middleware: guards every page of the page table
/// (`domain::pages::PAGES`) by the role it gives. A signed-out visitor of a
/// page that needs a sign-in, or of a file such a page links (its area,
/// `domain::pages::area_at`), is sent to the login page (303, with where
/// they were going); a signed-in account without the page's role gets it
/// as 403 (the page renders the notice, from the same table); a signed-in
/// visitor of the login page is sent home.
pub async fn guard_pages(req: Request, next: Next) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return next.run(req).await;
    }
    let Some(area) = crate::domain::pages::area_at(req.uri().path()) else {
        return next.run(req).await;
    };
    let role = req.extensions().get::<AuthUser>().map(|u| u.0.role);
    if role.is_none() && !area.allows(None) {
        let path = req.uri().path();
        let target = req.uri().path_and_query().map_or(path, |pq| pq.as_str());
        let next_param: String = url_encode(target);
        return Redirect::to(&format!("/login?next={next_param}")).into_response();
    }
    if role.is_some() && area.id == crate::domain::pages::PageId::Login {
        return Redirect::to("/").into_response();
    }
    // A file in a page's area answers for itself; a page is refused here.
    let is_page = area.matches(req.uri().path());
    let forbidden = is_page && !area.allows(role);
    let mut response = next.run(req).await;
    if forbidden && response.status().is_success() {
        *response.status_mut() = StatusCode::FORBIDDEN;
    }
    response
}

/// Percent-encodes everything but unreserved characters, for a query value.
fn url_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The origin a request claims to come from: its `Origin` header, else the
/// scheme://host[:port] part of its `Referer`.
fn claimed_origin(headers: &HeaderMap) -> Option<String> {
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        return Some(origin.to_owned());
    }
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let (scheme, rest) = referer.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

/// Whether the request's claimed origin is the app's own: `PUBLIC_ORIGIN`
/// when configured, else the origin the request itself was addressed to.
fn same_origin(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(claimed) = claimed_origin(headers) else {
        return false;
    };
    match &state.config.public_origin {
        Some(own) => claimed == *own,
        None => headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|host| {
                claimed == format!("http://{host}") || claimed == format!("https://{host}")
            }),
    }
}

/// The origin links the app hands out start with (a password link): the
/// configured `PUBLIC_ORIGIN`, else the one the request was addressed to.
pub fn link_origin(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(own) = &state.config.public_origin {
        return own.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| state.config.addr.to_string(), str::to_owned);
    format!("http://{host}")
}

/// For a route outside `/rpc/` that a signed-in user's cookie authenticates
/// and that changes something (an upload from a page): 403 unless the
/// request comes from the app's own pages, as `check_origin` does for
/// server functions.
pub fn require_same_origin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    if same_origin(state, headers) {
        Ok(())
    } else {
        tracing::warn!(origin = ?claimed_origin(headers), "cross-origin page upload refused");
        Err(ApiError::CrossOrigin)
    }
}

/// Middleware: server-function calls must come from the app's own pages.
/// Server functions carry the session cookie, so without this check any site
/// a signed-in user visits could make those calls in their name.
pub async fn check_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let is_rpc = req.uri().path().starts_with(&format!("{RPC_PREFIX}/"));
    if is_rpc && req.method() != Method::GET && !same_origin(&state, req.headers()) {
        tracing::warn!(path = %req.uri().path(), origin = ?claimed_origin(req.headers()), "cross-origin call refused");
        return (StatusCode::FORBIDDEN, axum::Json(ApiError::CrossOrigin)).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_session_token_is_found_among_other_cookies() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; sb_session=tok; b=2"),
        );
        assert_eq!(session_token(&headers).as_deref(), Some("tok"));
        headers.insert(header::COOKIE, HeaderValue::from_static("sb_session="));
        assert_eq!(session_token(&headers), None);
    }

    #[test]
    fn token_hashes_are_stable_hex_sha256() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(random_token().len(), 43);
        assert_ne!(random_token(), random_token());
    }

    #[test]
    fn the_origin_falls_back_to_the_referer() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:3000/login?x=1"),
        );
        assert_eq!(
            claimed_origin(&headers).as_deref(),
            Some("http://127.0.0.1:3000")
        );
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert_eq!(
            claimed_origin(&headers).as_deref(),
            Some("http://evil.example")
        );
    }

    #[test]
    fn next_values_are_percent_encoded() {
        assert_eq!(url_encode("/lessons?a=1&b=2"), "/lessons%3Fa%3D1%26b%3D2");
    }
}
