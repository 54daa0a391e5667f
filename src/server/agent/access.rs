//! Who may act on a session: loading it, the door-keeper every session
//! route asks (`admit`: a session token or a plugin token, and what each
//! may do), the door every person or API key watching a session goes
//! through (`watchable`, `sees`: `domain::ownership`), plugin tokens, and
//! the per-session write window.

use crate::domain::ownership::{may_see, SessionOwners, Viewer};
use crate::domain::session_access::{permits, Act, Credential, PLUGIN_TOKEN_PREFIX};
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::server::auth::{random_token, token_hash, AuthUser};
use crate::server::store::agent_sessions::{self as rows, SessionRow};
use crate::server::{AppState, ServerError};

/// Loads a session.
pub async fn get(state: &AppState, id: &str) -> Result<SessionRow, ServerError> {
    rows::find(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Session {id}")).into())
}

/// The one door for a person or an API key watching session `id` (its
/// page, events, calls): the session, if `viewer` may see it by
/// `domain::ownership`; otherwise 404, the answer for a session that does
/// not exist, so another teacher's session is not revealed to be there.
pub async fn watchable(
    state: &AppState,
    id: &str,
    viewer: Viewer,
) -> Result<SessionRow, ServerError> {
    let row = get(state, id).await?;
    if viewer != Viewer::Admin && !sees(state, id, viewer, None).await? {
        return Err(ApiError::NotFound(format!("Session {id}")).into());
    }
    Ok(row)
}

/// Whether `viewer` may see session `id`, by its `owners` when the caller
/// knows them (the list stream's frames carry them), else as stored.
/// `false` for an unknown session.
pub async fn sees(
    state: &AppState,
    id: &str,
    viewer: Viewer,
    owners: Option<SessionOwners>,
) -> Result<bool, ServerError> {
    if viewer == Viewer::Admin {
        return Ok(true);
    }
    let owners = match owners {
        Some(owners) => Some(owners),
        None => rows::owners(&state.db, id).await?,
    };
    Ok(owners.is_some_and(|o| may_see(viewer, &o)))
}

/// What ties session `id` to people, as stored (`None`: no such session).
pub async fn owners(state: &AppState, id: &str) -> Result<Option<SessionOwners>, ServerError> {
    rows::owners(&state.db, id).await
}

/// A signed-in account as a viewer of sessions.
pub fn viewer_of(user: &AuthUser) -> Viewer {
    Viewer::user(user.0.id, user.0.role)
}

/// A request on a session, let in by [`admit`]: the session and which of
/// its credentials came with it.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The session.
    pub row: SessionRow,
    /// The session token or the plugin token.
    pub credential: Credential,
}

impl Admitted {
    /// Whether this request's credential may also do `act` (a check that
    /// needs what the request is about, such as whether a call was relayed
    /// to the plugin): 403 naming what is needed otherwise.
    pub fn may(&self, act: Act) -> Result<(), ServerError> {
        permits(self.credential, act).map_err(|needed| {
            ApiError::Forbidden {
                needed: needed.into(),
            }
            .into()
        })
    }
}

/// The door-keeper of every session route: finds the session `token`
/// belongs to (a session token, or a plugin token by its `pt_` prefix) and
/// lets the request do `act` only if that credential may
/// (`domain::session_access`). 401 without a token or for an unknown one,
/// 403 for another session's token or for a credential without the right.
pub async fn admit(
    state: &AppState,
    id: &str,
    token: Option<&str>,
    act: Act,
) -> Result<Admitted, ServerError> {
    let token = token.ok_or(ApiError::Unauthenticated)?;
    let hash = token_hash(token);
    let (row, credential) = if token.starts_with(PLUGIN_TOKEN_PREFIX) {
        let row = rows::find_by_plugin_token_hash(&state.db, &hash).await?;
        (row, Credential::Plugin)
    } else {
        let row = rows::find_by_token_hash(&state.db, &hash).await?;
        (row, Credential::Session)
    };
    let row = row.ok_or(ApiError::Unauthenticated)?;
    if row.id != id {
        return Err(ApiError::Forbidden {
            needed: "this session's token".into(),
        }
        .into());
    }
    let admitted = Admitted { row, credential };
    admitted.may(act)?;
    Ok(admitted)
}

/// Whether signed-in `user` may drive session `row` with the agent
/// runner (act as its backend): an admin may drive any session (as the
/// console may call its tools); anyone else only the sessions they opened
/// (their trials, their manual starts). 403 naming who may otherwise.
pub fn may_drive(row: &SessionRow, user: &AuthUser) -> Result<(), ApiError> {
    if user.0.role == Role::Admin || row.opened_by == Some(user.0.id) {
        return Ok(());
    }
    Err(ApiError::Forbidden {
        needed: "to have opened this session (or the admin role)".into(),
    })
}

/// Issues session `row` a new plugin token, replacing the one it had;
/// 409 once the session has ended.
pub async fn issue_plugin_token(state: &AppState, row: &SessionRow) -> Result<String, ServerError> {
    row.still_open()?;
    let token = new_plugin_token();
    rows::set_plugin_token(&state.db, &row.id, &token_hash(&token), state.clock.now()).await?;
    Ok(token)
}

pub(super) fn new_plugin_token() -> String {
    format!("{PLUGIN_TOKEN_PREFIX}{}", random_token())
}

/// Counts one write of `session` in its per-minute window (429 past
/// `SESSION_WRITES_PER_MINUTE`, nothing counted or stored).
pub(super) async fn admit_write(state: &AppState, session: &str) -> Result<(), ServerError> {
    state
        .budgets
        .admit_write(
            session,
            state.clock.now(),
            state.config.session_budget.writes_per_minute,
        )
        .await
}
