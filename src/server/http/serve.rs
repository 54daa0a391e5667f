//! The accept loop: every connection's first request head is read here;
//! an event-stream request is answered on the bare socket
//! ([`direct`]), everything else is served by hyper.
//!
//! Why not hyper for all: hyper keeps two 8 KiB buffers and a task sized
//! for any request on every open connection. For a page, a server function
//! or a tool call that lasts milliseconds that is nothing; for the 10,000
//! watchers of one live session, connected for an hour, it was most of
//! the server's memory. Both paths call the same router (the same
//! middleware, authentication, caps and handlers); only the bytes of the
//! response head and its chunked framing are written here.
//!
//! A watcher whose `EventSource` reuses a kept-alive connection is served
//! by hyper, as before: correct, only heavier.
//!
//! At most [`STREAM_SETUPS_AT_ONCE`] event-stream requests are in the
//! router at once; the others wait with nothing but their socket and their
//! parsed request head. A crowd of watchers connecting together (a
//! classroom, a reconnect after a deploy) would otherwise put every one of
//! them in the router at the same time, each holding its middleware and
//! handler futures (about 5 KB) while it waits for the database: 10,000 at
//! once added ~190 MiB that the allocator then kept.

pub mod direct;
pub mod first_request;
pub mod rewind;

use crate::server::agent::hub::sink::FeedSlot;
use crate::server::agent::hub::Hub;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use first_request::FirstRequest;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::{Service, ServiceExt};

/// Event-stream requests in the router at once (see the module's doc).
/// Each needs a few database reads; more in flight than the database has
/// connections only queue inside the router, where a waiting request costs
/// far more than in front of it.
pub const STREAM_SETUPS_AT_ONCE: usize = 32;

/// Serves `app` on `listener` until `shutdown` resolves, then stops
/// accepting, ends `hub`'s event streams and lets in-flight requests finish
/// (the caller bounds how long that may take).
///
/// This is `axum::serve`'s loop with limits it does not expose: a client
/// gets `header_read_timeout` to send each request's headers (so a
/// trickled request head cannot hold a connection), and since hyper starts
/// that clock whenever it waits for a request, a kept-alive connection left
/// idle is closed after the same time. Streams being sent are unaffected.
///
/// The router is made into a service once: serving a `Router` directly
/// rebuilds its whole route table for every connection, which cost ~110 KB
/// per connection and dominated the memory of 10,000 SSE watchers.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    hub: Arc<Hub>,
    header_read_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    let mut http1 = http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let http1 = Arc::new(http1);
    let graceful = GracefulShutdown::new();
    let stopping = CancellationToken::new();
    let setups = Arc::new(Semaphore::new(STREAM_SETUPS_AT_ONCE));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(e) => {
                    pause_after_accept_error(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Events are small and must leave at once: no Nagle delay behind an
        // unacknowledged earlier frame.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        let Ok(service) = make_service.call(peer).await;
        let connection = Connection {
            tcp,
            peer,
            http1: http1.clone(),
            watcher: graceful.watcher(),
            stopping: stopping.clone(),
            header_read_timeout,
            setups: setups.clone(),
        };
        tokio::spawn(connection.run(service));
    }
    drop(listener);
    stopping.cancel();
    hub.close_all();
    graceful.shutdown().await;
    Ok(())
}

/// One accepted connection, before its first request is known.
struct Connection {
    tcp: TcpStream,
    peer: SocketAddr,
    http1: Arc<http1::Builder>,
    /// Held until the connection ends, so a graceful shutdown waits for it.
    watcher: Watcher,
    /// Cancelled when the server stops accepting: a connection that has
    /// not sent a request yet is closed.
    stopping: CancellationToken,
    header_read_timeout: Duration,
    /// Turns to call the router with an event-stream request
    /// ([`STREAM_SETUPS_AT_ONCE`]).
    setups: Arc<Semaphore>,
}

impl Connection {
    /// Reads the first request head and serves the connection: an event
    /// stream on its own small task ([`direct::respond`]), anything else
    /// by hyper.
    async fn run<S>(mut self, service: S)
    where
        S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
        S::Future: Send + 'static,
    {
        let first = tokio::select! {
            first = first_request::read(&mut self.tcp, self.header_read_timeout) => first,
            () = self.stopping.cancelled() => None,
        };
        let Some((head, first)) = first else {
            return;
        };
        match first {
            FirstRequest::EventStream(request) => {
                drop(head);
                let turn = tokio::select! {
                    turn = self.setups.clone().acquire_owned() => turn,
                    () = self.stopping.cancelled() => return,
                };
                let Ok(turn) = turn else { return };
                // Boxed: the router's futures exist only for this turn, not
                // in every waiting connection's task.
                let call = Box::pin(service.oneshot((*request).map(|()| Body::empty())));
                let Ok(mut response) = call.await;
                drop(turn);
                // A session's stream is written from its feed, by the
                // publisher as much as by this connection.
                let feed = response
                    .extensions_mut()
                    .remove::<FeedSlot>()
                    .and_then(|slot| slot.take());
                // The stream outlives this task, which was sized for
                // reading a request and calling the router: its own task
                // holds only the socket and the body (or the feed).
                let (tcp, watcher) = (self.tcp, self.watcher);
                tokio::spawn(async move {
                    match feed {
                        Some(feed) => direct::respond_feed(tcp, response, feed).await,
                        None => direct::respond(tcp, response).await,
                    }
                    drop(watcher);
                });
            }
            // Boxed for the same reason: hyper's connection state is large.
            FirstRequest::Hyper => Box::pin(self.serve_with_hyper(head, service)).await,
        }
    }

    /// Hands the connection to hyper, `head` (the bytes already read)
    /// first.
    async fn serve_with_hyper<S>(self, head: Vec<u8>, service: S)
    where
        S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
        S::Future: Send + 'static,
    {
        let service = TowerToHyperService::new(
            service.map_request(|req: Request<hyper::body::Incoming>| req.map(Body::new)),
        );
        let io = TokioIo::new(rewind::Rewind::new(head, self.tcp));
        let connection = self.http1.serve_connection(io, service);
        if let Err(e) = self.watcher.watch(connection).await {
            tracing::debug!(error = %e, peer = %self.peer, "connection ended with an error");
        }
    }
}

/// After a failed `accept`: per-connection failures (the peer gave up
/// first) are retried at once; anything else, such as running out of file
/// descriptors, is logged and retried after a second rather than spinning.
async fn pause_after_accept_error(e: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every connection's task holds until its first request is
    /// served, whichever way it goes: a crowd of 10,000 watchers waiting
    /// for their turn holds 10,000 of these.
    #[tokio::test]
    async fn a_connection_waiting_for_its_turn_is_small() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (client, accepted) = tokio::join!(TcpStream::connect(address), listener.accept());
        let (tcp, peer) = accepted.unwrap();
        let mut make = Router::new().into_make_service_with_connect_info::<SocketAddr>();
        let Ok(service) = make.call(peer).await;
        let graceful = GracefulShutdown::new();
        let connection = Connection {
            tcp,
            peer,
            http1: Arc::new(http1::Builder::new()),
            watcher: graceful.watcher(),
            stopping: CancellationToken::new(),
            header_read_timeout: Duration::from_secs(1),
            setups: Arc::new(Semaphore::new(1)),
        };
        let task = connection.run(service);
        let size = std::mem::size_of_val(&task);
        assert!(size <= 1024, "a connection's task is {size} bytes");
        drop((task, client));
    }
}
