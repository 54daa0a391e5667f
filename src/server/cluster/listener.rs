//! Every instance's ears: one `LISTEN` connection on the events and rules
//! channels. Each session event is delivered to this instance's hub with
//! the number the database gave it, once and in order (a missed one is
//! read from `session_events` first); list and workflow changes go to
//! their watchers here; another instance's rules change makes this one
//! reload its rules; a credential that ended elsewhere has its streams
//! here ended.
//!
//! `PgListener` reconnects by itself, and whatever was notified meanwhile
//! is lost: after a reconnect the listener reads, for every session
//! watched here, the events after the last one it delivered, closes the
//! channels of sessions that ended meanwhile and reloads the rules.

use super::payload::{self, ListFrame, Notice};
use super::{Cluster, EVENTS_CHANNEL, RULES_CHANNEL};
use crate::server::accounts::cutoff;
use crate::server::agent::hub::relay::Delivery;
use crate::server::agent::hub::{Hub, ListChange};
use crate::server::agent::plugins;
use crate::server::cluster::order::Admit;
use crate::server::store::cluster as store;
use crate::server::store::stream_leases::LISTENER_PREFIX;
use crate::server::AppState;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// How long to wait before connecting again after the listener's
/// connection failed.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// Most events read from the table at once when filling a gap.
const FILL_PAGE: i64 = 1_024;

/// Listens until the task is dropped, reconnecting after a failure.
/// The first connection is the one [`super::connect`] made.
pub(super) async fn run(state: AppState, cluster: Arc<Cluster>) {
    let mut first = cluster.take_first_listener();
    loop {
        let connected = match first.take() {
            Some(listener) => Ok(listener),
            None => connect(&cluster.url, &cluster.instance)
                .await
                .inspect(|_| cluster.health.up()),
        };
        match connected {
            Ok(mut listener) => {
                if cluster.health.reconnected() {
                    recover(&state, &cluster).await;
                }
                listen(&state, &cluster, &mut listener).await;
            }
            Err(e) => tracing::warn!(error = %e, "the cluster's listener could not connect"),
        }
        cluster.health.down();
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}

/// A listener on both channels, on a connection of its own named
/// `switchboard-listener-<instance>` (`pg_stat_activity` shows whose it is).
pub(super) async fn connect(url: &str, instance: &str) -> Result<PgListener, sqlx::Error> {
    let options =
        PgConnectOptions::from_str(url)?.application_name(&format!("{LISTENER_PREFIX}{instance}"));
    // One connection, kept for as long as it lives (what
    // `PgListener::connect` does with a URL).
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .max_lifetime(None)
        .idle_timeout(None)
        .connect_with(options)
        .await?;
    let mut listener = PgListener::connect_with(&pool).await?;
    listener
        .listen_all([EVENTS_CHANNEL, RULES_CHANNEL, plugins::RELAY_CHANNEL])
        .await?;
    Ok(listener)
}

/// Handles notifications until the connection fails for good; a
/// connection lost and re-established in between (`Ok(None)`) is
/// recovered from.
async fn listen(state: &AppState, cluster: &Cluster, listener: &mut PgListener) {
    loop {
        match listener.try_recv().await {
            Ok(Some(notice)) => {
                cluster.health.heard();
                if notice.channel() == RULES_CHANNEL {
                    if notice.payload() != cluster.instance {
                        cluster.rules_wanted.notify_one();
                    }
                } else if notice.channel() == plugins::RELAY_CHANNEL {
                    plugins::heard(state, notice.payload());
                } else {
                    handle(state, cluster, notice.payload()).await;
                }
            }
            Ok(None) => {
                tracing::warn!("the cluster's listener reconnected; reading what it missed");
                recover(state, cluster).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "the cluster's listener lost its connection");
                return;
            }
        }
    }
}

