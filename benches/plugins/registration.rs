//! A 1,000-tool registration as a plugin makes it, timed from the plugin's
//! side and read from the server's `Server-Timing`: the plugin token, the
//! plugin's own event stream open (the JavaScript client opens it before
//! `registerTools`), a watcher on the session's stream (the visualiser, a
//! backend) reading and parsing what arrives, the body serialised for each
//! request, `Accept-Encoding: gzip` as Node's `fetch` sends it, and the
//! answer read and parsed. Schemas are what a data tool's look like —
//! nested objects, enums, arrays of objects, a description on every field —
//! each different, so none is compiled once for all.

use super::common::percentile;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Tool `i` of a plugin like CODAP's: about 0.95 KB with its schema, so
/// 1,000 of them come near the session's 1 MiB budget. `round` makes every
/// registration's schemas new to the server (which shares validators
/// between sessions holding the same schema text).
pub fn realistic_tool(i: usize, round: usize) -> Value {
    json!({
        "name": format!("createGraph_{i}"),
        "description": format!("Creates graph {i} from a data context's attributes; returns the new component's id."),
        "parameters": {"type": "object", "properties": {
            "dataContext": {"type": "string", "description": "The data context", "maxLength": 128},
            "xAttribute": {"type": "string", "description": "x axis attribute"},
            "yAttribute": {"type": "string", "description": "y axis attribute"},
            "graphType": {"type": "string", "enum": ["scatter", "bar", "line", "dot"]},
            "dimensions": {"type": "object", "properties": {
                "width": {"type": "integer", "minimum": 100, "maximum": 2000 + i + 1000 * round},
                "height": {"type": "integer", "minimum": 100, "maximum": 2000}
            }},
            "filters": {"type": "array", "maxItems": 10, "items": {"type": "object", "properties": {
                "attribute": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_ ]*$"},
                "op": {"type": "string", "enum": ["=", "<", ">", "contains"]},
                "value": {"type": ["string", "number"]}
            }, "required": ["attribute", "op"]}}
        }, "required": ["dataContext"], "additionalProperties": false}
    })
}

/// The whole registration body of round `round` (not yet serialised).
pub fn realistic_registration(round: usize) -> Value {
    let tools: Vec<Value> = (0..1000).map(|i| realistic_tool(i, round)).collect();
    json!({"pluginType": "codap", "pluginVersion": "2.1.0", "availableTools": tools,
           "capabilities": [{"type": "data_analysis", "level": "basic", "resources": ["tables"], "permissions": ["read"]}],
           "environment": {"version": "3.0", "features": [], "limitations": [], "contextInfo": {"dataContexts": ["Mammals"]}}})
}

/// A session opened with the API key: id, session token, plugin token.
async fn open(client: &reqwest::Client, base: &str, key: &str) -> (String, String, String) {
    let res: Value = client
        .post(format!("http://{base}/api/sessions"))
        .bearer_auth(key)
        .json(&json!({"workflowId": "idv"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let field = |f: &str| res[f].as_str().expect(f).to_owned();
    (
        field("sessionId"),
        field("sessionToken"),
        field("pluginToken"),
    )
}

/// Reads an event stream until it ends, parsing each frame's data as a
/// client does; returns once the stream's head has come (and, for the
/// session's stream, its snapshot).
async fn listen(
    client: &reqwest::Client,
    url: String,
    token: &str,
    wait_for_snapshot: bool,
) -> tokio::task::JoinHandle<()> {
    let mut res = client
        .get(url)
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let mut buffer = String::new();
    while wait_for_snapshot && !buffer.contains("\n\n") {
        let chunk = res.chunk().await.unwrap().expect("snapshot");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
    buffer.clear();
    tokio::spawn(async move {
        // Where the search for a frame's end resumes: as an `EventSource`
        // does, each byte is looked at once, not again with every chunk
        // of a 1 MB frame.
        let mut searched = 0;
        while let Ok(Some(chunk)) = res.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.as_bytes()[searched..]
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| searched + at)
            {
                let frame: String = buffer.drain(..end + 2).collect();
                searched = 0;
                for data in frame.lines().filter_map(|l| l.strip_prefix("data: ")) {
                    std::hint::black_box(serde_json::from_str::<Value>(data).ok());
                }
            }
            searched = buffer.len().saturating_sub(1);
        }
    })
}

/// The `app` duration of a `Server-Timing` header.
pub fn server_time(res: &reqwest::Response) -> Duration {
    let header = res
        .headers()
        .get("server-timing")
        .and_then(|v| v.to_str().ok())
        .expect("Server-Timing");
    let ms: f64 = header
        .split(';')
        .find_map(|p| p.trim().strip_prefix("dur="))
        .and_then(|d| d.parse().ok())
        .expect("dur=");
    Duration::from_secs_f64(ms / 1000.0)
}

/// One registration of `body` into a fresh session with its listeners
/// connected: (round trip, server time).
async fn once(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    body: &Value,
    listeners: bool,
) -> (Duration, Duration) {
    let (id, session_token, plugin_token) = open(client, base, key).await;
    let mut tasks = Vec::new();
    if listeners {
        let url = |path: &str| format!("http://{base}/api/sessions/{id}/{path}");
        tasks.push(listen(client, url("plugin-events"), &plugin_token, false).await);
        tasks.push(listen(client, url("events"), &session_token, true).await);
    }
    let started = Instant::now();
    let bytes = serde_json::to_vec(body).unwrap();
    let res = client
        .post(format!("http://{base}/api/sessions/{id}/register-tools"))
        .bearer_auth(&plugin_token)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("accept-encoding", "gzip, deflate")
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let server = server_time(&res);
    let gzipped = res
        .headers()
        .get("content-encoding")
        .is_some_and(|v| v == "gzip");
    let raw = res.bytes().await.unwrap();
    let answer: Value = if gzipped {
        serde_json::from_reader(flate2::read::GzDecoder::new(&raw[..])).unwrap()
    } else {
        serde_json::from_slice(&raw).unwrap()
    };
    let round_trip = started.elapsed();
    assert_eq!(answer["registeredTools"].as_array().unwrap().len(), 1000);
    for t in tasks {
        t.abort();
    }
    (round_trip, server)
}

/// `rounds` registrations after 10 not counted, round `i` registering
/// `body(first + i)` into a fresh session; prints medians and p99s.
pub async fn measure(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    label: &str,
    body: &dyn Fn(usize) -> Value,
    listeners: bool,
    (first, rounds): (usize, usize),
) {
    let (mut trips, mut servers) = (Vec::new(), Vec::new());
    for i in 0..rounds + 10 {
        let (trip, server) = once(client, base, key, &body(first + i), listeners).await;
        if i >= 10 {
            trips.push(trip);
            servers.push(server);
        }
    }
    trips.sort();
    servers.sort();
    let kib = serde_json::to_vec(&body(0)).unwrap().len() / 1024;
    println!(
        "register 1,000 tools, {label} ({kib} KiB body), {rounds} registrations: server time median {:?}, p99 {:?}; round trip median {:?}, p99 {:?}",
        percentile(&servers, 0.5),
        percentile(&servers, 0.99),
        percentile(&trips, 0.5),
        percentile(&trips, 0.99)
    );
}
