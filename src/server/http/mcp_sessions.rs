//! MCP sessions, counted per credential. rmcp's in-memory session manager
//! keeps every session an `initialize` opens (a task, its channels, a
//! tool-change listener) until it idles out, whoever opened it; this one
//! wraps it so each session belongs to the credential that opened it (an
//! agent session's token, an API key, a signed-in admin):
//!
//! - a credential holds at most `MCP_SESSIONS_PER_CREDENTIAL` per
//!   endpoint, on every instance together: the HTTP entry reserves a slot
//!   before rmcp runs `initialize` ([`reserve`]) and answers 429 when there
//!   is none, so a burst cannot overshoot. The slot is a permit of the
//!   server's [`StreamCounter`] (the stream caps' counter, whose slots are
//!   leased across the instances of a cluster), held by the session until
//!   it closes;
//! - a session is used only by the credential that opened it ([`owns`]);
//! - a session idle for the configured time (`MCP_SESSION_IDLE_SECONDS`)
//!   closes and frees its slot (rmcp closes it through this manager);
//! - all of a credential's sessions can be closed at once ([`close_owner`]):
//!   an agent session that ends closes its MCP sessions.
//!
//! [`reserve`]: McpSessions::reserve
//! [`owns`]: McpSessions::owns
//! [`close_owner`]: McpSessions::close_owner

use crate::error::ApiError;
use crate::server::http::streams::{StreamCounter, StreamPermit};
use crate::server::ServerError;
use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::SessionManager;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

tokio::task_local! {
    /// The slot reserved for the `initialize` being handled on this task:
    /// `create_session` binds it to the session rmcp makes.
    static OPENING: Mutex<Option<Reservation>>;
}

/// The owner name of the MCP sessions an agent session's token opens.
pub fn session_owner(session_id: &str) -> String {
    format!("session:{session_id}")
}

/// The session manager of one MCP endpoint, with owners.
pub struct McpSessions {
    inner: LocalSessionManager,
    owners: Mutex<Owners>,
    /// Where the slots are counted (and, in a cluster, leased).
    slots: Arc<StreamCounter>,
    /// The endpoint's name in its slots' keys (`mcp-<endpoint>:<owner>`).
    endpoint: &'static str,
    cap: usize,
    idle: Duration,
}

#[derive(Default)]
struct Owners {
    /// Each open session: its owner, and the slot it holds.
    of: HashMap<SessionId, (String, StreamPermit)>,
    by: HashMap<String, HashSet<SessionId>>,
}

/// A slot taken for a session about to be opened; given back when dropped
/// unless a session was opened in it.
pub struct Reservation {
    owner: String,
    permit: StreamPermit,
}

/// Why no session was made.
#[derive(Debug, thiserror::Error)]
pub enum McpSessionError {
    /// rmcp's own manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// `initialize` reached the manager without a reserved slot.
    #[error("no MCP session slot was reserved for this request")]
    NoSlot,
}

