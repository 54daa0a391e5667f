//! Agents and vibes: building the stage-change payload an agent switch
//! answers with (in process, Criterion), and the `switchAgent` round trip
//! over HTTP on loopback against the release server (median and p99 of
//! 2,000 switches). Targets from issue #12: ≤ 5 µs and ≤ 1 ms medians.

// Shared with the other server benches; this one uses only part of it.
#[allow(dead_code)]
mod common;

use common::{percentile, spawn};
use criterion::Criterion;
use std::hint::black_box;
use std::time::Instant;
use switchboard::domain::bindings::ToolBindings;
use switchboard::domain::vibe::demo;
use switchboard::domain::workflow_state::AgentContext;
use switchboard::server::agent::rules::Rules;
use switchboard::server::seed::catalogue::{demo_catalogue, demo_workflows};

fn stage_payload(c: &mut Criterion) {
    let tools = demo_catalogue()
        .into_iter()
        .chain(demo::core_tools())
        .chain(switchboard::domain::todos::todo_tools())
        .collect();
    let rules = Rules::new(ToolBindings::demo(), tools, demo_workflows())
        .with_vibes(demo::agents(), demo::vibes());
    let oliver = AgentContext {
        vibe: "todos".into(),
        agent: "Oliver".into(),
    };
    c.bench_function("stage-change payload for Oliver (9 tools)", |b| {
        b.iter(|| {
            let stage = rules.stage(black_box(&oliver)).unwrap();
            black_box(stage.change("I'm now switching you to Oliver..."))
        })
    });
}

async fn switch_round_trip() {
    let (base, key, mut child, _dir) = spawn().await;
    let client = reqwest::Client::new();
    let opened: serde_json::Value = client
        .post(format!("http://{base}/api/sessions"))
        .bearer_auth(&key)
        .json(&serde_json::json!({"vibeId": "todos"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let token = opened["sessionToken"].as_str().unwrap().to_owned();
    let url = format!("http://{base}/api/sessions/{id}/tool-calls");
    let agents = ["Oliver", "Rajesh", "Hominio"];
    let mut times = Vec::with_capacity(2000);
    for i in 0..2200 {
        let body =
            serde_json::json!({"name": "switchAgent", "arguments": {"agentName": agents[i % 3]}});
        let started = Instant::now();
        let res = client
            .post(&url)
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
        let answer: serde_json::Value = res.json().await.unwrap();
        assert_eq!(answer["allowed"], true, "{answer}");
        if i >= 200 {
            times.push(started.elapsed());
        }
    }
    times.sort();
    println!(
        "switchAgent round trip (HTTP, loopback, stage-change answer), 2000 switches: median {:?}, p99 {:?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
    let _ = child.kill();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    stage_payload(&mut c);
    c.final_summary();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(switch_round_trip());
}
