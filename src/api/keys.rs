//! API keys, which admins hand to agent backends for the JSON API.

use crate::domain::api_key::{ApiKeyView, CreatedApiKey};
use crate::error::ApiError;
use leptos::prelude::*;

/// Creates an API key with `scopes` (names such as `sessions`,
/// `bindings:write`; at least one) — admins only.
#[server(prefix = "/rpc", endpoint = "create_api_key")]
pub async fn create_api_key(
    name: String,
    #[server(default)] scopes: Vec<String>,
) -> Result<CreatedApiKey, ApiError> {
    use crate::domain::api_key::Scope;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        let admin = ctx::admin()?;
        let state = ctx::state()?;
        let scopes = Scope::parse_list(&scopes)?;
        let (secret, key) =
            store::api_keys::create(&state.db, &name, &scopes, Some(admin.0.id)).await?;
        Ok(CreatedApiKey { secret, key })
    })
    .await
}

/// Every API key (admins only).
#[server(prefix = "/rpc", endpoint = "list_api_keys")]
pub async fn list_api_keys() -> Result<Vec<ApiKeyView>, ApiError> {
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::api_keys::list(&state.db).await
    })
    .await
}

/// Revokes an API key (admins only); the sessions it opened end at once.
#[server(prefix = "/rpc", endpoint = "revoke_api_key")]
pub async fn revoke_api_key(id: i64) -> Result<(), ApiError> {
    use crate::server::agent::sessions;
    use crate::server::{http::ctx, store};
    ctx::finish(async {
        ctx::admin()?;
        let state = ctx::state()?;
        store::api_keys::revoke(&state.db, id).await?;
        sessions::end_opened_by_key(&state, id, "API key revoked").await
    })
    .await
}
