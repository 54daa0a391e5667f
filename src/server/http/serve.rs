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
use tokio_util::sync::CancellationToken;
use tower::{Service, ServiceExt};

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
                let Ok(mut response) = service.oneshot((*request).map(|()| Body::empty())).await;
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
            FirstRequest::Hyper => {
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
