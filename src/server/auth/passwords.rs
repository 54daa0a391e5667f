//! Passwords: hashed with Argon2 on a bounded queue, checked at sign-in
//! (the same work for an unknown e-mail, against a decoy hash), changed.

use super::sign_ins::{random_token, token_hash};
use super::throttle;
use crate::domain::user::{Email, UserView};
use crate::error::ApiError;
use crate::server::store::{auth_sessions, users};
use crate::server::{AppState, ServerError};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use std::sync::OnceLock;

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
