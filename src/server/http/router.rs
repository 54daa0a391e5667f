//! The server's own HTTP surface — health check, the bindings download and
//! the JSON API — and the middleware every request passes through.
//!
//! The pages and server functions are added by `crate::startup`, the
//! composition root: the server layer does not import the UI above it.

use crate::error::ApiError;
use crate::server::http::{cors, rest, timing};
use crate::server::{auth, AppState, ServerError};
use crate::RPC_PREFIX;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use leptos::nonce::Nonce;
use std::time::Duration;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::compression::{CompressionBody, CompressionLayer, CompressionLevel};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Longest a request may take to produce its response head. Streams (SSE)
/// are unaffected once their headers are sent.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Brotli and gzip level for responses compressed as they are sent (pages,
/// JSON): level 4 gets most of the size (a 23 KB page to about 5 KB) for
/// a fraction of a millisecond; the bundle is compressed at build time at
/// the highest levels instead (`scripts/bundle.sh`).
const DYNAMIC_COMPRESSION_LEVEL: i32 = 4;

/// Responses smaller than this are sent as they are: compressing them
/// saves less than the `Content-Encoding` and `Vary` headers cost.
const DYNAMIC_COMPRESSION_MIN_BYTES: u16 = 256;

/// Compresses pages and JSON for clients that accept brotli or gzip. Never
/// event streams (`text/event-stream`: an encoder holds back each event
/// until its buffer fills), nor what already has a `Content-Encoding` (the
/// precompressed bundle) or is a range; images are compressed already.
fn compression() -> CompressionLayer<impl Predicate> {
    let predicate = SizeAbove::new(DYNAMIC_COMPRESSION_MIN_BYTES)
        .and(NotForContentType::GRPC)
        .and(NotForContentType::IMAGES)
        .and(NotForContentType::SSE);
    CompressionLayer::new()
        .br(true)
        .gzip(true)
        .quality(CompressionLevel::Precise(DYNAMIC_COMPRESSION_LEVEL))
        .compress_when(predicate)
}

/// The body of a response that passed [`compression`]: a response it did
/// not encode (no `Content-Encoding` was added) gets its own body back,
/// instead of being boxed inside the encoder's wrapper.
///
/// That wrapper is sized for the largest encoder whichever it holds (about
/// 3 KB), and an event stream keeps its body for as long as it is open:
/// 10,000 watchers held 32 MB of wrappers that never encoded a byte.
fn unwrap_unencoded(response: Response<CompressionBody<Body>>) -> Response {
    let encoded = response
        .headers()
        .contains_key(axum::http::header::CONTENT_ENCODING);
    let (parts, body) = response.into_parts();
    let body = if encoded {
        Body::new(body)
    } else {
        body.into_inner()
    };
    Response::from_parts(parts, body)
}

/// The routes the server layer answers itself: `/healthz`, the signed-in
/// admin's `tool-bindings.json` download, the JavaScript plugin client
/// (`/clients/…`) and the JSON API (`/api/…`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/bindings/tool-bindings.json", get(download_bindings))
        .merge(crate::server::http::clients::router())
        .merge(rest::router())
}

