//! Connected MCP servers against one that no one here wrote: the reference
//! server `@modelcontextprotocol/server-everything` (an end2end
//! devDependency, installed by `make e2e-deps`) in its `streamableHttp`
//! mode, run with Node on a free port. Switchboard reaches it through a
//! small TCP relay the test owns, which counts the `tools/call` requests
//! that pass, so "refused before anything reaches the upstream" is seen
//! on the wire, not taken on trust.

use crate::helpers::spawn_app;
use crate::mcp_servers::{add_server, bind, tool_ids, wait_for};
use crate::mcp_transports::everything;
use crate::sessions::{call, open};
use serde_json::json;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use switchboard::domain::api_key::Scope;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the relay looks for in what Switchboard sends.
const CALL_METHOD: &[u8] = b"\"tools/call\"";

/// A port nothing listens on now.
async fn free_port() -> u16 {
    let probe = TcpListener::bind("127.0.0.1:0").await.unwrap();
    probe.local_addr().unwrap().port()
}

/// The reference server, stopped when dropped.
struct Everything(Child);

impl Everything {
    /// Starts it on `port` and waits until it accepts connections.
    async fn start(port: u16) -> Self {
        let child = Command::new("node")
            .arg(everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node runs (installed by make e2e-deps)");
        let running = Self(child);
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return running;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server-everything did not listen on {port} within 10 s");
    }

    /// Stops it, connections and all.
    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A relay on a port of its own to `target`, counting the `tools/call`
/// requests it carries; its URL's port.
async fn counting_relay(target: u16, calls: Arc<AtomicUsize>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let calls = calls.clone();
            tokio::spawn(async move {
                let Ok(outbound) = TcpStream::connect(("127.0.0.1", target)).await else {
                    return; // the upstream is down: the caller sees a closed connection
                };
                let (mut from_client, mut to_client) = inbound.into_split();
                let (mut from_upstream, mut to_upstream) = outbound.into_split();
                let up = async move {
                    let mut buf = vec![0; 16 * 1024];
                    // The end of the last read, so a method split across two reads counts.
                    let mut tail: Vec<u8> = Vec::new();
                    while let Ok(n) = from_client.read(&mut buf).await {
                        if n == 0 || to_upstream.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        tail.extend_from_slice(&buf[..n]);
                        let seen = tail
                            .windows(CALL_METHOD.len())
                            .filter(|w| *w == CALL_METHOD)
                            .count();
                        calls.fetch_add(seen, Ordering::SeqCst);
                        let keep = tail.len().min(CALL_METHOD.len() - 1);
                        tail.drain(..tail.len() - keep);
                    }
                };
                let down = tokio::io::copy(&mut from_upstream, &mut to_client);
                tokio::select! {
                    () = up => {}
                    _ = down => {}
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn the_reference_servers_echo_is_imported_bound_called_refused_unbound_and_survives_a_restart(
) {
    let app = spawn_app().await;
    let port = free_port().await;
    let mut everything = Everything::start(port).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let relay = counting_relay(port, calls.clone()).await;
    let key = app.api_key_with(&[Scope::CatalogueWrite]).await;
    let (status, body) = add_server(
        &app,
        &key,
        json!({"name": "everything", "url": format!("http://127.0.0.1:{relay}/mcp")}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_i64().unwrap();

    // Its tools are imported under its name, with what it says of them.
    let server = wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    let ids = tool_ids(&server);
    for expected in ["everything__echo", "everything__get-sum"] {
        assert!(ids.contains(&expected.to_owned()), "{expected}: {server}");
    }
    let echo = &server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "everything__echo")
        .unwrap()["description"];
    assert_eq!(echo, "Echoes back the input string", "{server}");

    // `echo` bound to a workflow: a session there gets the upstream's answer.
    bind(&app, Some("idv"), &["everything__echo"]).await;
    let s = open(&app, &app.api_key().await, "idv").await;
    let (status, reply) = call(&app, &s, "everything__echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, reply["allowed"].clone()),
        (200, json!(true)),
        "{reply}"
    );
    assert_eq!(reply["result"]["text"], "Echo: hi", "{reply}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // `get-sum` is in the catalogue but not bound: refused here, and
    // nothing reaches the upstream.
    let (_, refused) = call(&app, &s, "everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(refused["allowed"], false, "{refused}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the refused call was not sent"
    );

    // The server stopped: a readable refusal, and an error status.
    everything.stop();
    let (status, down) = call(&app, &s, "everything__echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, down["allowed"].clone()),
        (200, json!(false)),
        "{down}"
    );
    let reason = down["reason"].as_str().unwrap();
    assert!(reason.contains("MCP server"), "{reason}");
    assert!(!reason.contains("rmcp::"), "no Rust type names: {reason}");
    let server = wait_for(&app, &key, id, |s| s["status"] == "error").await;
    assert!(
        server["lastError"].as_str().is_some_and(|e| !e.is_empty()),
        "{server}"
    );

    // It comes back where it was: reconnected, and answering again.
    let _everything = Everything::start(port).await;
    wait_for(&app, &key, id, |s| s["status"] == "connected").await;
    let (_, back) = call(&app, &s, "everything__echo", json!({"message": "back"})).await;
    assert_eq!(back["result"]["text"], "Echo: back", "{back}");
}
