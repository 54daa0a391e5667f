//! Plugin relay across instances (PostgreSQL; docs/architecture.md,
//! "Several instances"): an agent's call of a plugin tool on one instance
//! reaches the session's plugin streams on every instance, and the
//! plugin's answer, POSTed to any instance, returns to the agent.
//!
//! - The waiting call is a row of `plugin_relay_calls` (arguments and
//!   deadline travel there) and a notification on [`CHANNEL`] carrying its
//!   id; every other instance reads it and offers it to its streams of the
//!   session (`waiting::Relays::offer`), and a stream opening anywhere is
//!   offered the session's waiting rows.
//! - An answer is taken once, by a guarded `UPDATE … WHERE answer IS NULL`
//!   (before the deadline), which notifies the channel; the waiting
//!   instance takes the answer from the row (deleting it) and wakes its
//!   agent. At its deadline the agent's instance deletes the row and uses
//!   an answer that came unannounced, so a lost notification costs time,
//!   never the answer.
//! - Plugin sets and their availability updates, and the session's end,
//!   are told on the same channel.
//! - "Is a plugin connected?" asks the database (`presence`).
//!
//! Notifications are handled in order by one task, off the listener's.
//! On SQLite none of this runs: `AppState::cluster` is `None`.

use super::notice::{decode, encode, parse, Notice};
use super::offer::{Answer, Offer, Waiting};
use super::{check_all, Listening, Loaded};
use crate::domain::plugin::Schema;
use crate::server::cluster::Cluster;
use crate::server::store::plugin_relay::{self as store, WaitingRow};
use crate::server::{AppState, ServerError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The `NOTIFY` channel of relayed calls, answers, plugin changes and
/// ends.
pub const CHANNEL: &str = "switchboard_plugins";

/// How long an agent whose deadline passed just as its answer was being
/// taken waits for it.
const TAKING: Duration = Duration::from_secs(5);

/// What the listener heard for this module, queued for its task.
pub enum Heard {
    /// A notification on [`CHANNEL`].
    Notice(String),
    /// The listener reconnected: notifications may have been lost.
    Recover,
}

/// The cluster `state` is part of (this module runs only in one).
fn cluster(state: &AppState) -> Result<&Arc<Cluster>, ServerError> {
    state.cluster.as_ref().ok_or_else(|| {
        ServerError::Config("the plugin relay across instances needs PostgreSQL".into())
    })
}

/// Relays call `offer` of `session`, whose agent waits here, to the
/// session's plugin streams on every instance: `None` when no plugin is
/// connected anywhere (nor left less than the grace ago).
pub(super) async fn relay(
    state: &AppState,
    session: &str,
    offer: &Offer<'_>,
    now_ms: i64,
) -> Result<Option<oneshot::Receiver<Answer>>, ServerError> {
    if !super::presence::connected(state, session).await? {
        return Ok(None);
    }
    let cluster = cluster(state)?;
    let relays = state.plugins.relays();
    // Waiting here before the row exists, so an answer however quick
    // finds its agent.
    let rx = relays.wait(session, state.hub.base(), offer);
    let row = WaitingRow {
        call_id: offer.call_id,
        session_id: session.to_owned(),
        tool: offer.tool.to_owned(),
        arguments: offer.arguments.to_string(),
        deadline_ms: offer.deadline_ms,
    };
    let told = format!("call {} {}", cluster.instance(), offer.call_id);
    if let Err(e) = store::insert_call(&state.db, &row, CHANNEL, &told).await {
        relays.give_up(session, offer.call_id);
        return Err(e.into());
    }
    // The row exists: the plugin's answer can be taken.
    relays.send_call(session, offer.call_id, now_ms);
    Ok(Some(rx))
}

/// The agent of call `call_id` stops waiting (its deadline passed, or its
/// answer channel closed): the row goes, and an answer that came without
/// reaching it (a lost notification) is returned.
pub(super) async fn give_up(
    state: &AppState,
    session: &str,
    call_id: i64,
    rx: oneshot::Receiver<Answer>,
) -> Option<Answer> {
    if !state.plugins.relays().give_up(session, call_id) {
        // The listener took the call just now and is reading its answer.
        if let Ok(Ok(answer)) = tokio::time::timeout(TAKING, rx).await {
            return Some(answer);
        }
    }
    match store::give_up(&state.db, call_id).await {
        Ok(answer) => answer.map(|text| decode(&text)),
        Err(e) => {
            tracing::error!(error = %e, call_id, "reading a relayed call's answer failed");
            None
        }
    }
}

/// The plugin's answer to call `call_id` of `session`, POSTed here: taken
/// if the call waits (on any instance) and nobody answered it; false
/// otherwise (answered, past its deadline, another session's, none).
pub(super) async fn answer(
    state: &AppState,
    session: &str,
    call_id: i64,
    answer: &Answer,
) -> Result<bool, ServerError> {
    let told = format!("answer {call_id} {session}");
    let now = state.clock.now_ms();
    let text = encode(answer);
    Ok(store::answer(&state.db, session, call_id, &text, now, CHANNEL, &told).await?)
}

/// Opens a plugin stream here: offered the session's calls waiting on
/// every instance, and counted in the database before it is answered, so
/// an agent on another instance sees the plugin connected.
pub(super) async fn listen(state: &AppState, session: &str) -> Result<Listening, ServerError> {
    let relays = state.plugins.relays();
    let base = state.hub.base();
    // Kept from now on: a call notified while the rows are read is taken
    // in by the listener, and the read does not offer it twice.
    relays.track(session, base);
    let now = state.clock.now_ms();
    let elsewhere = store::waiting_calls(&state.db, session, now)
        .await?
        .into_iter()
        .map(waiting)
        .collect();
    let listening = relays.listen_with(session, base, &state.clock, elsewhere);
    let (written, done) = oneshot::channel();
    if relays.changed(session, Some(written)) {
        let _ = done.await;
    }
    Ok(listening)
}

fn waiting(row: WaitingRow) -> Waiting {
    Waiting {
        call_id: row.call_id,
        tool: row.tool,
        arguments: serde_json::from_str(&row.arguments).unwrap_or(Value::Null),
        deadline_ms: row.deadline_ms,
    }
}

/// `session`'s plugin set changed here: every other instance loads it
/// again and sends `update` (an availability update's event name and
/// JSON), if any, to its streams of the session. A failure is logged (the
/// change is stored).
pub(super) async fn tools_changed(state: &AppState, session: &str, update: Option<(&str, &str)>) {
    let Some(cluster) = &state.cluster else {
        return;
    };
    let me = cluster.instance();
    let told = match update {
        Some((name, json)) => {
            let prefix = format!("update {me} ");
            store::store_frame(&state.db, session, name, json, CHANNEL, &prefix).await
        }
        None => store::notify(&state.db, CHANNEL, &format!("tools {me} {session}")).await,
    };
    if let Err(e) = told {
        tracing::error!(error = %e, session, "telling other instances of a plugin change failed");
    }
}

/// `session` ended here: its waiting calls and stream counts go, and every
/// other instance forgets its plugin (its streams there end, its agents
/// waiting there hear the session ended). A failure is logged.
pub(super) async fn session_ended(state: &AppState, session: &str) {
    if state.cluster.is_none() {
        return;
    }
    let told = format!("end {session}");
    if let Err(e) = store::end_session(&state.db, session, CHANNEL, &told).await {
        tracing::error!(error = %e, session, "telling other instances of a session's end failed");
    }
}

/// Handles what the listener heard, in order, until the queue closes.
pub(super) async fn handle_all(state: AppState, mut heard: mpsc::UnboundedReceiver<Heard>) {
    while let Some(item) = heard.recv().await {
        let outcome = match &item {
            Heard::Notice(text) => handle(&state, text).await,
            Heard::Recover => recover(&state).await,
        };
        if let Err(e) = outcome {
            tracing::error!(error = %e, "a plugin relay notification could not be handled");
        }
    }
}

/// One notification on [`CHANNEL`].
async fn handle(state: &AppState, text: &str) -> Result<(), ServerError> {
    let Some(notice) = parse(text) else {
        tracing::warn!("an unknown notification on the plugin channel was ignored");
        return Ok(());
    };
    let me = cluster(state)?.instance();
    let relays = state.plugins.relays();
    match notice {
        Notice::Call { from, call_id } if from != me => {
            if let Some(row) = store::waiting_call(&state.db, call_id).await? {
                let session = row.session_id.clone();
                relays.offer(&session, waiting(row), state.clock.now_ms());
            }
        }
        Notice::Answer { call_id, session } => {
            if let Some(agent) = relays.answered(session, call_id) {
                // The agent here wakes with the answer; without one (taken
                // by its deadline meanwhile), it reads the row itself.
                if let Some(text) = store::take_answer(&state.db, call_id).await? {
                    let _ = agent.send(decode(&text));
                }
            }
        }
        Notice::Update { from, frame } if from != me => {
            if let Some((session, name, json)) = store::frame(&state.db, frame).await? {
                reload(state, &session).await?;
                relays.notify(&session, &name, &json);
            }
        }
        Notice::Tools { from, session } if from != me => reload(state, session).await?,
        Notice::End { session } => state.plugins.forget(session),
        Notice::Call { .. } | Notice::Update { .. } | Notice::Tools { .. } => {}
    }
    Ok(())
}

/// Loads `session`'s plugin set as stored (another instance changed it),
/// checking only schemas not checked here already; an ended session is
/// forgotten.
async fn reload(state: &AppState, session: &str) -> Result<(), ServerError> {
    let Some(set) = crate::server::store::plugins::get(&state.db, session).await? else {
        state.plugins.forget(session);
        return Ok(());
    };
    let previous = state.plugins.get(session);
    let mut schemas = std::collections::HashMap::new();
    let mut check: Vec<(String, Schema)> = Vec::new();
    for tool in &set.tools {
        let name = &tool.definition.name;
        let known = previous.as_ref().and_then(|p| {
            let before = p.set.tool(name)?;
            (before.definition.parameters.json() == tool.definition.parameters.json())
                .then(|| p.schemas.get(name).cloned())
                .flatten()
        });
        match known {
            Some(v) => {
                schemas.insert(name.clone(), v);
            }
            None => check.push((name.clone(), tool.definition.parameters.clone())),
        }
    }
    for (name, checked) in check_all(check).await? {
        if let Ok(v) = checked {
            schemas.insert(name, v);
        }
    }
    state
        .plugins
        .put(session, Arc::new(Loaded::new(set, schemas)));
    Ok(())
}

/// After the listener reconnected: agents here whose answers came
/// meanwhile get them, streams here are offered the calls they missed,
/// and plugin sets are loaded again (sessions that ended are forgotten).
async fn recover(state: &AppState) -> Result<(), ServerError> {
    let relays = state.plugins.relays();
    for (session, call_id) in relays.waiters() {
        if let Some(text) = store::take_answer(&state.db, call_id).await? {
            if let Some(agent) = relays.answered(&session, call_id) {
                let _ = agent.send(decode(&text));
            }
        }
    }
    let now = state.clock.now_ms();
    for session in relays.listened() {
        for row in store::waiting_calls(&state.db, &session, now).await? {
            relays.offer(&session, waiting(row), now);
        }
    }
    for session in state.plugins.sessions() {
        reload(state, &session).await?;
    }
    Ok(())
}
