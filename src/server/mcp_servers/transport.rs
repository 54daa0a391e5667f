//! Opening an MCP session with a connected server by the way it is
//! reached: its Streamable HTTP URL (`http://` or `https://`, through the
//! client `tls` built, its stored headers on every request), or the
//! command `stdio` starts. A failure is told in words an admin can act
//! on: the deepest cause (a certificate refused, a refused connection, a
//! process's last stderr lines), never a header or a variable.

use super::client::short;
use super::stdio::{self, StderrWatch};
use crate::domain::limits::MCP_CONNECT_DEADLINE_SECS;
use crate::domain::mcp_stdio::Endpoint;
use crate::server::store::mcp_servers as store;
use crate::server::AppState;
use axum::http::{HeaderName, HeaderValue};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{DynamicTransportError, IntoTransport, StreamableHttpClientTransport};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::error::Error;
use std::time::Duration;

/// An open session, and for a stdio server its process's stderr.
pub type Opened<H> = (RunningService<RoleClient, H>, Option<StderrWatch>);

/// Opens an MCP session with server `id` at `endpoint` for `handler`,
/// within [`MCP_CONNECT_DEADLINE_SECS`]; why not, in words.
pub async fn open<H: ClientHandler>(
    state: &AppState,
    id: i64,
    endpoint: &Endpoint,
    handler: H,
) -> Result<Opened<H>, String> {
    match endpoint {
        Endpoint::Url(url) => {
            let headers = store::headers_of(&state.db, id)
                .await
                .map_err(|e| e.to_string())?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str().to_owned());
            for (name, value) in headers.iter() {
                // Parsed once (`UpstreamHeaders`): token names, visible values.
                if let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) {
                    config.custom_headers.insert(name, value);
                }
            }
            let client = state
                .mcp_servers
                .http_client()
                .ok_or("the MCP servers' HTTP client is not set up")?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            Ok((initialize(handler, transport).await?, None))
        }
        Endpoint::Command(command) => {
            let env = store::env_of(&state.db, id)
                .await
                .map_err(|e| e.to_string())?;
            let inherited = &state.config.mcp_transports.inherited_env;
            let mut started = stdio::start(command, &env, inherited)?;
            match initialize(handler, started.transport).await {
                Ok(service) => Ok((service, Some(started.stderr))),
                Err(why) => Err(started.stderr.explain(why).await),
            }
        }
    }
}

/// Runs MCP's `initialize` over `transport`.
async fn initialize<H, T, E, A>(
    handler: H,
    transport: T,
) -> Result<RunningService<RoleClient, H>, String>
where
    H: ClientHandler,
    T: IntoTransport<RoleClient, E, A>,
    E: Error + Send + Sync + 'static,
{
    let deadline = Duration::from_secs(MCP_CONNECT_DEADLINE_SECS);
    match tokio::time::timeout(deadline, handler.serve(transport)).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(short(&format!("could not connect: {}", describe(&e)))),
        Err(_) => Err(format!(
            "did not answer initialize within {MCP_CONNECT_DEADLINE_SECS} s"
        )),
    }
}

/// `e` and its causes, each said once, as `what: why: deeper why`
/// (`error sending request for url (…): client error (Connect): invalid
/// peer certificate: UnknownIssuer`). rmcp's wrappers, which name Rust
/// types, are passed over; its HTTP client error keeps reqwest's error as
/// a field rather than a source, so it is followed by hand.
pub(super) fn describe(e: &(dyn Error + 'static)) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut next: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(cause) = next {
        let (wrapper, under) = deeper(cause);
        let text = cause.to_string();
        if !wrapper && !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        next = under;
    }
    said.join(": ")
}

/// Whether `e` is one of rmcp's wrappers, and the cause under it.
fn deeper<'a>(e: &'a (dyn Error + 'static)) -> (bool, Option<&'a (dyn Error + 'static)>) {
    if let Some(ClientInitializeError::TransportError { error, .. }) = e.downcast_ref() {
        return (true, Some(error));
    }
    if let Some(wrapper) = e.downcast_ref::<DynamicTransportError>() {
        return (true, wrapper.source());
    }
    if let Some(rmcp::ServiceError::TransportSend(inner)) = e.downcast_ref() {
        return (true, Some(inner));
    }
    if let Some(StreamableHttpError::Client(inner)) =
        e.downcast_ref::<StreamableHttpError<reqwest13::Error>>()
    {
        return (true, Some(inner));
    }
    (false, e.source())
}
