//! A hook's caller: a platform calling `/api/hooks/{workflow}/{secret}…`
//! (a webhook sender, a telephony platform). The secret in the path is
//! its credential, asked of `triggers::admit_hook`, which also throttles
//! wrong ones like wrong passwords.

use crate::domain::start_trigger::{INBOUND_CALL, WEBHOOK};
use crate::domain::workflow_def::Trigger;
use crate::server::{triggers, AppState, ServerError};
use axum::extract::{ConnectInfo, FromRequestParts, Path};
use axum::http::request::Parts;
use std::marker::PhantomData;
use std::net::{IpAddr, SocketAddr};

/// The trigger type a [`Hook`] route serves.
pub trait HookKind {
    /// A `domain::start_trigger` type id.
    const TRIGGER: &'static str;
}

/// `POST /api/hooks/{workflow}/{secret}`: the `webhook` trigger.
#[derive(Debug, Clone, Copy)]
pub struct WebhookHook;
impl HookKind for WebhookHook {
    const TRIGGER: &'static str = WEBHOOK;
}

/// `POST /api/hooks/{workflow}/{secret}/inbound-call`: the `inbound_call`
/// trigger.
#[derive(Debug, Clone, Copy)]
pub struct CallHook;
impl HookKind for CallHook {
    const TRIGGER: &'static str = INBOUND_CALL;
}

/// A request whose path names a workflow with a `K` trigger and that
/// workflow's hook secret: the workflow id and its trigger. 404 otherwise
/// (whatever was wrong), 429 past the wrong-secret limit.
#[derive(Debug, Clone)]
pub struct Hook<K> {
    /// The workflow.
    pub workflow: String,
    /// Its start trigger (of type `K`).
    pub trigger: Trigger,
    kind: PhantomData<K>,
}

/// The caller's address: the connection's, or behind a trusted proxy the
/// client its `X-Forwarded-For` names.
pub fn client_address(parts: &Parts, state: &AppState) -> Option<IpAddr> {
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>()?.0.ip();
    let forwarded = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok());
    Some(state.config.trusted_proxies.client(peer, forwarded))
}

/// The caller's address ([`client_address`]), for a door that counts a
/// wrong guess against it (the join-code exchange).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

impl FromRequestParts<AppState> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(client_address(parts, state)))
    }
}

impl<K: HookKind + Send + Sync> FromRequestParts<AppState> for Hook<K> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let Path((workflow, secret)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|_| crate::error::ApiError::NotFound("Hook".into()))?;
        let address = client_address(parts, state);
        let trigger = triggers::admit_hook(state, &workflow, &secret, K::TRIGGER, address).await?;
        Ok(Hook {
            workflow,
            trigger,
            kind: PhantomData,
        })
    }
}
