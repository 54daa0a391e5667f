//! Plugin tools against the release server on loopback (issues #13, #40):
//! registering 1,000 tools, each with its own schema (validation, schema
//! compilation, store, notify; each into a fresh session, the whole set
//! new) — target ≤ 20 ms median server time (`Server-Timing`) and ≤ 30 ms
//! round trip, measured as a plugin registers (`registration`: realistic
//! schemas near the 1 MiB budget, the plugin's stream and a watcher open)
//! and, for comparison, with the small schemas and no listeners this bench
//! used before — and a relayed call agent → Switchboard → plugin →
//! Switchboard → agent with a scripted plugin answering on its event
//! stream — target ≤ 2 ms median. Prints medians and p99s.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;
#[path = "plugins/registration.rs"]
mod registration;

use common::{percentile, spawn};
use serde_json::{json, Value};
use std::time::Instant;

/// The small schemas this bench registered before issue #40 (about 0.3 KB
/// a tool), kept to compare with; `round` makes them new to the server.
fn thousand_tools(round: usize) -> Value {
    let tools: Vec<Value> = (0..1000)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "description": format!("Tool number {i}: reads a data context and returns rows."),
                // Every schema differs, as a real plugin's do: none is
                // compiled once for all.
                "parameters": {"type": "object", "properties": {
                    "context": {"type": "string", "maxLength": 64, "description": format!("Data context for tool {i}")},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500 + i + 1000 * round}
                }, "required": ["context"]}
            })
        })
        .collect();
    json!({"pluginType": "codap", "pluginVersion": "bench", "availableTools": tools,
           "environment": {"version": "1", "features": [], "limitations": []}})
}

async fn open(client: &reqwest::Client, base: &str, key: &str) -> (String, String) {
    common::open(client, base, key, "idv")
        .await
        .expect("session opened")
}

