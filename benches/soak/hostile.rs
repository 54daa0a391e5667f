//! The soak's hostile mix (issue #33): what an attacker holding a session
//! token, a narrow API key or nothing at all would send, at a steady rate,
//! interleaved with the soak's normal traffic. Each attack has the answers
//! the bounds allow (a 200 until a cap, then its 4xx); any other answer, a
//! 5xx or a dropped connection is an error that fails the soak, and the
//! server's RSS from start to end is checked with everything else.
//!
//! Attacks, round-robin at `SOAK_HOSTILE_RATE` (10) per second:
//! - `checks`: `PATCH …/state` adding 32 new check names (200, then 422);
//! - `calls`: a burst of 40 tool calls on one session (200, then 429);
//! - `plugin`: a registration of 70 tools × 15 KB, about 1.05 MB: 422
//!   past the plugin set's budget (1 MiB), or 429 past its updates a
//!   minute;
//! - `login`: 5 concurrent wrong passwords for the admin (401, then 429);
//! - `mcp`: an MCP `initialize` with the soak's key (200, then 429);
//! - `import`: the catalogue change through a `vibes:write` key's manifest
//!   import (always 403);
//! - `stream`: an event stream whose client keeps sending bytes (the server
//!   closes it);
//! - `plugin-token`: a plugin token changing the session's state (always
//!   403).

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