impl McpSessions {
    /// A manager for `endpoint` allowing `cap` sessions per credential,
    /// counted in `slots`, each closed after `idle` without traffic.
    pub fn new(
        endpoint: &'static str,
        slots: Arc<StreamCounter>,
        cap: usize,
        idle: Duration,
    ) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            owners: Mutex::default(),
            slots,
            endpoint,
            cap,
            idle,
        }
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot for a new session of `owner`, or 429 naming the cap
    /// (on every instance together, in a cluster).
    pub async fn reserve(&self, owner: &str) -> Result<Reservation, ServerError> {
        let key = format!("mcp-{}:{owner}", self.endpoint);
        match self.slots.acquire(&[(key, self.cap)]).await {
            Ok(permit) => Ok(Reservation {
                owner: owner.to_owned(),
                permit,
            }),
            Err(ServerError::Api(ApiError::TooManyStreams { .. })) => Err(ApiError::RateLimited {
                limit: format!(
                    "{} open MCP sessions per credential (end one with DELETE and its Mcp-Session-Id, or let it idle out after {} s)",
                    self.cap,
                    self.idle.as_secs()
                ),
                retry_after_secs: 60,
            }
            .into()),
            Err(e) => Err(e),
        }
    }

    /// Runs `handle` (rmcp answering an `initialize`) with `reservation`
    /// available to the session it opens.
    pub async fn opening<F: std::future::Future>(reservation: Reservation, handle: F) -> F::Output {
        OPENING.scope(Mutex::new(Some(reservation)), handle).await
    }

    /// Whether `id` is an open session of `owner`.
    pub fn owns(&self, owner: &str, id: &str) -> bool {
        self.locked()
            .of
            .get(id)
            .is_some_and(|(opened_by, _)| opened_by == owner)
    }

    /// Open sessions of `owner`.
    pub fn open_for(&self, owner: &str) -> usize {
        self.locked().by.get(owner).map_or(0, HashSet::len)
    }

    /// Closes every session of `owner` (its slots are free at once; the
    /// sessions' tasks end in the background).
    pub fn close_owner(self: &Arc<Self>, owner: &str) {
        let ids: Vec<SessionId> = {
            let mut owners = self.locked();
            let Some(ids) = owners.by.remove(owner) else {
                return;
            };
            for id in &ids {
                owners.of.remove(id);
            }
            ids.into_iter().collect()
        };
        let sessions = self.clone();
        tokio::spawn(async move {
            for id in ids {
                if let Err(e) = sessions.inner.close_session(&id).await {
                    tracing::debug!(error = %e, "closing an MCP session failed");
                }
            }
        });
    }

    /// Forgets `id`'s owner and frees its slot (the session closed).
    fn release(&self, id: &SessionId) {
        let mut owners = self.locked();
        let Some((owner, _slot)) = owners.of.remove(id) else {
            return;
        };
        if let Some(ids) = owners.by.get_mut(&owner) {
            ids.remove(id);
            if ids.is_empty() {
                owners.by.remove(&owner);
            }
        }
    }

    /// Binds the reservation of the `initialize` on this task to `id`.
    fn bind(&self, id: &SessionId) -> Result<(), McpSessionError> {
        let Reservation { owner, permit } = OPENING
            .try_with(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
            .ok()
            .flatten()
            .ok_or(McpSessionError::NoSlot)?;
        let mut owners = self.locked();
        owners
            .by
            .entry(owner.clone())
            .or_default()
            .insert(id.clone());
        owners.of.insert(id.clone(), (owner, permit));
        Ok(())
    }
}

impl SessionManager for McpSessions {
    type Error = McpSessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Refused before a session exists when no slot was reserved.
        let has_slot = OPENING
            .try_with(|slot| slot.lock().map(|s| s.is_some()).unwrap_or(false))
            .unwrap_or(false);
        if !has_slot {
            return Err(McpSessionError::NoSlot);
        }
        let (id, transport) = self.inner.create_session().await?;
        self.bind(&id)?;
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.release(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(cap: usize) -> Arc<McpSessions> {
        Arc::new(McpSessions::new(
            "test",
            Arc::default(),
            cap,
            Duration::from_secs(60),
        ))
    }

    #[tokio::test]
    async fn a_credential_gets_its_cap_of_slots_and_a_dropped_reservation_frees_one() {
        let sessions = sessions(2);
        let a = sessions.reserve("key:1").await.unwrap();
        let _b = sessions.reserve("key:1").await.unwrap();
        let err = ApiError::from(sessions.reserve("key:1").await.err().unwrap());
        assert_eq!(err.status(), 429);
        assert!(
            err.to_string()
                .contains("2 open MCP sessions per credential"),
            "{err}"
        );
        assert!(
            sessions.reserve("key:2").await.is_ok(),
            "another credential"
        );
        drop(a);
        assert!(sessions.reserve("key:1").await.is_ok());
    }

    #[tokio::test]
    async fn a_session_opened_in_a_slot_belongs_to_its_owner_until_closed() {
        let sessions = sessions(1);
        let reservation = sessions.reserve("session:s").await.unwrap();
        let (id, _transport) =
            McpSessions::opening(reservation, async { sessions.create_session().await })
                .await
                .unwrap();
        assert!(sessions.owns("session:s", &id));
        assert!(!sessions.owns("session:t", &id));
        assert_eq!(sessions.open_for("session:s"), 1);
        assert!(
            sessions.reserve("session:s").await.is_err(),
            "the slot is used"
        );
        sessions.close_session(&id).await.unwrap();
        assert_eq!(sessions.open_for("session:s"), 0);
        assert!(sessions.reserve("session:s").await.is_ok());
    }

    #[tokio::test]
    async fn two_endpoints_sharing_a_counter_count_apart() {
        let counter = Arc::new(StreamCounter::default());
        let session = McpSessions::new("session", counter.clone(), 1, Duration::from_secs(60));
        let workflow = McpSessions::new("workflow", counter, 1, Duration::from_secs(60));
        let _one = session.reserve("key:1").await.unwrap();
        assert!(workflow.reserve("key:1").await.is_ok());
    }

    #[tokio::test]
    async fn no_session_is_made_without_a_reserved_slot() {
        let sessions = sessions(1);
        assert!(matches!(
            sessions.create_session().await,
            Err(McpSessionError::NoSlot)
        ));
    }
}
