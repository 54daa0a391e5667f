//! The one door through which a credential that is no longer good gives
//! back what it holds open: an API key revoked, an account disabled or
//! given another role. Checking a credential on each request is not
//! enough for a connection that stays open — an event stream, an MCP
//! session — so these end at once: every stream counted under the
//! credential (`user:<id>` also counts the streams of the account's keys)
//! and its workflow-MCP sessions. A client that reconnects is asked again
//! who it is and gets what its credential allows now (nothing, or what the
//! new role may see).
//!
//! In a cluster a stream or MCP session lives on one instance, so the
//! others are told on the events channel ([`Cluster::cut_off`]) and each
//! ends its own ([`here`]). A notification lost while an instance's
//! listener was reconnecting is made good by [`recheck`]: the instance
//! asks the database about every credential it holds streams for.
//!
//! [`Cluster::cut_off`]: crate::server::cluster::Cluster::cut_off

use crate::server::http::streams::{api_key_key, user_key};
use crate::server::store::{accounts, api_keys};
use crate::server::AppState;

/// A credential whose open connections can be ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// An account: its cookie's streams and its keys' streams.
    Account(i64),
    /// One API key's streams.
    ApiKey(i64),
}

impl Holder {
    /// The key its streams and MCP sessions are counted under.
    pub fn key(self) -> String {
        match self {
            Holder::Account(id) => user_key(id),
            Holder::ApiKey(id) => api_key_key(id),
        }
    }

    /// Reads [`Holder::key`] back (`None` for any other key).
    pub fn parse(key: &str) -> Option<Self> {
        let (kind, id) = key.split_once(':')?;
        let id = id.parse().ok()?;
        match kind {
            "user" => Some(Holder::Account(id)),
            "key" => Some(Holder::ApiKey(id)),
            _ => None,
        }
    }
}

/// Ends what `holder` holds open, on this instance and (in a cluster) on
/// every other. Returns how many streams were open here.
pub async fn cut_off(state: &AppState, holder: Holder) -> usize {
    let key = holder.key();
    let streams = here(state, &key);
    if let Some(cluster) = &state.cluster {
        cluster.cut_off(&key).await;
    }
    streams
}

/// Ends the streams and workflow-MCP sessions counted under `key` on this
/// instance; how many streams were open.
pub fn here(state: &AppState, key: &str) -> usize {
    state.workflow_mcp.close_owner(key);
    state.streams.close(key)
}

/// After this instance may have missed being told (its cluster listener
/// reconnected): ends the streams of every account or key it holds them
/// for that is no longer good. A role change cannot be seen afterwards,
/// only a disabled account or a revoked key.
pub async fn recheck(state: &AppState) {
    let mut keys = state.streams.keys_starting("user:");
    keys.extend(state.streams.keys_starting("key:"));
    for key in keys {
        let live = match Holder::parse(&key) {
            Some(Holder::Account(id)) => accounts::is_active(&state.db, id).await,
            Some(Holder::ApiKey(id)) => api_keys::is_live(&state.db, id).await,
            None => continue,
        };
        match live {
            Ok(true) => {}
            Ok(false) => {
                let ended = here(state, &key);
                tracing::info!(holder = %key, streams = ended, "ended the streams of a credential that ended while this instance was not listening");
            }
            Err(e) => {
                tracing::error!(error = %e, holder = %key, "checking a credential again failed")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holders_key_reads_back_and_other_keys_do_not() {
        for holder in [Holder::Account(7), Holder::ApiKey(42)] {
            assert_eq!(Holder::parse(&holder.key()), Some(holder));
        }
        for other in ["session:abc", "user:", "key:x", "user", ""] {
            assert_eq!(Holder::parse(other), None, "{other}");
        }
    }
}
