//! API keys, which agent backends use for the JSON API. A key belongs to
//! the account that made it and acts as that account
//! (`domain::ownership`): a teacher makes, lists and revokes their own
//! keys, with a teacher's scopes (`Scope::TEACHER`); an admin any key, with
//! any scope.

use crate::domain::api_key::{ApiKeyView, CreatedApiKey};
use crate::error::ApiError;
use leptos::prelude::*;

/// Creates an API key with `scopes` (names such as `sessions`,
/// `bindings:write`; at least one) for the signed-in user, whose sessions
/// it will see; a teacher may give only `Scope::TEACHER` (403 naming the
/// admin role otherwise).
#[server(prefix = "/rpc", endpoint = "create_api_key")]
pub async fn create_api_key(
    name: String,
    #[server(default)] scopes: Vec<String>,
) -> Result<CreatedApiKey, ApiError> {
    use crate::domain::api_key::Scope;
    use crate::domain::user::Role;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        let scopes = Scope::parse_list(&scopes)?;
        if user.0.role != Role::Admin {
            if let Some(scope) = scopes.iter().find(|s| !Scope::TEACHER.contains(s)) {
                return Err(ApiError::Forbidden {
                    needed: format!("admin (for a key with {scope})"),
                }
                .into());
            }
        }
        let (secret, key) =
            store::api_keys::create(&state.db, &name, &scopes, Some(user.0.id)).await?;
        Ok(CreatedApiKey { secret, key })
    })
    .await
}

/// The signed-in user's API keys; an admin's list has every key, each with
/// its maker's name.
#[server(prefix = "/rpc", endpoint = "list_api_keys")]
pub async fn list_api_keys() -> Result<Vec<ApiKeyView>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        store::api_keys::list(&state.db, maker_unless_admin(&user)).await
    })
    .await
}

/// Revokes one of the signed-in user's API keys (an admin: any; another's
/// is 404); the sessions it opened and its open streams end at once.
#[server(prefix = "/rpc", endpoint = "revoke_api_key")]
pub async fn revoke_api_key(id: i64) -> Result<(), ApiError> {
    use crate::server::{accounts, http::ctx};
    ctx::finish(async {
        let user = ctx::teacher()?;
        let state = ctx::state()?;
        accounts::revoke_key(&state, id, maker_unless_admin(&user)).await
    })
    .await
}

/// Whose keys `user` manages: their own, or every key's (`None`) for an
/// admin.
#[cfg(feature = "ssr")]
fn maker_unless_admin(user: &crate::server::auth::AuthUser) -> Option<i64> {
    (user.0.role != crate::domain::user::Role::Admin).then_some(user.0.id)
}
