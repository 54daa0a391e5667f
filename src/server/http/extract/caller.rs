//! Who is calling: a signed-in account with a role (`Admin`, `Teacher`,
//! `SignedIn`) or an API key, any (`ApiKey`) or with a scope (`Key<S>`,
//! its markers declared by `key_scopes!`).

use super::*;
use crate::domain::api_key::Scope;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::auth::{require_same_origin, AuthUser};
use crate::server::http::streams::{api_key_key, user_key};
use crate::server::store::api_keys::VerifiedKey;
use crate::server::{store, AppState, ServerError};
use axum::extract::{FromRequestParts, OptionalFromRequestParts};
use axum::http::{header, request::Parts, HeaderMap, Method};
use std::marker::PhantomData;
use std::ops::Deref;

/// The signed-in account `resolve_user` found for the request: 401 without
/// one.
pub(super) fn signed_in(parts: &Parts) -> Result<AuthUser, ApiError> {
    parts
        .extensions
        .get::<AuthUser>()
        .cloned()
        .ok_or(ApiError::Unauthenticated)
}

/// A signed-in account with `role` (401 signed out, 403 with the wrong
/// role). Its cookie authenticates the request, so anything but a `GET`
/// must come from the app's own pages (403 `CrossOrigin`), as the
/// `/rpc/` middleware asks of server functions.
pub fn user_with_role(
    state: &AppState,
    user: Option<&AuthUser>,
    role: Role,
    method: &Method,
    headers: &HeaderMap,
) -> Result<AuthUser, ApiError> {
    let user = user.ok_or(ApiError::Unauthenticated)?;
    user.require(role)?;
    if method != Method::GET {
        require_same_origin(state, headers)?;
    }
    Ok(user.clone())
}

/// A signed-in admin (see [`user_with_role`]).
#[derive(Debug, Clone)]
pub struct Admin(pub AuthUser);

impl FromRequestParts<AppState> for Admin {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let user = signed_in(parts)?;
        let (method, headers) = (&parts.method, &parts.headers);
        Ok(Admin(user_with_role(
            state,
            Some(&user),
            Role::Admin,
            method,
            headers,
        )?))
    }
}

/// A signed-in teacher, or admin (see [`user_with_role`]).
#[derive(Debug, Clone)]
pub struct Teacher(pub AuthUser);

impl FromRequestParts<AppState> for Teacher {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let user = signed_in(parts)?;
        let (method, headers) = (&parts.method, &parts.headers);
        Ok(Teacher(user_with_role(
            state,
            Some(&user),
            Role::Teacher,
            method,
            headers,
        )?))
    }
}

/// The signed-in account, if any, for routes anyone signed in may use
/// beside another credential (watching sessions).
#[derive(Debug, Clone)]
pub struct SignedIn(pub Option<AuthUser>);

impl<S: Send + Sync> FromRequestParts<S> for SignedIn {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(SignedIn(parts.extensions.get::<AuthUser>().cloned()))
    }
}

// -------------------------------------------------------------- API keys

/// A request carrying a live API key in `Authorization: Bearer …`: 401
/// without one or for one that is unknown or revoked.
#[derive(Debug, Clone)]
pub struct ApiKey(pub VerifiedKey);

impl ApiKey {
    /// The key's id, for audit.
    pub fn id(&self) -> i64 {
        self.0.id
    }

    /// Whose sessions and lessons the key sees: its maker's
    /// (`domain::ownership`).
    pub fn viewer(&self) -> crate::domain::ownership::Viewer {
        self.0.viewer()
    }

    /// The key's name, recorded as the author of what it changes.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The key as the actor of a change, with its scopes (attributed as
    /// `API key “name”`).
    pub fn actor(&self) -> crate::domain::actor::Actor {
        crate::domain::actor::Actor::key(&self.0.name, &self.0.scopes)
    }

    /// Refuses (403 naming the first) unless the key was given one of
    /// `scopes`.
    pub fn require_any(&self, scopes: &[Scope]) -> Result<(), ApiError> {
        match scopes.iter().find(|s| self.0.scopes.contains(s)) {
            Some(_) => Ok(()),
            None => Err(ApiError::MissingScope {
                scope: scopes.first().map(Scope::to_string).unwrap_or_default(),
            }),
        }
    }

    /// Refuses (403 naming the scope) unless the key was given `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        self.require_any(&[scope])
    }

    /// The live key whose secret is `secret`: 401 for an unknown or
    /// revoked one.
    pub async fn verify(state: &AppState, secret: &str) -> Result<Self, ServerError> {
        match store::api_keys::verify(&state.db, secret).await? {
            Some(key) => Ok(ApiKey(key)),
            None => Err(ApiError::Unauthenticated.into()),
        }
    }
}

impl OptionalFromRequestParts<AppState> for ApiKey {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Self>, Self::Rejection> {
        if parts.headers.get(header::AUTHORIZATION).is_none() {
            return Ok(None);
        }
        <ApiKey as FromRequestParts<AppState>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

impl FromRequestParts<AppState> for ApiKey {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let secret = bearer(&parts.headers).ok_or(ApiError::Unauthenticated)?;
        ApiKey::verify(state, secret).await
    }
}

/// The scopes a [`Key`] must have one of (the first is the one a refusal
/// names).
pub trait KeyScope {
    /// One of these lets the key in.
    const SCOPES: &'static [Scope];
}

/// An API key with a scope `S` names: 401 without a live key, then 403
/// `MissingScope` naming the scope. Derefs to the [`ApiKey`].
#[derive(Debug, Clone)]
pub struct Key<S>(pub ApiKey, PhantomData<S>);

impl<S> Deref for Key<S> {
    type Target = ApiKey;

