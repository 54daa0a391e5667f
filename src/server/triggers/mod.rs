//! Workflows that start by themselves: each start trigger type's door
//! opens sessions through [`start`], so every session a trigger opens is
//! opened the same way and keeps what started it.
//!
//! The decisions (does this event pass the filter rules?) are pure, in
//! `domain::start_trigger`; this module adds what needs the server: the
//! trigger in force (from the rules, so a webhook costs no query for it),
//! the hook secret that webhook and inbound-call URLs carry (only its hash
//! is stored), its throttle, a chat message's answer (the agent runner's
//! turn), and the scheduler ([`schedule`]).

pub mod schedule;

use crate::domain::declaration::ultravox::HttpTarget;
use crate::domain::declaration::DeclarationFormat;
use crate::domain::session_origin::Opener;
use crate::domain::workflow_chat::{ChatMessage, ChatRole};
use crate::domain::workflow_def::Trigger;
use crate::error::ApiError;
use crate::server::agent::listing::Listing;
use crate::server::agent::runner;
use crate::server::agent::sessions::{self, Opened};
use crate::server::auth::{random_token, throttle, token_hash};
use crate::server::store::workflow_triggers as store;
use crate::server::ultravox;
use crate::server::{AppState, ServerError};
use serde_json::Value;
use std::net::IpAddr;

/// What a hook secret starts with, so a leaked one is recognisable.
pub const HOOK_SECRET_PREFIX: &str = "wh_";

/// Workflow `id`'s start trigger in force, if it has one.
pub fn trigger_of(state: &AppState, id: &str) -> Option<Trigger> {
    state.rules().definition(id)?.trigger.clone()
}

/// Opens a session in workflow `id` for `opener` (Switchboard runs the
/// built-in tools, as for any session the API opens), within the
/// workflow's start window (429 past it, nothing opened).
pub async fn start(state: &AppState, id: &str, opener: &Opener) -> Result<Opened, ServerError> {
    state
        .budgets
        .admit_start(
            id,
            state.clock.now(),
            state.config.workflow_starts_per_minute,
        )
        .await?;
    let opened = sessions::open(state, id, opener, true).await?;
    tracing::info!(
        workflow = id,
        session = %opened.id,
        started_by = ?opener.started_by,
        "start trigger opened a session"
    );
    Ok(opened)
}

/// Makes a new hook secret for workflow `id`, replacing any it had, and
/// returns it: the only time it is seen (only its hash is kept).
pub async fn rotate_hook_secret(state: &AppState, id: &str) -> Result<String, ServerError> {
    crate::server::workflows::get(state, id).await?;
    let secret = format!("{HOOK_SECRET_PREFIX}{}", random_token());
    store::set_hook_secret(&state.db, id, &token_hash(&secret), state.clock.now()).await?;
    Ok(secret)
}

/// The URL a hook secret is used at, absolute when the public origin is
/// configured (platforms call it from their own servers).
pub fn hook_url(state: &AppState, id: &str, secret: &str) -> String {
    let origin = state.config.public_origin.as_deref().unwrap_or("");
    format!("{origin}/api/hooks/{id}/{secret}")
}

/// Lets a hook request in when `secret` is workflow `id`'s and its
/// trigger is of type `kind`: the trigger. Anything else is 404 — an
/// unknown workflow, another trigger type and a wrong secret alike, so the
/// answer tells a guesser nothing — and counts like a wrong password
/// against the workflow and the caller's address (`auth::throttle`):
/// past the limit, 429 before any secret is checked.
pub async fn admit_hook(
    state: &AppState,
    id: &str,
    secret: &str,
    kind: &str,
    address: Option<IpAddr>,
) -> Result<Trigger, ServerError> {
    let keys = throttle::keys(&format!("hook:{id}"), address);
    let now = state.clock.now();
    if let Some(wait) = state.login_throttle.wait(&keys, now).await? {
        return Err(ApiError::TooManyAttempts {
            retry_after_secs: wait,
        }
        .into());
    }
    let trigger = trigger_of(state, id).filter(|t| t.trigger_type_id == kind);
    let known = match &trigger {
        Some(_) if secret.starts_with(HOOK_SECRET_PREFIX) => {
            store::hook_secret_matches(&state.db, id, &token_hash(secret)).await?
        }
        _ => false,
    };
    match trigger {
        Some(trigger) if known => Ok(trigger),
        _ => {
            // Counted after the fact: a right secret never waits on the
            // throttle's lock of a busy hook.
            state.login_throttle.begin(&keys, now).await?;
            tracing::info!(workflow = %crate::domain::limits::excerpt(id), ?address, "hook refused");
            Err(ApiError::NotFound("Hook".into()).into())
        }
    }
}

/// What a voice platform needs to run the call session `opened` just
/// opened: its tools now and system prompt (the workflow's, with its
/// current step's), from the one listing every door renders
/// (`GET /api/sessions/{id}/tools`), in `format`'s shape. For Ultravox,
/// the body of a create-call request from the shared builder
/// (`ultravox::session_config`): `systemPrompt`, `selectedTools` (HTTP
/// tools pointing at Switchboard when `PUBLIC_ORIGIN` is set) and
/// `metadata` naming the session.
pub async fn call_config(
    state: &AppState,
    opened: &Opened,
    format: DeclarationFormat,
) -> Result<Value, ServerError> {
    let row = sessions::get(state, &opened.id).await?;
    let listing = Listing::of(state, &row).await?;
    if format == DeclarationFormat::Ultravox {
        let target = state
            .config
            .public_origin
            .as_deref()
            .map(|origin| HttpTarget {
                origin,
                session: &opened.id,
                token: &opened.token,
            });
        return Ok(ultravox::session_config(
            &state.rules(),
            &row,
            &listing,
            target.as_ref(),
        ));
    }
    Ok(listing.rest(format))
}

/// The agent runner's whole turn on `text`, the first message of session
/// `opened` (a `chat_message` start): the history with the model's tool
/// calls, their results and its answer. A model that fails or is slow
/// becomes the assistant's words (the runner's rule), never an error here.
pub async fn answer_message(
    state: &AppState,
    opened: &Opened,
    text: &str,
) -> Result<Vec<ChatMessage>, ServerError> {
    let row = sessions::get(state, &opened.id).await?;
    let first = vec![ChatMessage::text(ChatRole::User, text)];
    Ok(runner::run_turn(state, row, first).await?.messages)
}
