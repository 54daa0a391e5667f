//! Accounts as admins run them, the one door the accounts page, the
//! profile page and `/api/accounts` all use: making an account (with a
//! first password or a one-time link), changing its role, disabling and
//! enabling it under the last-admin rule, password links (shown to the
//! admin, or mailed: [`mail`]), using a link, and changing one's own
//! password.
//!
//! Disabling stops the account at once, everywhere: the change itself
//! deletes its sign-ins (and `resolve_user` refuses a disabled account's
//! cookie anyway), its API keys are refused while it is disabled
//! (`store::api_keys::verify`), and every open event stream counted under
//! it — opened with its cookie or one of its keys — and its workflow-MCP
//! sessions end, on every instance ([`cutoff`]). A role change ends them
//! too, so what reconnects is let in by the new role; revoking an API key
//! ([`revoke_key`]) ends its sessions and its streams.

pub mod cutoff;
pub mod mail;

use crate::domain::account::{AccountChange, AccountView, CreatedAccount, NewAccount, ResetLink};
use crate::domain::actor::Actor;
use crate::domain::limits::PASSWORD_RESET_LIFETIME_SECS;
use crate::domain::user::{check_new_password, UserView};
use crate::error::ApiError;
use crate::server::auth::{self, hash_password, random_token, token_hash, HASH_QUEUE_WAIT};
use crate::server::store::{accounts, auth_sessions, users};
use crate::server::{AppState, ServerError};

/// Every account, admins first.
pub async fn list(state: &AppState) -> Result<Vec<AccountView>, ServerError> {
    accounts::list(&state.db).await
}

/// Hashes `password` once a hashing permit is free (at most
/// [`HASH_QUEUE_WAIT`], then 503 `Busy`), as sign-ins do.
async fn hash_queued(state: &AppState, password: String) -> Result<String, ServerError> {
    let _permit = tokio::time::timeout(HASH_QUEUE_WAIT, state.hashing.acquire())
        .await
        .map_err(|_| ApiError::Busy)?
        .map_err(|_| ApiError::Busy)?;
    hash_password(password).await
}

/// Makes the account `new` as `actor`: with its password, or else with a
/// one-time link (shown, or mailed when `SMTP_URL` is set) whose address
/// starts with `origin`. The account and its link are written together
/// (409 for an e-mail in use, nothing written).
pub async fn create(
    state: &AppState,
    actor: &Actor,
    new: NewAccount,
    origin: &str,
) -> Result<CreatedAccount, ServerError> {
    // Without a password the account gets a hash of a secret nobody is
    // told: it cannot sign in until its link is used.
    let secret = new.password.clone().unwrap_or_else(random_token);
    let hash = hash_queued(state, secret).await?;
    let now = state.clock.now();
    let token = new.password.is_none().then(random_token);
    let hashed = token.as_deref().map(token_hash);
    let reset = hashed.as_deref().map(|hash| accounts::NewReset {
        token_hash: hash,
        expires_at: now + PASSWORD_RESET_LIFETIME_SECS,
        created_by: actor.user_id,
    });
    let account = accounts::create(&state.db, &new, &hash, reset, now).await?;
    tracing::info!(actor = %actor.name, account = account.id, role = %account.role, "account created");
    let reset = match token {
        Some(token) => Some(deliver(state, &account, &token, origin, now).await),
        None => None,
    };
    Ok(CreatedAccount { account, reset })
}

/// Applies `change` to account `id` as `actor` (409 when it would leave no
/// active admin). Disabling ends the account's sign-ins, and its open
/// event streams at once.
pub async fn change(
    state: &AppState,
    actor: &Actor,
    id: i64,
    change: AccountChange,
) -> Result<AccountView, ServerError> {
    let (before, after) = accounts::change(&state.db, id, change, state.clock.now()).await?;
    if after.disabled || before.role != after.role {
        let streams = cutoff::cut_off(state, cutoff::Holder::Account(id)).await;
        if after.disabled && !before.disabled {
            tracing::info!(actor = %actor.name, account = id, streams, "account disabled");
        }
    } else if before.disabled {
        tracing::info!(actor = %actor.name, account = id, "account enabled");
    }
    if before.role != after.role {
        tracing::info!(actor = %actor.name, account = id, role = %after.role, "role changed");
    }
    Ok(after)
}

