//! Who is asking about students: an API key with the `students` scope
//! (acting as the user who made it), or else a signed-in teacher or admin.
//! What they may see of a student is then `server::students::visible`'s
//! one rule.

use super::caller::signed_in;
use super::{user_with_role, Key, Students};
use crate::domain::student::Viewer;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::{store, AppState, ServerError};
use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts};

/// The user a student route acts for: a key's maker (401 without a live
/// key, 403 `MissingScope` without `students`, 403 for a key no user
/// made), or the signed-in account (401, 403 for the wrong role; for
/// anything but `GET` also 403 `CrossOrigin` unless from the app's pages).
#[derive(Debug, Clone, Copy)]
pub struct StudentCaller(pub Viewer);

impl FromRequestParts<AppState> for StudentCaller {
    type Rejection = ServerError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ServerError> {
        if parts.headers.get(header::AUTHORIZATION).is_some() {
            let key = Key::<Students>::from_request_parts(parts, state).await?;
            let viewer = store::students::key_viewer(&state.db, key.id())
                .await?
                .ok_or(ApiError::Forbidden {
                    needed: "teacher (a key made by a signed-in teacher)".into(),
                })?;
            return Ok(Self(viewer));
        }
        let user = signed_in(parts)?;
        let user = user_with_role(
            state,
            Some(&user),
            Role::Teacher,
            &parts.method,
            &parts.headers,
        )?;
        Ok(Self(crate::server::students::viewer_of(&user)))
    }
}
