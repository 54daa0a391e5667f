//! The HTTP surface: pages, server functions, health check and static files,
//! with the middleware every request passes through.
//!
//! `app` is separate from `main` so tests can serve the real application on a
//! random port with a throwaway database.

use crate::app::{shell, App};
use crate::server::{auth, AppState};
use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;
use axum::{Json, Router};
use leptos::prelude::provide_context;
use leptos_axum::{file_and_error_handler_with_context, generate_route_list, LeptosRoutes};
use std::time::Duration;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Longest a request may take to produce its response head. Streams (SSE)
/// are unaffected once their headers are sent.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds the whole application for `state`.
pub fn app(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let page_state = state.clone();
    let fallback_state = state.clone();
    let shell_options = state.leptos_options.clone();
    Router::new()
        .route("/healthz", get(healthz))
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(page_state.clone()),
            move || shell(shell_options.clone()),
        )
        .fallback(file_and_error_handler_with_context::<AppState, _>(
            move || provide_context(fallback_state.clone()),
            shell,
        ))
        .layer(from_fn(auth::guard_pages))
        .layer(from_fn_with_state(state.clone(), auth::check_origin))
        .layer(from_fn_with_state(state.clone(), auth::resolve_user))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Liveness: answers 200 when the server can reach its database, 503 if not.
async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<serde_json::Value>) {
    match sqlx::query_scalar::<_, i64>("SELECT 1")
        .fetch_one(&state.db)
        .await
    {
        Ok(_) => (StatusCode::OK, Json(serde_json::json!({ "status": "ok" }))),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({ "status": "database unavailable" })),
            )
        }
    }
}
