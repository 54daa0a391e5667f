//! Accounts from the pages: the admins' accounts page (list, make, change
//! the role, disable and enable, password links) and everyone's profile
//! (their own password), and setting a password with a one-time link.
//! Each goes through `server::accounts`, as `/api/accounts` does.

use crate::domain::account::{AccountView, CreatedAccount, ResetLink};
use crate::error::ApiError;
use leptos::prelude::*;

/// Every account, admins first (admins only).
#[server(prefix = "/rpc", endpoint = "accounts")]
pub async fn accounts() -> Result<Vec<AccountView>, ApiError> {
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        ctx::admin()?;
        accounts::list(&ctx::state()?).await
    })
    .await
}

/// Makes an account (admins only): with `password`, or, left empty, with
/// a one-time link shown (or mailed) to set one. 422 naming the field, 409
/// for an e-mail in use.
#[server(prefix = "/rpc", endpoint = "create_account")]
pub async fn create_account(
    email: String,
    name: String,
    role: String,
    #[server(default)] password: String,
) -> Result<CreatedAccount, ApiError> {
    use crate::domain::account::NewAccount;
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let new = NewAccount::parse(&email, &name, &role, Some(&password))?;
        let actor = admin.admin_actor()?;
        accounts::create(&state, &actor, new, &ctx::link_origin(&state)).await
    })
    .await
}

/// Changes an account's role and/or disables or enables it (admins only;
/// 409 when it would leave no active admin).
#[server(prefix = "/rpc", endpoint = "change_account")]
pub async fn change_account(
    id: i64,
    #[server(default)] role: Option<String>,
    #[server(default)] disabled: Option<bool>,
) -> Result<AccountView, ApiError> {
    use crate::domain::account::AccountChange;
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let change = AccountChange::parse(role.as_deref(), disabled)?;
        accounts::change(&state, &admin.admin_actor()?, id, change).await
    })
    .await
}

/// A new one-time password link for an account (admins only), replacing
/// its older ones: shown once, or mailed when mail is set up.
#[server(prefix = "/rpc", endpoint = "account_reset_link")]
pub async fn account_reset_link(id: i64) -> Result<ResetLink, ApiError> {
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let origin = ctx::link_origin(&state);
        accounts::reset_link(&state, &admin.admin_actor()?, id, &origin).await
    })
    .await
}

/// Changes the signed-in account's own password, given the current one;
/// its other sign-ins end.
#[server(prefix = "/rpc", endpoint = "change_own_password")]
pub async fn change_own_password(
    current_password: String,
    new_password: String,
) -> Result<(), ApiError> {
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let token = ctx::session_token();
        accounts::change_own_password(
            &state,
            &user.0,
            &current_password,
            &new_password,
            token.as_deref(),
        )
        .await
    })
    .await
}

/// Sets a password with a one-time link's `token` (anyone holding it),
/// then sends the browser to sign in. 404 for a used, expired or replaced
/// link.
#[server(prefix = "/rpc", endpoint = "reset_password")]
pub async fn reset_password(token: String, new_password: String) -> Result<(), ApiError> {
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        accounts::use_reset_link(&state, &token, &new_password).await?;
        leptos_axum::redirect("/login?reset=1");
        Ok(())
    })
    .await
}