async fn relayed_calls(client: &reqwest::Client, base: &str, key: &str) {
    let (id, token) = open(client, base, key).await;
    let registration = json!({"pluginType": "custom", "pluginVersion": "bench",
        "availableTools": [{"name": "echo", "description": "Echoes.", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]});
    let res = client
        .post(format!("http://{base}/api/sessions/{id}/register-tools"))
        .bearer_auth(&token)
        .json(&registration)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    // The scripted plugin: answers each request as it arrives.
    let mut events = client
        .get(format!("http://{base}/api/sessions/{id}/plugin-events"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let (plugin_client, plugin_base, plugin_id, plugin_token) =
        (client.clone(), base.to_owned(), id.clone(), token.clone());
    let plugin = tokio::spawn(async move {
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = events.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) else {
                    continue;
                };
                let request: Value = serde_json::from_str(data).unwrap();
                let call_id = request["callId"].as_str().unwrap().to_owned();
                plugin_client
                    .post(format!(
                        "http://{plugin_base}/api/sessions/{plugin_id}/tool-results/{call_id}"
                    ))
                    .bearer_auth(&plugin_token)
                    .json(&json!({"result": request["arguments"]}))
                    .send()
                    .await
                    .unwrap();
            }
        }
    });
    let url = format!("http://{base}/api/sessions/{id}/tool-calls");
    let mut times = Vec::new();
    for i in 0..2200 {
        let started = Instant::now();
        let answer: Value = client
            .post(&url)
            .bearer_auth(&token)
            .json(&json!({"name": "echo", "arguments": {"n": i}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["result"]["n"], i, "{answer}");
        if i >= 200 {
            times.push(started.elapsed());
        }
    }
    times.sort();
    println!(
        "relayed call agent → plugin → agent (HTTP, loopback), 2000 calls: median {:?}, p99 {:?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
    plugin.abort();
}

/// How much of a registration is schema work: the 1,000 schemas compiled
/// in process on one thread, and checked as a registration checks them
/// (a plain schema read from its text, its patterns built; one the text
/// reader leaves to the tree against its meta-schema; any other
/// compiled; a plain one compiled by its first call), medians of 9 rounds.
fn compile_share(label: &str, body: &Value) {
    use switchboard::server::agent::rules::{
        check_plain, check_plain_text, compile_schema, is_plain,
    };
    let schemas: Vec<(Value, String)> = body["availableTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["parameters"].clone(), t["parameters"].to_string()))
        .collect();
    // Each round's results are held until it ends, as a registration holds
    // them (a checked schema holds its built patterns, which a thousand
    // schemas share); what is timed is the making. Checking starts from
    // the text, as a registration does: a tree is built only when needed.
    type Work<'w> = &'w dyn Fn(&(Value, String)) -> Box<dyn std::any::Any>;
    let median = |work: Work| {
        let mut rounds = Vec::new();
        for _ in 0..9 {
            let started = Instant::now();
            let held: Vec<_> = schemas.iter().map(work).collect();
            rounds.push(started.elapsed());
            drop(std::hint::black_box(held));
        }
        rounds.sort();
        rounds[rounds.len() / 2]
    };
    let compiled = median(&|(schema, _)| Box::new(compile_schema(schema).unwrap()));
    let plain = schemas.iter().filter(|(s, _)| is_plain(s)).count();
    let read = schemas
        .iter()
        .filter(|(_, text)| check_plain_text(text).is_some())
        .count();
    let checked = median(&|(_, text)| {
        if let Some(patterns) = check_plain_text(text) {
            return Box::new(patterns);
        }
        let schema: Value = serde_json::from_str(text).unwrap();
        if is_plain(&schema) {
            Box::new(check_plain(&schema).unwrap())
        } else {
            Box::new(compile_schema(&schema).unwrap())
        }
    });
    println!(
        "1,000 tool schemas ({label}, {plain} plain, {read} read from the text) in process, one thread: compile all {compiled:?}, check as registered {checked:?} (medians)"
    );
}

/// The other phases of a registration, in process: reading the body,
/// planning (each tool's checks), storing the set in SQLite, and encoding the
/// `tool-availability-update` event (medians of 9 rounds).
async fn phases(label: &str, body: &Value) {
    use switchboard::domain::plugin::{
        plan_registration, AvailabilityUpdate, Limits, PluginSet, Registration,
    };
    let body = serde_json::to_vec(body).unwrap();
    let registration: Registration = serde_json::from_slice(&body).unwrap();
    let limits = Limits {
        max_tools: 1000,
        max_bytes: switchboard::domain::limits::PLUGIN_SET_MAX_BYTES,
    };
    let median = |mut v: Vec<std::time::Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (mut parse_t, mut plan_t, mut store_t, mut event_t) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/phases.db", dir.path().display());
    let pool = switchboard::server::platform::db::connect(&url)
        .await
        .unwrap();
    for round in 0..9 {
        let started = Instant::now();
        std::hint::black_box(serde_json::from_slice::<Registration>(&body).unwrap());
        parse_t.push(started.elapsed());
        let started = Instant::now();
        let plan = plan_registration(
            &[],
            &registration.available_tools,
            1,
            limits,
            &|_| false,
            &|_| Ok(()),
        )
        .unwrap();
        plan_t.push(started.elapsed());
        let set = PluginSet {
            tools: plan.tools.clone(),
            updated_at: 1,
            ..PluginSet::described_by(&registration)
        };
        let session = format!("bench-{label}-{round}");
        sqlx::query("INSERT INTO agent_sessions (id, token_hash, state, last_activity, created_at) VALUES ($1, $2, '{}', 0, 0)")
            .bind(&session)
            .bind(&session)
            .execute(&pool)
            .await
            .unwrap();
        let started = Instant::now();
        switchboard::server::store::plugins::put(&pool, &session, &set)
            .await
            .unwrap();
        store_t.push(started.elapsed());
        let started = Instant::now();
        let update = AvailabilityUpdate::of(&plan.diff, true, 1, set.tools.len());
        std::hint::black_box(serde_json::to_string(&update).unwrap());
        event_t.push(started.elapsed());
    }
    println!(
        "registration phases ({label}) in process: parse the body {:?}, plan {:?}, store in SQLite {:?}, encode the event {:?} (medians)",
        median(parse_t),
        median(plan_t),
        median(store_t),
        median(event_t)
    );
}
/// A registration scenario: its label, the body of round `n`, and
/// whether the plugin's stream and a watcher listen.
type Scenario<'a> = (&'a str, &'a dyn Fn(usize) -> Value, bool);

fn main() {
    let (small, realistic) = (thousand_tools(0), registration::realistic_registration(0));
    compile_share("small", &small);
    compile_share("realistic", &realistic);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            phases("small", &small).await;
            phases("realistic", &realistic).await;
            let (base, key, mut child, _dir) = spawn().await;
            let client = reqwest::Client::new();
            let same_plugin = |_| registration::realistic_registration(0);
            let same_small = |_| thousand_tools(0);
            let scenarios: [Scenario; 6] = [
                ("small schemas, no listeners (as before)", &thousand_tools, false),
                ("small schemas, plugin stream + watcher", &thousand_tools, true),
                ("small schemas seen before (the same plugin, next session), plugin stream + watcher", &same_small, true),
                ("realistic schemas, no listeners", &registration::realistic_registration, false),
                ("realistic schemas, plugin stream + watcher (as a plugin registers)", &registration::realistic_registration, true),
                ("realistic schemas seen before (the same plugin, next session), plugin stream + watcher", &same_plugin, true),
            ];
            // Each scenario's rounds are new to the server (60 rounds apiece).
            // `SCENARIOS=2,6` runs only those (numbered from 1), and skips the
            // relayed calls.
            let only: Option<Vec<usize>> = std::env::var("SCENARIOS")
                .ok()
                .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect());
            for (n, (label, body, listeners)) in scenarios.into_iter().enumerate() {
                if only.as_ref().is_some_and(|only| !only.contains(&(n + 1))) {
                    continue;
                }
                registration::measure(&client, &base, &key, label, body, listeners, (60 * n, 50))
                    .await;
            }
            if only.is_none() {
                relayed_calls(&client, &base, &key).await;
            }
            let _ = child.kill();
        });
}
