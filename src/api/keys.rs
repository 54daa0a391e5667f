//! API keys, which admins hand to agent backends for the JSON API.

use crate::api::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A key as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyView {
    /// Id, for revoking.
    pub id: i64,
    /// What it is for ("Gemini Live backend").
    pub name: String,
    /// The first characters, to tell keys apart.
    pub prefix: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Revoked keys are kept for the record.
    pub revoked: bool,
}

/// A freshly created key: the only time the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedApiKey {
    /// The secret, for `Authorization: Bearer …`.
    pub secret: String,
    /// Its listing.
    pub key: ApiKeyView,
}

/// Creates an API key (admins only).
#[server(prefix = "/rpc", endpoint = "create_api_key")]
pub async fn create_api_key(name: String) -> Result<CreatedApiKey, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        let admin = ctx::require(Role::Admin)?;
        let (secret, key) = store::api_keys::create(&state.db, &name, Some(admin.0.id)).await?;
        Ok(CreatedApiKey { secret, key })
    })
    .await
}

/// Every API key (admins only).
#[server(prefix = "/rpc", endpoint = "list_api_keys")]
pub async fn list_api_keys() -> Result<Vec<ApiKeyView>, ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        store::api_keys::list(&state.db).await
    })
    .await
}

/// Revokes an API key (admins only).
#[server(prefix = "/rpc", endpoint = "revoke_api_key")]
pub async fn revoke_api_key(id: i64) -> Result<(), ApiError> {
    use crate::domain::user::Role;
    use crate::server::{ctx, store};
    ctx::finish(async {
        let state = ctx::state()?;
        ctx::require(Role::Admin)?;
        store::api_keys::revoke(&state.db, id).await
    })
    .await
}