/// Revokes API key `id` (one `maker` made, or any for `None`: an admin;
/// 404 otherwise): it stops working, the sessions it opened end, and its
/// open streams and workflow-MCP sessions end on every instance.
pub async fn revoke_key(state: &AppState, id: i64, maker: Option<i64>) -> Result<(), ServerError> {
    crate::server::store::api_keys::revoke(&state.db, id, maker).await?;
    crate::server::agent::sessions::end_opened_by_key(state, id, "API key revoked").await?;
    cutoff::cut_off(state, cutoff::Holder::ApiKey(id)).await;
    Ok(())
}

/// Makes a new one-time password link for account `id` as `actor`,
/// replacing its older ones: shown once, or mailed.
pub async fn reset_link(
    state: &AppState,
    actor: &Actor,
    id: i64,
    origin: &str,
) -> Result<ResetLink, ServerError> {
    let token = random_token();
    let now = state.clock.now();
    let hashed = token_hash(&token);
    let reset = accounts::NewReset {
        token_hash: &hashed,
        expires_at: now + PASSWORD_RESET_LIFETIME_SECS,
        created_by: actor.user_id,
    };
    let account = accounts::new_reset(&state.db, id, reset, now).await?;
    tracing::info!(actor = %actor.name, account = id, "password link made");
    Ok(deliver(state, &account, &token, origin, now).await)
}

/// The link for `token`, mailed to `account` when mail is set up (and
/// shown if that fails), shown otherwise.
async fn deliver(
    state: &AppState,
    account: &AccountView,
    token: &str,
    origin: &str,
    now: i64,
) -> ResetLink {
    let link = format!("{origin}/reset-password?token={token}");
    let expires_at = now + PASSWORD_RESET_LIFETIME_SECS;
    let mut answer = ResetLink {
        reset_link: Some(link.clone()),
        reset_link_mailed_to: None,
        mail_error: None,
        reset_link_expires_at: expires_at,
    };
    let Some(smtp) = &state.config.smtp else {
        return answer;
    };
    let expires = format!("{} UTC", crate::domain::time::format_utc(expires_at));
    let to = account.email.as_str();
    match mail::send_reset(smtp, to, &account.name, &link, &expires).await {
        Ok(()) => {
            answer.reset_link = None;
            answer.reset_link_mailed_to = Some(to.to_owned());
        }
        Err(why) => {
            tracing::warn!(account = account.id, error = %why, "password link not mailed");
            answer.mail_error = Some(why);
        }
    }
    answer
}

/// Sets a password with a one-time link: the link is checked before any
/// hashing (404 for an unknown, used, expired or replaced one, or one of
/// a disabled account), then used once, and the account's sign-ins end.
pub async fn use_reset_link(
    state: &AppState,
    token: &str,
    new_password: &str,
) -> Result<(), ServerError> {
    let hashed = token_hash(token.trim());
    accounts::reset_account(&state.db, &hashed, state.clock.now()).await?;
    check_new_password("new_password", new_password)?;
    let hash = hash_queued(state, new_password.to_owned()).await?;
    let id = accounts::use_reset(&state.db, &hashed, &hash, state.clock.now()).await?;
    tracing::info!(account = id, "password set with a link");
    Ok(())
}

/// Changes the signed-in `user`'s own password, given their current one
/// (422 `current_password` when it is wrong); their other sign-ins end,
/// the one making the change (`keep_token`) stays.
pub async fn change_own_password(
    state: &AppState,
    user: &UserView,
    current: &str,
    new: &str,
    keep_token: Option<&str>,
) -> Result<(), ServerError> {
    check_new_password("new_password", new)?;
    match auth::authenticate(state, &user.email, current).await {
        Ok(_) => {}
        Err(ServerError::Api(ApiError::InvalidCredentials)) => {
            return Err(
                ApiError::invalid("current_password", "is not your current password").into(),
            )
        }
        Err(other) => return Err(other),
    }
    let hash = hash_queued(state, new.to_owned()).await?;
    users::set_password_hash(&state.db, user.id, &hash).await?;
    let keep = keep_token.map(token_hash);
    auth_sessions::delete_for_user(&state.db, user.id, keep.as_deref()).await?;
    tracing::info!(account = user.id, "own password changed");
    Ok(())
}
