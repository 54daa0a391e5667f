//! The middleware that attaches the signed-in user to each request and
//! sends anonymous visitors of the app's pages to sign in.

use super::sign_ins::{session_token, token_hash};
use super::AuthUser;
use crate::server::store::auth_sessions;
use crate::server::AppState;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

/// Middleware: looks up the session cookie and, when it names a live session,
/// adds [`AuthUser`] to the request. Static files skip the lookup.
pub async fn resolve_user(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/pkg/") {
        if let Some(token) = session_token(req.headers()) {
            match auth_sessions::find_user(&state.db, &token_hash(&token)).await {
                Ok(Some(row)) => match row.view() {
                    Ok(view) => {
                        req.extensions_mut().insert(AuthUser(view));
                    }
                    Err(e) => tracing::error!(error = %e, "stored account is unreadable"),
                },
                Ok(None) => {}
                Err(e) => return e.into_response(),
            }
        }
    }
    next.run(req).await
}

/// Middleware: guards every page of the page table
/// (`domain::pages::PAGES`) by the role it gives. A signed-out visitor of a
/// page that needs a sign-in, or of a file such a page links (its area,
/// `domain::pages::area_at`), is sent to the login page (303, with where
/// they were going); a signed-in account without the page's role gets it
/// as 403 (the page renders the notice, from the same table); a signed-in
/// visitor of the login page is sent home.
pub async fn guard_pages(req: Request, next: Next) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return next.run(req).await;
    }
    let Some(area) = crate::domain::pages::area_at(req.uri().path()) else {
        return next.run(req).await;
    };
    let role = req.extensions().get::<AuthUser>().map(|u| u.0.role);
    if role.is_none() && !area.allows(None) {
        let path = req.uri().path();
        let target = req.uri().path_and_query().map_or(path, |pq| pq.as_str());
        let next_param: String = url_encode(target);
        return Redirect::to(&format!("/login?next={next_param}")).into_response();
    }
    if role.is_some() && area.id == crate::domain::pages::PageId::Login {
        return Redirect::to("/").into_response();
    }
    // A file in a page's area answers for itself; a page is refused here.
    let is_page = area.matches(req.uri().path());
    let forbidden = is_page && !area.allows(role);
    let mut response = next.run(req).await;
    if forbidden && response.status().is_success() {
        *response.status_mut() = StatusCode::FORBIDDEN;
    }
    response
}

/// Percent-encodes everything but unreserved characters, for a query value.
pub(super) fn url_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
