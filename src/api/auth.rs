//! Signing in and out, and asking who is signed in.

use crate::domain::user::{AccountSummary, UserView};
use crate::error::ApiError;
use leptos::prelude::*;

/// Checks the e-mail and password (throttled per account and address pair,
/// per account and per address, counted as attempts start: 429 with
/// `Retry-After`; see `domain::limits`), starts a
/// database-backed session and sets its cookie, then sends the browser to
/// `next` (a local path) or `/`.
#[server(prefix = "/rpc", endpoint = "login")]
pub async fn login(email: String, password: String, next: Option<String>) -> Result<(), ApiError> {
    use crate::domain::user::{safe_next_path, Email};
    use crate::server::{auth, http::ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        let email = Email::parse(&email)?;
        let user = auth::sign_in(&state, &email, &password, ctx::client_address(&state)).await?;
        let token = auth::start_session(&state, user.id).await?;
        ctx::set_session_cookie(&state, &token, Some(state.config.session_ttl));
        leptos_axum::redirect(&safe_next_path(next.as_deref()));
        Ok(())
    })
    .await
}

/// Ends the current session (deleting it server-side, not only the cookie) and
/// sends the browser to the login page.
#[server(prefix = "/rpc", endpoint = "logout")]
pub async fn logout() -> Result<(), ApiError> {
    use crate::server::{auth, http::ctx};
    ctx::finish(async {
        let state = ctx::state()?;
        if let Some(token) = ctx::session_token() {
            auth::end_session(&state, &token).await?;
        }
        ctx::set_session_cookie(&state, "", None);
        leptos_axum::redirect("/login");
        Ok(())
    })
    .await
}

/// The signed-in user, or `None` for an anonymous visitor. Used by the layout,
/// so it never fails for lack of a session.
#[server(prefix = "/rpc", endpoint = "current_user")]
pub async fn current_user() -> Result<Option<UserView>, ApiError> {
    use crate::server::http::ctx;
    ctx::finish(async { Ok(ctx::user().map(|u| u.view())) }).await
}

/// Every account with its open sign-in sessions; admins only, so an admin can
/// see who has access to the installation.
#[server(prefix = "/rpc", endpoint = "list_accounts")]
pub async fn list_accounts() -> Result<Vec<AccountSummary>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::users::list_with_sessions(&state.db).await
    })
    .await
}

/// Sets an account's password (admins: their own, with the current one, or
/// a teacher's). That account's other sign-ins end.
#[server(prefix = "/rpc", endpoint = "set_password")]
pub async fn set_password(
    account_id: i64,
    new_password: String,
    #[server(default)] current_password: String,
) -> Result<(), ApiError> {
    use crate::server::{auth, http::ctx};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let token = ctx::session_token();
        auth::set_password(
            &state,
            &admin.0,
            account_id,
            &current_password,
            &new_password,
            token.as_deref(),
        )
        .await
    })
    .await
}
