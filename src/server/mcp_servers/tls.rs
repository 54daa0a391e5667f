//! The HTTP client connected MCP servers are reached with: rmcp's
//! Streamable HTTP client is reqwest 0.13, built here with rustls on ring
//! (no C build), trusting the public web's roots (webpki-roots) and, for a
//! company's internal CA, the certificates of `MCP_CA_FILE`. Built once at
//! start-up; a CA file that cannot be read stops the start naming it.
//! Ring is also installed as the process's default provider, which
//! reqwest 0.13's own defaults need.

use crate::domain::limits::MCP_CONNECT_DEADLINE_SECS;
use crate::server::ServerError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Makes ring the process's default rustls provider, if none is yet.
/// reqwest 0.13 is built with rustls but no provider of its own, so a
/// client made with its defaults (rmcp's `from_config`: an MCP client in a
/// test or a bench) panics unless one is installed; [`http_client`] calls
/// this, and a bench that makes such a client without starting the
/// server in process calls it first.
pub fn install_default_provider() {
    // An error only says one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The client for `http://` and `https://` upstreams, trusting
/// webpki-roots and the certificates in `ca_file`.
pub fn http_client(ca_file: Option<&Path>) -> Result<reqwest13::Client, ServerError> {
    install_default_provider();
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = ca_file {
        for cert in extra_cas(path)? {
            roots.add(cert).map_err(|e| {
                ServerError::Config(format!(
                    "MCP_CA_FILE {} holds a certificate that cannot be a trust anchor: {e}",
                    path.display()
                ))
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::Config(format!("TLS for MCP servers: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // reqwest 0.13 is built without HTTP/2 here.
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    reqwest13::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(Duration::from_secs(MCP_CONNECT_DEADLINE_SECS))
        .build()
        .map_err(|e| ServerError::Config(format!("the MCP servers' HTTP client: {e}")))
}

/// The certificates of PEM file `path`: at least one, or an error naming
/// `MCP_CA_FILE`.
fn extra_cas(path: &Path) -> Result<Vec<CertificateDer<'static>>, ServerError> {
    let refuse = |why: String| {
        ServerError::Config(format!(
            "MCP_CA_FILE {} must be a PEM file of CA certificates: {why}",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| refuse(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refuse(e.to_string()))?;
    if certs.is_empty() {
        return Err(refuse("it holds no certificate".to_owned()));
    }
    Ok(certs)
}
