//! Enforcement and admin-save costs of the tool bindings.
//!
//! `authorization_check`: "may tool T be called in workflow W" against a
//! 30-workflow × 100-tool matrix (target: median under 1 µs).
//! `validate_30x100`: validating and normalising that matrix.
//! `validate_and_save_30x100`: the whole admin save — validation against the
//! stored catalogue, diff, summary and the versioned insert into SQLite.

use criterion::{criterion_group, criterion_main, Criterion};
use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::hint::black_box;
use switchboard::domain::bindings::{Availability, ToolBindings};
use switchboard::domain::catalogue::{CatalogueTool, Workflow};
use switchboard::domain::ids::{ToolId, WorkflowId};

fn matrix() -> (ToolBindings, Vec<String>, Vec<String>) {
    let tools: Vec<String> = (0..100).map(|i| format!("tool_{i:03}")).collect();
    let workflows: Vec<String> = (0..30).map(|i| format!("workflow-{i:02}")).collect();
    let mut global = vec!["start_workflow".to_owned()];
    global.extend(tools[..5].iter().cloned());
    let per = workflows
        .iter()
        .enumerate()
        .map(|(w, id)| {
            let list = tools[5..]
                .iter()
                .enumerate()
                .filter(|(t, _)| (t + w) % 2 == 0)
                .map(|(_, t)| t.clone())
                .collect();
            (id.clone(), list)
        })
        .collect::<BTreeMap<_, _>>();
    let mut all_tools = tools;
    all_tools.push("start_workflow".into());
    (
        ToolBindings {
            global,
            workflows: per,
            labels: Default::default(),
        },
        all_tools,
        workflows,
    )
}

fn benches(c: &mut Criterion) {
    let (bindings, tools, workflows) = matrix();
    let availability = Availability::new(&bindings);
    assert!(availability.allows("workflow-07", "tool_006"));
    c.bench_function("authorization_check", |b| {
        b.iter(|| black_box(&availability).allows(black_box("workflow-17"), black_box("tool_042")))
    });

    let known_tools: HashSet<String> = tools.iter().cloned().collect();
    let known_workflows: HashSet<String> = workflows.iter().cloned().collect();
    c.bench_function("validate_30x100", |b| {
        b.iter(|| {
            black_box(&bindings)
                .validate(&known_tools, &known_workflows)
                .unwrap()
        })
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = runtime
        .block_on(switchboard::server::platform::db::connect(&format!(
            "sqlite://{}/bench.db",
            dir.path().display()
        )))
        .unwrap();
    runtime.block_on(async {
        let catalogue = tools
            .iter()
            .map(|id| CatalogueTool {
                id: ToolId::parse(id).unwrap(),
                name: id.clone(),
                description: "Benchmark tool.".into(),
                category: "bench".into(),
                parameters: serde_json::json!({"type": "object"}),
                requires: Vec::new(),
                effects: Vec::new(),
                ultravox_builtin: false,
            })
            .collect();
        let system = switchboard::domain::actor::Actor::system("bench");
        switchboard::server::catalogue::seed_missing(&db, &system, catalogue)
            .await
            .unwrap();
        for id in &workflows {
            let workflow = Workflow {
                id: WorkflowId::parse(id).unwrap(),
                name: id.clone(),
                description: String::new(),
            };
            switchboard::server::store::bindings::put_workflow(&db, &workflow, true)
                .await
                .unwrap();
        }
    });
    let version = Cell::new(0i64);
    // Alternate between two documents so every save records a real change.
    let mut other = bindings.clone();
    other.workflows.get_mut("workflow-00").unwrap().pop();
    c.bench_function("validate_and_save_30x100", |b| {
        b.iter(|| {
            let v = version.get();
            let doc = if v % 2 == 0 { &bindings } else { &other };
            let saved = runtime
                .block_on(switchboard::server::catalogue::bindings::save_document(
                    &db, v, doc, None, "bench", None,
                ))
                .unwrap();
            version.set(saved.version);
        })
    });
}

criterion_group!(bindings, benches);
criterion_main!(bindings);