    fn deref(&self) -> &ApiKey {
        &self.0
    }
}

impl<S: KeyScope + Send + Sync> FromRequestParts<AppState> for Key<S> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let key = <ApiKey as FromRequestParts<AppState>>::from_request_parts(parts, state).await?;
        key.require_any(S::SCOPES)?;
        Ok(Key(key, PhantomData))
    }
}

/// Declares a marker type per scope set, for [`Key`].
macro_rules! key_scopes {
    ($($(#[$doc:meta])* $name:ident => [$($scope:ident),+];)+) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl KeyScope for $name {
            const SCOPES: &'static [Scope] = &[$(Scope::$scope),+];
        }
    )+};
}

key_scopes! {
    /// `sessions`: open and list sessions, a vibe's call body.
    Sessions => [Sessions];
    /// `lessons:read`: a lesson's prompt.
    LessonsRead => [LessonsRead];
    /// `bindings:read`: the bindings.
    BindingsRead => [BindingsRead];
    /// `bindings:write`: replace the bindings.
    BindingsWrite => [BindingsWrite];
    /// `vibes:read`: agents, vibes and their manifests.
    VibesRead => [VibesRead];
    /// `vibes:write`: change agents and vibes, import manifests.
    VibesWrite => [VibesWrite];
    /// `workflows:write`: read and edit workflow definitions.
    WorkflowsWrite => [WorkflowsWrite];
    /// `catalogue:write`: change the catalogue.
    CatalogueWrite => [CatalogueWrite];
    /// `students`: the key's user's students (list, add, read, export, delete).
    Students => [Students];
    /// `accounts:write`: create, change, disable and list accounts.
    AccountsWrite => [AccountsWrite];
    /// The catalogue and its history are read with `bindings:read` (the
    /// catalogue and the bindings are one tool policy) or
    /// `catalogue:write`; a refusal names `bindings:read`.
    CatalogueRead => [BindingsRead, CatalogueWrite];
}

/// Who may follow an admin's live stream (a workflow's edits, the MCP
/// servers' list): an API key with a scope `S` names, or else the
/// signed-in admin (its cookie; a stream is a `GET`). 401 with neither,
/// 403 `MissingScope` or `Forbidden` otherwise. One door for such streams,
/// so a new one cannot let a teacher or a key without the scope in.
#[derive(Debug, Clone)]
pub struct KeyOrAdmin<S> {
    /// Whose streams the listener's cap counts: `key:<id>` or `user:<id>`.
    pub listener: String,
    /// For a key, the account that made it: its streams count with that
    /// account too, so they end when it is disabled.
    pub key_user: Option<i64>,
    _scope: PhantomData<S>,
}

impl<S> KeyOrAdmin<S> {
    /// The caps a stream of this listener takes a slot under, each
    /// `per_user` (`MAX_STREAMS_PER_USER`): the listener's, and for a key
    /// its account's.
    pub fn stream_limits(&self, per_user: usize) -> Vec<(String, usize)> {
        let mut limits = vec![(self.listener.clone(), per_user)];
        limits.extend(self.key_user.map(|id| (user_key(id), per_user)));
        limits
    }
}

impl<S: KeyScope + Send + Sync> FromRequestParts<AppState> for KeyOrAdmin<S> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let (listener, key_user) = if parts.headers.get(header::AUTHORIZATION).is_some() {
            let key = Key::<S>::from_request_parts(parts, state).await?;
            (api_key_key(key.id()), key.0 .0.maker_id())
        } else {
            let user = signed_in(parts)?;
            user.require(Role::Admin)?;
            (user_key(user.0.id), None)
        };
        Ok(Self {
            listener,
            key_user,
            _scope: PhantomData,
        })
    }
}

/// Who may change something an admin runs over the API (accounts): an API
/// key with a scope `S` names, or else the signed-in admin, whose cookie's
/// requests other than `GET` must come from the app's own pages (see
/// [`user_with_role`]). 401 with neither, 403 `MissingScope`, `Forbidden`
/// or `CrossOrigin` otherwise. Gives the actor the change is recorded as.
#[derive(Debug, Clone)]
pub struct KeyOrAdminActor<S> {
    /// The admin (by e-mail) or the key (`API key “name”`).
    pub actor: crate::domain::actor::Actor,
    _scope: PhantomData<S>,
}

impl<S: KeyScope + Send + Sync> FromRequestParts<AppState> for KeyOrAdminActor<S> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let actor = if parts.headers.get(header::AUTHORIZATION).is_some() {
            Key::<S>::from_request_parts(parts, state).await?.actor()
        } else {
            let user = parts.extensions.get::<AuthUser>();
            let admin = user_with_role(state, user, Role::Admin, &parts.method, &parts.headers)?;
            crate::domain::actor::Actor::admin(admin.0.id, admin.0.email.as_str())
        };
        Ok(Self {
            actor,
            _scope: PhantomData,
        })
    }
}
