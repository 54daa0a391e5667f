//! `GET /api/lessons/{id}/prompt`: what an agent backend sends its tutor
//! model for a lesson; and `GET /lessons/{id}/sessions.csv`, the teacher's
//! download of the lesson's runs.

use crate::domain::declaration::export::export;
use crate::domain::declaration::DeclarationFormat;
use crate::domain::lesson::optimise::OptimiseMode;
use crate::domain::lesson::prompt::build;
use crate::error::ApiError;
use crate::server::http::extract::{path_id, Key, LessonsRead, QueryParams, Teacher};
use crate::server::{platform::tokens, store, AppState, ServerError};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// Lesson routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/prompt", get(prompt))
        .route("/lessons/{id}/sessions.csv", get(runs_csv))
}

/// Query of the prompt endpoint.
#[derive(Debug, Deserialize)]
pub struct PromptQuery {
    /// `gemini` (default), `openai` or `anthropic`.
    format: Option<String>,
    /// `normal` (default), `aggressive` or `off`.
    optimise: Option<String>,
}

/// What the backend gets.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// The assembled system prompt.
    pub system_prompt: String,
    /// Declarations of the enabled tools in the requested provider's shape.
    pub tools: serde_json::Value,
    /// Quick estimate (characters / 4) of prompt and declarations.
    pub estimated_tokens: usize,
    /// Exact `o200k_base` count of the same text as `estimated_tokens`, so
    /// the two can be compared.
    pub exact_tokens: usize,
    /// Exact `o200k_base` token count of the system prompt alone.
    pub token_count: usize,
}

async fn prompt(
    key: Key<LessonsRead>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    QueryParams(query): QueryParams<PromptQuery>,
) -> Result<Json<PromptResponse>, ServerError> {
    let id = path_id(&id, "id")?;
    let format = DeclarationFormat::parse(query.format.as_deref().unwrap_or("gemini"))?;
    let optimise = match query.optimise.as_deref().unwrap_or("normal") {
        "normal" => Some(OptimiseMode::Normal),
        "aggressive" => Some(OptimiseMode::Aggressive),
        "off" => None,
        _ => return Err(ApiError::invalid("optimise", "must be normal, aggressive or off").into()),
    };
    let lesson = store::lessons::get_for_key(&state.db, key.viewer(), id).await?;
    let built = build(&lesson.draft.prompt_input(optimise));
    let token_count = tokens::count(&built.system_prompt).await?;
    let exact_tokens = tokens::count(&built.token_text()).await?;
    Ok(Json(PromptResponse {
        tools: export(&built.declarations, format),
        estimated_tokens: built.estimated_tokens,
        exact_tokens,
        token_count,
        system_prompt: built.system_prompt,
    }))
}

/// The lesson's runs as a CSV file, for the signed-in teacher who owns it
/// (or an admin); another teacher's lesson is 404, as everywhere.
async fn runs_csv(
    Teacher(user): Teacher,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let id = path_id(&id, "id")?;
    let lesson = store::lessons::get(&state.db, &user.0, id).await?;
    let runs = crate::server::lessons::runs::runs(&state, &lesson).await?;
    let body = crate::server::lessons::runs::csv(&runs)?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"lesson-{id}-sessions.csv\""),
            ),
        ],
        body,
    )
        .into_response())
}
