//! Accounts over the JSON API, for a school's own systems provisioning
//! teachers with a key scoped `accounts:write` (or the signed-in admin):
//! list them, make one (with a password, or answered with its one-time
//! link), change its role, disable or enable it. Every route goes through
//! `server::accounts`, the door the pages use too.

use crate::domain::account::{AccountChange, AccountView, CreatedAccount, NewAccount};
use crate::server::accounts;
use crate::server::auth::link_origin;
use crate::server::http::extract::{path_id, AccountsWrite, JsonBody, KeyOrAdminActor};
use crate::server::{AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, patch};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// Account routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/accounts", get(list).post(create))
        .route("/api/accounts/{id}", patch(change))
}

/// `GET /api/accounts`' answer.
#[derive(Debug, Serialize)]
struct AccountList {
    accounts: Vec<AccountView>,
}

/// `GET /api/accounts`: `{"accounts": [...]}`, admins first, then by e-mail.
async fn list(
    _: KeyOrAdminActor<AccountsWrite>,
    State(state): State<AppState>,
) -> Result<Json<AccountList>, ServerError> {
    Ok(Json(AccountList {
        accounts: accounts::list(&state).await?,
    }))
}

/// `POST /api/accounts`' body, read as text so each field's rule names it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewAccountBody {
    email: String,
    name: String,
    role: String,
    #[serde(default)]
    password: Option<String>,
}

/// `POST /api/accounts {"email", "name", "role", "password"?}`: 201 with
/// the account, and without a password its `resetLink` (or, with mail set
/// up, `resetLinkMailedTo`); 422 naming the field, 409 for an e-mail in
/// use, nothing stored then.
async fn create(
    who: KeyOrAdminActor<AccountsWrite>,
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<NewAccountBody>,
) -> Result<(StatusCode, Json<CreatedAccount>), ServerError> {
    let new = NewAccount::parse(
        &body.email,
        &body.name,
        &body.role,
        body.password.as_deref(),
    )?;
    let origin = link_origin(&state, &headers);
    let created = accounts::create(&state, &who.actor, new, &origin).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// `PATCH /api/accounts/{id}`' body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeBody {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    disabled: Option<bool>,
}

/// `PATCH /api/accounts/{id} {"role"?, "disabled"?}`: 200 with the
/// account; 409 when it would leave no active admin, 404 for no such
/// account, 422 naming the field.
async fn change(
    who: KeyOrAdminActor<AccountsWrite>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ChangeBody>,
) -> Result<Json<AccountView>, ServerError> {
    let id = path_id(&id, "id")?;
    let change = AccountChange::parse(body.role.as_deref(), body.disabled)?;
    Ok(Json(
        accounts::change(&state, &who.actor, id, change).await?,
    ))
}