/// Wraps `router` (every route of the app) in the middleware each request
/// passes through, outermost first: tracing, the API's `Server-Timing`
/// ([`timing`]: it covers everything below), the security headers every
/// answer carries ([`security_headers`]), CORS for the
/// token-authenticated API ([`cors`]: preflights are answered there,
/// before the timeout and any sign-in lookup), compression of responses on
/// their way out ([`compression`]) after a request with two
/// `Authorization` headers is refused ([`one_authorization`]), the request
/// timeout, the signed-in user, the cross-origin check for server
/// functions, their bodies' limit and NUL check, 400 for undecodable
/// server-function calls, and the sign-in redirect for pages.
pub fn with_middleware(router: Router<AppState>, state: AppState) -> Router {
    router
        .layer(from_fn(auth::guard_pages))
        // In a cluster, an answer waits for its events to be stored.
        .layer(from_fn_with_state(
            state.clone(),
            crate::server::cluster::stored_before_answer,
        ))
        .layer(from_fn(malformed_calls_are_client_errors))
        .layer(from_fn(crate::server::http::rpc_bodies::checked))
        .layer(from_fn_with_state(state.clone(), auth::check_origin))
        .layer(from_fn_with_state(state.clone(), auth::resolve_user))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(
            tower::ServiceBuilder::new()
                .map_response(unwrap_unencoded)
                .layer(compression()),
        )
        .layer(from_fn(one_authorization))
        .layer(from_fn_with_state(state.clone(), cors::cors))
        // Outside the timeout, compression and CORS, so their own answers
        // (a 408, a refused preflight) carry these headers too.
        .layer(from_fn_with_state(state.clone(), security_headers))
        .layer(from_fn(timing::server_timing))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Headers every response gets: no MIME sniffing, no referrer to other
/// sites; HTML pages also get the `Content-Security-Policy` (see
/// [`Config::page_security_policy`](crate::server::platform::config::Config::page_security_policy)).
///
/// Each `GET` carries a fresh [`Nonce`] in its extensions; the page
/// renderer marks its inline scripts with it (see [`page_nonce`]) and the
/// policy allows exactly that nonce, so a script injected into a page, or
/// one from a previous response, does not run.
async fn security_headers(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    use axum::http::{header, HeaderValue, Method};
    let nonce = (req.method() == Method::GET).then(Nonce::new);
    if let Some(nonce) = &nonce {
        req.extensions_mut().insert(nonce.clone());
    }
    let mut response = next.run(req).await;
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if is_page {
        // Pages carry per-user data and a one-time nonce: never stored.
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        // A page without a nonce (not a GET) may run no inline script.
        let nonce = nonce.map_or_else(|| "none".to_owned(), |n| n.to_string());
        if let Ok(policy) = HeaderValue::from_str(&state.config.page_security_policy(&nonce)) {
            headers.insert(header::CONTENT_SECURITY_POLICY, policy);
        }
    }
    response
}

/// The nonce `security_headers` chose for the request being rendered, for
/// the page renderer's context (which would otherwise make up its own that
/// the policy does not name).
pub fn page_nonce(parts: &axum::http::request::Parts) -> Option<Nonce> {
    parts.extensions.get::<Nonce>().cloned()
}

/// Server functions whose arguments cannot even be decoded never reach
/// their body, and Leptos answers them with a 500 whatever the error. They
/// are the caller's fault (a `BadRequest` in the decoder's words, see
/// `ApiError`'s `FromServerFnError`): each is re-labelled with its own
/// status, so clients and logs see a client error.
/// 400 for a request carrying `Authorization` more than once: the token
/// read here is the first, a proxy or log in front may read another, and
/// a credential that depends on who reads it is no credential.
async fn one_authorization(req: Request, next: Next) -> Response {
    let given = req.headers().get_all(axum::http::header::AUTHORIZATION);
    if given.iter().nth(1).is_some() {
        return ServerError::from(ApiError::BadRequest(
            "Authorization may be given once; this request carries it more than once.".into(),
        ))
        .into_response();
    }
    next.run(req).await
}

async fn malformed_calls_are_client_errors(req: Request, next: Next) -> Response {
    let is_rpc = req.uri().path().starts_with(&format!("{RPC_PREFIX}/"));
    let response = next.run(req).await;
    if !is_rpc || response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(ApiError::Internal)).into_response();
    };
    if let Ok(err) = serde_json::from_slice::<ApiError>(&bytes) {
        if let Some(status) = StatusCode::from_u16(err.status())
            .ok()
            .filter(StatusCode::is_client_error)
        {
            tracing::info!(reason = %err, "malformed server-function call");
            parts.status = status;
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// The current `tool-bindings.json` as a file, for signed-in admins (the
/// page's download link; scripts use `GET /api/bindings` with a key).
async fn download_bindings(
    State(state): State<AppState>,
    user: Option<axum::Extension<auth::AuthUser>>,
) -> Result<Response, ServerError> {
    let user = user.ok_or(ApiError::Unauthenticated)?;
    user.0.require(crate::domain::user::Role::Admin)?;
    let current = crate::server::store::bindings::current(&state.db)
        .await?
        .ok_or_else(|| ApiError::NotFound("Tool bindings".into()))?;
    let body = serde_json::to_string_pretty(&current.bindings).unwrap_or_default();
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/json"),
            (
                axum::http::header::CONTENT_DISPOSITION,
                "attachment; filename=\"tool-bindings.json\"",
            ),
        ],
        body,
    )
        .into_response())
}

/// Liveness: answers 200 when the server can reach its database, 503 if not.
/// In a cluster it also reports the event channel (`events`), and answers
/// 503 while its listener is not connected: this instance's watchers would
/// miss other instances' events.
async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<serde_json::Value>) {
    let database = match crate::server::platform::db::backend(&state.db) {
        crate::server::platform::db::Backend::Sqlite => "sqlite",
        crate::server::platform::db::Backend::Postgres => "postgres",
    };
    match crate::server::store::ping(&state.db).await {
        Ok(_) => match &state.cluster {
            None => (
                StatusCode::OK,
                Json(serde_json::json!({ "status": "ok", "database": database })),
            ),
            Some(cluster) => {
                let (status, word) = if cluster.listening() {
                    (StatusCode::OK, "ok")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "event channel unavailable")
                };
                let body = serde_json::json!({
                    "status": word, "database": database, "events": cluster.health(),
                });
                (status, Json(body))
            }
        },
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({ "status": "database unavailable", "database": database })),
            )
        }
    }
}