/// What the hostile tasks need: where the server is and the credentials
/// an attacker would hold.
pub struct Hostile {
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// A key with every scope (the MCP and session attacks).
    pub key: String,
    /// A key with `vibes:read vibes:write` only (the import attack).
    pub vibes_key: String,
    /// Attacks per second.
    pub rate: u64,
    /// The answers seen, per attack and status.
    pub seen: Mutex<BTreeMap<(&'static str, u16), u64>>,
    /// Answers no bound allows (a 5xx, an unexpected status, an error).
    pub unexpected: AtomicU64,
    /// The first few unexpected answers, for the report.
    pub samples: Mutex<Vec<String>>,
    client: reqwest::Client,
}

type Attack = fn(Arc<Hostile>, Arc<Targets>) -> futures_util::future::BoxFuture<'static, ()>;

/// Sessions the attacks use (apart from the soak's live ones, so the
/// loss checks stay exact).
pub struct Targets {
    checks: (String, String),
    calls: (String, String),
    plugin: (String, String),
    stream: (String, String),
    /// A session's id and its plugin token.
    plugin_token: (String, String),
}

const ATTACKS: [(&str, Attack); 8] = [
    ("checks", |h, t| Box::pin(checks(h, t))),
    ("calls", |h, t| Box::pin(calls(h, t))),
    ("plugin", |h, t| Box::pin(plugin(h, t))),
    ("login", |h, _| Box::pin(login(h))),
    ("mcp", |h, _| Box::pin(mcp(h))),
    ("import", |h, _| Box::pin(import(h))),
    ("stream", |h, t| Box::pin(stream(h, t))),
    ("plugin-token", |h, t| Box::pin(plugin_token(h, t))),
];

impl Hostile {
    /// The hostile side of a soak against `address`.
    pub fn new(address: String, key: String, vibes_key: String, rate: u64) -> Self {
        Self {
            address,
            key,
            vibes_key,
            rate,
            seen: Mutex::default(),
            unexpected: AtomicU64::new(0),
            samples: Mutex::default(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Records `status` for `attack`; one outside `allowed` is unexpected.
    fn saw(&self, attack: &'static str, status: u16, allowed: &[u16], detail: &str) {
        *self
            .seen
            .lock()
            .unwrap()
            .entry((attack, status))
            .or_default() += 1;
        if !allowed.contains(&status) {
            self.unexpected(format!("{attack}: {status} {detail}"));
        }
    }

    fn unexpected(&self, message: String) {
        self.unexpected.fetch_add(1, Relaxed);
        let mut samples = self.samples.lock().unwrap();
        if samples.len() < 20 {
            samples.push(message);
        }
    }

    /// Opens the attacks' own sessions.
    pub async fn targets(&self) -> Targets {
        let open = || async {
            crate::common::open(&self.client, &self.address, &self.key, "idv")
                .await
                .unwrap()
        };
        Targets {
            checks: open().await,
            calls: open().await,
            plugin: open().await,
            stream: open().await,
            plugin_token: self.plugin_session().await,
        }
    }

    /// Opens a session and keeps its id and plugin token.
    async fn plugin_session(&self) -> (String, String) {
        let body: Value = self
            .client
            .post(self.url("/api/sessions"))
            .bearer_auth(&self.key)
            .json(&json!({"workflowId": "idv"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (
            body["sessionId"].as_str().unwrap().to_owned(),
            body["pluginToken"].as_str().unwrap().to_owned(),
        )
    }

    /// The report's lines: answers per attack.
    pub fn summary(&self) -> String {
        let seen = self.seen.lock().unwrap();
        let mut lines = Vec::new();
        for (name, _) in ATTACKS {
            let answers: Vec<String> = seen
                .iter()
                .filter(|((a, _), _)| *a == name)
                .map(|((_, status), n)| format!("{status}×{n}"))
                .collect();
            lines.push(format!("{name} {}", answers.join(" ")));
        }
        lines.join("; ")
    }
}

/// Runs the attacks round-robin at the rate until `stop`.
pub async fn run(h: Arc<Hostile>, targets: Targets, mut stop: watch::Receiver<bool>) {
    let targets = Arc::new(targets);
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / h.rate.max(1) as f64));
    let mut running = tokio::task::JoinSet::new();
    let mut next = 0;
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = tick.tick() => {}
        }
        while running.try_join_next().is_some() {}
        // One attack of each kind at a time: a slow answer is not piled on.
        if running.len() < ATTACKS.len() {
            let (_, attack) = ATTACKS[next % ATTACKS.len()];
            next += 1;
            running.spawn(attack(h.clone(), targets.clone()));
        }
    }
    while running.join_next().await.is_some() {}
}

async fn send(
    h: &Hostile,
    attack: &'static str,
    req: reqwest::RequestBuilder,
) -> Option<(u16, String)> {
    match req.send().await {
        Ok(res) => {
            let status = res.status().as_u16();
            let body = res.text().await.unwrap_or_default();
            Some((status, body.chars().take(200).collect()))
        }
        Err(e) => {
            h.unexpected(format!("{attack}: {e}"));
            None
        }
    }
}

async fn checks(h: Arc<Hostile>, t: Arc<Targets>) {
    let (id, token) = &t.checks;
    let from: u32 = rand::random::<u32>() % 1_000_000;
    let names: serde_json::Map<String, Value> = (from..from + 32)
        .map(|i| (format!("hostile_{i:07}"), json!(true)))
        .collect();
    let req = h
        .client
        .patch(h.url(&format!("/api/sessions/{id}/state")))
        .bearer_auth(token)
        .json(&json!({ "checks": names }));
    if let Some((status, body)) = send(&h, "checks", req).await {
        h.saw("checks", status, &[200, 422, 429], &body);
    }
}

async fn calls(h: Arc<Hostile>, t: Arc<Targets>) {
    let (id, token) = &t.calls;
    let burst = (0..40).map(|_| {
        let req = h
            .client
            .post(h.url(&format!("/api/sessions/{id}/tool-calls")))
            .bearer_auth(token)
            .json(&json!({"name": "get_server_time", "arguments": {}}));
        send(&h, "calls", req)
    });
    for answer in futures_util::future::join_all(burst)
        .await
        .into_iter()
        .flatten()
    {
        h.saw("calls", answer.0, &[200, 429], &answer.1);
    }
}

async fn plugin(h: Arc<Hostile>, t: Arc<Targets>) {
    let (id, token) = &t.plugin;
    let pad = "d".repeat(1_000);
    let tools: Vec<Value> = (0..70)
        .map(|i| {
            let properties: serde_json::Map<String, Value> = (0..14)
                .map(|p| {
                    (
                        format!("p{p}"),
                        json!({"type": "string", "description": pad}),
                    )
                })
                .collect();
            json!({"name": format!("hostile_tool_{i}"), "description": "x".repeat(1_000),
                   "parameters": {"type": "object", "properties": properties}})
        })
        .collect();
    let req = h
        .client
        .post(h.url(&format!("/api/sessions/{id}/register-tools")))
        .bearer_auth(token)
        .json(&json!({"pluginType": "custom", "pluginVersion": "1.0.0", "availableTools": tools}));
    if let Some((status, body)) = send(&h, "plugin", req).await {
        h.saw("plugin", status, &[422, 429], &body);
    }
}

async fn login(h: Arc<Hostile>) {
    let origin = format!("http://{}", h.address);
    let burst = (0..5).map(|_| {
        let req = h
            .client
            .post(h.url("/rpc/login"))
            .header("Origin", &origin)
            .form(&[
                ("email", "admin@example.com"),
                ("password", "not-the-password"),
            ]);
        send(&h, "login", req)
    });
    for answer in futures_util::future::join_all(burst)
        .await
        .into_iter()
        .flatten()
    {
        h.saw("login", answer.0, &[401, 429], &answer.1);
    }
}

async fn mcp(h: Arc<Hostile>) {
    let req = h
        .client
        .post(h.url("/mcp"))
        .bearer_auth(&h.key)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "soak-hostile", "version": "1"}}}),
        );
    if let Some((status, body)) = send(&h, "mcp", req).await {
        h.saw("mcp", status, &[200, 429], &body);
    }
}