/// Delivers one events-channel notification here.
pub(super) async fn handle(state: &AppState, cluster: &Cluster, text: &str) {
    let hub = &state.hub;
    let Some(notice) = payload::parse(text) else {
        tracing::warn!("an unknown notification on the events channel was ignored");
        return;
    };
    let outcome = match notice {
        Notice::Event {
            session,
            seq,
            frame,
        } => event(hub, cluster, &session, seq, frame).await,
        Notice::Close { session } => {
            hub.close_here(&session);
            Ok(())
        }
        Notice::List(frame) => {
            hub.deliver_list(list_change(frame));
            Ok(())
        }
        Notice::Workflow { id, name, json } => {
            hub.deliver_workflow(&id, &name, &json);
            Ok(())
        }
        Notice::ListStored(id) | Notice::WorkflowStored(id) => stored(hub, cluster, id).await,
        Notice::CutOff { holder } => {
            cutoff::here(state, &holder);
            Ok(())
        }
    };
    if let Err(e) = outcome {
        tracing::error!(error = %e, "a relayed frame could not be read from the database");
    }
}

/// Event `seq` of `session`: delivered if it is the next one here (read
/// from the table when it was too large to carry), after the ones missed
/// before it.
async fn event(
    hub: &Hub,
    cluster: &Cluster,
    session: &str,
    seq: u64,
    frame: Option<(String, String)>,
) -> Result<(), sqlx::Error> {
    let after = match frame {
        Some((name, json)) => match hub.deliver(session, seq, &name, &json) {
            Delivery::Gap { after } => after,
            Delivery::Delivered | Delivery::NoChannel | Delivery::Duplicate => return Ok(()),
        },
        None => match hub.admits(session, seq) {
            Some(Admit::Next) => seq - 1,
            Some(Admit::Gap { after }) => after,
            Some(Admit::Duplicate) | None => return Ok(()),
        },
    };
    fill(hub, cluster, session, after, Some(seq)).await
}

/// Delivers `session`'s stored events after `after` (up to `upto`, or all)
/// here. If the table no longer has one (pruned), this instance's
/// watchers cannot be given it: their streams end, and they reconnect
/// with `Last-Event-ID` for a snapshot.
pub(super) async fn fill(
    hub: &Hub,
    cluster: &Cluster,
    session: &str,
    mut after: u64,
    upto: Option<u64>,
) -> Result<(), sqlx::Error> {
    let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    loop {
        let rows = store::events_after(
            &cluster.db,
            session,
            to_i64(after),
            upto.map(to_i64),
            FILL_PAGE,
        )
        .await?;
        let full = rows.len() as i64 == FILL_PAGE;
        for row in &rows {
            let seq = u64::try_from(row.seq).unwrap_or_default();
            hub.deliver(session, seq, &row.name, &row.json);
            after = seq;
        }
        if !full {
            break;
        }
    }
    if let Some(upto) = upto {
        if hub.last_id(session).is_some_and(|last| last < upto) {
            tracing::warn!(
                session,
                upto,
                "relayed events were pruned before delivery; watchers reconnect"
            );
            hub.close_here(session);
        }
    }
    Ok(())
}

/// A list or workflow change too large to carry, read from its table.
async fn stored(hub: &Hub, cluster: &Cluster, id: i64) -> Result<(), sqlx::Error> {
    let Some(row) = store::frame(&cluster.db, id).await? else {
        return Ok(());
    };
    if row.kind == "workflow" {
        hub.deliver_workflow(&row.key, &row.name, &row.json);
    } else {
        hub.deliver_list(list_change(ListFrame {
            owners: payload::parse_owners(&row.owners),
            session: row.key,
            name: row.name,
            json: row.json,
        }));
    }
    Ok(())
}

/// A relayed list change as the hub's.
fn list_change(frame: ListFrame) -> ListChange {
    ListChange {
        session: frame.session,
        owners: frame.owners,
        name: frame.name,
        json: frame.json,
    }
}

/// After the connection was lost: every watched session's missed events,
/// the channels of sessions that ended meanwhile closed, the rules
/// reloaded (a change may have been missed), the streams of credentials
/// that ended meanwhile ended.
pub(super) async fn recover(state: &AppState, cluster: &Cluster) {
    let hub = &state.hub;
    for (session, last) in hub.positions() {
        if let Err(e) = fill(hub, cluster, &session, last, None).await {
            tracing::error!(error = %e, session, "reading missed events failed");
        }
    }
    match store::not_open(&cluster.db, &hub.channel_ids()).await {
        Ok(ended) => ended.iter().for_each(|session| hub.close_here(session)),
        Err(e) => tracing::error!(error = %e, "reading which sessions ended failed"),
    }
    cluster.rules_wanted.notify_one();
    plugins::heard_again(state);
    cutoff::recheck(state).await;
}
