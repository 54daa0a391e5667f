//! Who watches sessions: [`Viewing`] for the session list (its REST
//! answer and its event stream) and [`Watching`] for one session's page
//! data, events and calls. A person (the sign-in cookie) or an API key
//! (with `sessions`) sees what `domain::ownership` lets them, through the
//! one door `sessions::watchable`; a session's own token (`st_…`, `pt_…`)
//! watches its own session as `sessions::admit` allows. So no watching
//! route decides for itself who sees what.

use super::caller::signed_in;
use super::session::{bearer, path_param, stream_token};
use super::ApiKey;
use crate::domain::api_key::{Scope, API_KEY_PREFIX};
use crate::domain::ownership::Viewer;
use crate::domain::session_access::Act;
use crate::error::ApiError;
use crate::server::agent::sessions;
use crate::server::http::streams::{api_key_key, user_key};
use crate::server::store::agent_sessions::SessionRow;
use crate::server::{AppState, ServerError};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

/// A person or an API key looking at sessions: an API key in
/// `Authorization` (401 unknown or revoked, 403 `MissingScope` without
/// `sessions`), acting as the user who made it; else the signed-in
/// account (401 signed out).
#[derive(Debug, Clone)]
pub struct Viewing {
    /// Whose sessions it sees.
    pub viewer: Viewer,
    /// Whose stream caps its streams count under (and close with):
    /// `user:<id>` for a person; `key:<id>` and its maker's `user:<id>`
    /// for a key, so a disabled account's keys' streams end too.
    pub listeners: Vec<String>,
}

impl Viewing {
    /// The viewer the request's credential is, when it is a person or an
    /// API key (`None`: neither, or a session's token in `Authorization`).
    async fn of(parts: &Parts, state: &AppState) -> Result<Option<Self>, ServerError> {
        if let Some(secret) = bearer(&parts.headers).filter(|t| t.starts_with(API_KEY_PREFIX)) {
            let key = ApiKey::verify(state, secret).await?;
            key.require(Scope::Sessions)?;
            return Ok(Some(Viewing {
                viewer: key.viewer(),
                listeners: std::iter::once(api_key_key(key.id()))
                    .chain(key.0.maker_id().map(user_key))
                    .collect(),
            }));
        }
        if bearer(&parts.headers).is_some() {
            return Ok(None);
        }
        Ok(signed_in(parts).ok().map(|user| Viewing {
            viewer: sessions::viewer_of(&user),
            listeners: vec![user_key(user.0.id)],
        }))
    }
}

impl FromRequestParts<AppState> for Viewing {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        match Viewing::of(parts, state).await? {
            Some(viewing) => Ok(viewing),
            // A session token in `Authorization` on a list route: it
            // watches its own session only, as an unknown key would.
            None => Err(ApiError::Unauthenticated.into()),
        }
    }
}

/// A request watching session `{id}`: with the session's own token or
/// plugin token as `sessions::admit` lets it (`Act::Watch`); else as a
/// person or an API key ([`Viewing`]) whom `sessions::watchable` lets see
/// it — another teacher's session is 404, as an unknown one. 401 with no
/// credential. The token comes in `Authorization`, or for an event stream
/// (`STREAM`, the default: a browser's `EventSource` sets no headers) as
/// `?token=`; anywhere else a token in the query is not read, so it stays
/// out of access logs.
#[derive(Debug, Clone)]
pub struct Watching<const STREAM: bool = true> {
    /// The session, as read when the request was let in.
    pub row: SessionRow,
    /// Whose stream caps the watcher counts under, as
    /// [`Viewing::listeners`] (none for a session's token, counted under
    /// the session's cap only).
    pub listeners: Vec<String>,
}

impl<const STREAM: bool> FromRequestParts<AppState> for Watching<STREAM> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let id = path_param(parts, "id").await?;
        let watching = async {
            // A session's token names its session: it decides, even for a
            // page that is signed in too (a plugin on the playground).
            let token = if STREAM {
                stream_token(parts)
            } else {
                bearer(&parts.headers).map(str::to_owned)
            };
            let token = token.filter(|t| !t.starts_with(API_KEY_PREFIX));
            if let Some(token) = token {
                let admitted = sessions::admit(state, &id, Some(&token), Act::Watch).await?;
                return Ok::<_, ServerError>(Watching {
                    row: admitted.row,
                    listeners: Vec::new(),
                });
            }
            let viewing = Viewing::of(parts, state)
                .await?
                .ok_or(ApiError::Unauthenticated)?;
            Ok(Watching {
                row: sessions::watchable(state, &id, viewing.viewer).await?,
                listeners: viewing.listeners,
            })
        };
        watching.await.map_err(IntoResponse::into_response)
    }
}