/// Exports the manifests with the `vibes:write` key, adds `check_balance`
/// with its `requires` emptied and imports them back: always 403.
async fn import(h: Arc<Hostile>) {
    let req = h
        .client
        .get(h.url("/api/manifests?format=tar"))
        .bearer_auth(&h.vibes_key);
    let Ok(res) = req.send().await else {
        return h.unexpected("import: export failed".into());
    };
    let Ok(bytes) = res.bytes().await else {
        return h.unexpected("import: export body".into());
    };
    let Ok(files) = switchboard::server::vibes::manifests::unpack(&bytes) else {
        return h.unexpected("import: unreadable export".into());
    };
    let loosened = json!({"id": "check_balance", "name": "Check balance",
        "description": "Gives the balance of the verified account.", "category": "banking",
        "parameters": {"type": "object", "properties": {"accountNumber": {"type": "string"}},
                       "required": ["accountNumber"]},
        "requires": []});
    let loosened = (
        "TOOLS/banking/check_balance/config.json".to_owned(),
        serde_json::to_vec(&loosened).unwrap(),
    );
    let mut archive = tar::Builder::new(Vec::new());
    for (path, content) in files.into_iter().chain([loosened]) {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, &path, content.as_slice())
            .unwrap();
    }
    let body = archive.into_inner().unwrap();
    let req = h
        .client
        .post(h.url("/api/manifests"))
        .bearer_auth(&h.vibes_key)
        .header("Content-Type", "application/x-tar")
        .body(body);
    if let Some((status, body)) = send(&h, "import", req).await {
        h.saw("import", status, &[403], &body);
    }
}

/// Opens an event stream on its own connection and, once it is answered,
/// keeps sending bytes: the server must close the connection, not read
/// for ever. (A client that pipelines bytes behind its request is served
/// by hyper, which stops reading until the response ends.)
async fn stream(h: Arc<Hostile>, t: Arc<Targets>) {
    let (id, token) = &t.stream;
    let Ok(mut socket) = TcpStream::connect(&h.address).await else {
        return h.unexpected("stream: connect failed".into());
    };
    let head = format!(
        "GET /api/sessions/{id}/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {token}\r\n\r\n",
        h.address
    );
    if socket.write_all(head.as_bytes()).await.is_err() {
        return h.unexpected("stream: request not sent".into());
    }
    let mut head = vec![0; 1_024];
    match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut head)).await {
        Ok(Ok(n)) if head[..n].starts_with(b"HTTP/1.1 200") => {}
        _ => return h.unexpected("stream: not answered 200".into()),
    }
    let junk = vec![b'x'; 4_096];
    let (mut reader, mut writer) = socket.into_split();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = vec![0; 65_536];
        loop {
            tokio::select! {
                read = reader.read(&mut buf) => match read {
                    Ok(0) | Err(_) => return true,
                    Ok(_) => {}
                },
                written = writer.write_all(&junk) => if written.is_err() { return true },
            }
        }
    })
    .await
    .unwrap_or(false);
    h.saw(
        "stream",
        if closed { 200 } else { 0 },
        &[200],
        "the server kept the stream open while its client kept sending",
    );
}

/// A plugin token trying what only the backend's session token may do.
async fn plugin_token(h: Arc<Hostile>, t: Arc<Targets>) {
    let (id, token) = &t.plugin_token;
    let req = h
        .client
        .patch(h.url(&format!("/api/sessions/{id}/state")))
        .bearer_auth(token)
        .json(&json!({"checks": {"identity_verified": true}}));
    if let Some((status, body)) = send(&h, "plugin-token", req).await {
        h.saw("plugin-token", status, &[403], &body);
    }
}
