//! Who a request acts as, where data belongs to a user (students' data):
//! the signed-in teacher or admin, or an API key with a scope acting as
//! the user who made it — a teacher's key reaches that teacher's
//! students, an admin's key everyone's.

use super::caller::{signed_in, user_with_role};
use super::{ApiKey, Key, KeyScope};
use crate::domain::student::Viewer;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::{AppState, ServerError};
use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts};
use std::marker::PhantomData;

/// The account a request acts as: with `Authorization`, an API key with a
/// scope `S` names (401, then 403 `MissingScope`) acting as its maker
/// (403 for a key no account made, or whose maker is gone); else the
/// signed-in teacher or admin (401, 403; for anything but `GET` also 403
/// `CrossOrigin` unless from the app's own pages).
#[derive(Debug, Clone)]
pub struct ActingUser<S> {
    /// The account acted as.
    pub viewer: Viewer,
    _scope: PhantomData<S>,
}

impl<S: KeyScope + Send + Sync> FromRequestParts<AppState> for ActingUser<S> {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        let viewer = if parts.headers.get(header::AUTHORIZATION).is_some() {
            let key = Key::<S>::from_request_parts(parts, state).await?;
            key_maker(&key)?
        } else {
            let user = signed_in(parts)?;
            let user = user_with_role(
                state,
                Some(&user),
                Role::Teacher,
                &parts.method,
                &parts.headers,
            )?;
            crate::server::students::viewer_of(&user)
        };
        Ok(Self {
            viewer,
            _scope: PhantomData,
        })
    }
}

/// The account that made `key`: 403 for a key no (remaining) account made.
fn key_maker(key: &ApiKey) -> Result<Viewer, ServerError> {
    let (id, role) = key.0.maker.ok_or(ApiError::Forbidden {
        needed: "teacher (a key made by an account that still exists)".into(),
    })?;
    Ok(Viewer::of(id, role))
}
