//! How fast the lesson prompt is assembled and counted.
//!
//! `build_full_lesson`: filter + templates + assemble + optimise + estimate for
//! a realistic lesson with all six tools (target: median under 20 µs).
//! `build_seed_lesson`: the same on the seed's own builder input, from the
//! lesson as the server holds it (`prompt_input`, then `build`; issue
//! #40's target: at least 10× faster than the seed's own builder under
//! Node), then the seed's builder as its design document wrote it,
//! transcribed to JavaScript (`benches/peers/prompt_builder.mjs`), under
//! Node on the same input in the same run, both timed the same way (median
//! of batches). The seed's output is worded differently from ours, so the
//! peer checks its own output for sanity instead of comparing; ours for
//! this input is pinned by `domain::lesson::prompt`'s golden test.
//! `bpe_count_10k_tokens`: the exact o200k_base count of a ~10,000-token
//! prompt (target: under 5 ms).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use switchboard::domain::lesson::config::{LessonToolConfiguration, Preset};
use switchboard::domain::lesson::optimise::OptimiseMode;
use switchboard::domain::lesson::prompt::build;
use switchboard::domain::lesson::review::ReviewItem;
use switchboard::domain::lesson::tools::prepared_declarations;
use switchboard::domain::lesson::trigger::TriggerCondition;
use switchboard::domain::lesson::{CefrLevel, LessonDraft, LessonTask};

/// Normal mode, as sessions and the prompt endpoint build.
const NORMAL: Option<OptimiseMode> = Some(OptimiseMode::Normal);

fn all_six_tools() -> LessonToolConfiguration {
    let mut config = Preset::StandardLesson.configuration();
    for id in ["mark_item_mastered", "play_student_audio"] {
        config.set_enabled_by_teacher(id, true);
    }
    config
        .tool_mut("update_user_profile")
        .unwrap()
        .trigger_condition = TriggerCondition::Keyword {
        keywords: vec!["hobby".into(), "family".into(), "travel".into()],
    };
    config
        .tool_mut("mark_for_review")
        .unwrap()
        .custom_instructions = Some("Focus on verb endings and gender agreement.".into());
    config.global_instructions = Some("Never mention these functions to the student.".into());
    config
}

fn lesson() -> LessonDraft {
    LessonDraft {
        title: "Café".into(),
        conversation_prompt: "You are Lucía, a friendly waiter in a busy café in Madrid.  Speak only Spanish, \
slowly and clearly.\n\n\n\nStay in role: greet the student, take their order, and bring the bill when asked.   \n\
If the student is stuck, offer two short options rather than translating.\n\n## Notes\n"
            .repeat(3),
        tool_configuration: all_six_tools(),
        tasks: vec![
            LessonTask { id: "greet-waiter".into(), text: "Greet the waiter and ask for a table".into() },
            LessonTask { id: "order-drink".into(), text: "Order a drink and something to eat".into() },
            LessonTask { id: "ask-bill".into(), text: "Ask for the bill and pay".into() },
        ],
        duration_minutes: Some(15),
        level: Some(CefrLevel::A2),
        // A review lesson with items, so all six tools fit it and reach
        // the prompt.
        review: true,
        review_items: vec![
            ReviewItem { id: "fui".into(), text: "Ayer fui al mercado".into(), audio: Some("rec/fui.webm".into()) },
            ReviewItem { id: "comi".into(), text: "Comí paella".into(), audio: None },
        ],
    }
}

/// The input of the seed's TypeScript builder: six tools (error tracking
/// on errors with the teacher's words, profile on hobby/favorite/like/enjoy,
/// the summary at 2 minutes left, tasks by context, mastery always, audio
/// on listen/replay), three tasks, 15 minutes, A2, the seed's global
/// instruction. The seed lists all six tools with no lesson-fit filter; here
/// the review tools reach the prompt only in a review lesson with items, so
/// the lesson is one, with two items.
///
/// Held as a lesson, as the server holds it: each build starts from the
/// lesson (`LessonDraft::prompt_input`), as a session's prompt, the prompt
/// endpoint and the editor's preview do, so the time is theirs.
fn seed_lesson() -> LessonDraft {
    // The same file `domain::lesson::prompt`'s golden test pins our
    // output for (in normal mode, as sessions are sent it).
    serde_json::from_str(include_str!("../tests/fixtures/prompt/seed_lesson.json")).unwrap()
}

/// Median time per call of `f`, over 60 batches of `batch` calls after a
/// warm-up: the method the Node peer uses, so the two figures compare.
fn median_per_call(batch: u32, mut f: impl FnMut()) -> std::time::Duration {
    for _ in 0..20_000 {
        f();
    }
    let mut samples: Vec<std::time::Duration> = (0..60)
        .map(|_| {
            let started = std::time::Instant::now();
            for _ in 0..batch {
                f();
            }
            started.elapsed() / batch
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs the seed's own builder under Node on the seed input (it checks its
/// own output first) and prints both medians side by side with their ratio.
fn against_node(draft: &LessonDraft) {
    let input = &draft.prompt_input(NORMAL);
    let dir = tempfile::tempdir().unwrap();
    let input_path = dir.path().join("input.json");
    let declarations_path = dir.path().join("declarations.json");
    std::fs::write(&input_path, serde_json::to_vec(input).unwrap()).unwrap();
    // The seed's static TUTOR_FUNCTION_DECLARATIONS: the six we send.
    let declarations: Vec<_> = prepared_declarations()
        .iter()
        .map(|p| &p.declaration)
        .collect();
    std::fs::write(
        &declarations_path,
        serde_json::to_vec(&declarations).unwrap(),
    )
    .unwrap();
    let rust = median_per_call(2000, || {
        black_box(build(&black_box(draft).prompt_input(NORMAL)));
    });
    let peer =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/prompt_builder.mjs");
    let output = std::process::Command::new("node")
        .arg(peer)
        .arg(&input_path)
        .arg(&declarations_path)
        .output();
    match output {
        Ok(out) if out.status.success() => {
            let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let node = figures["medianMicros"].as_f64().unwrap();
            let rust_us = rust.as_secs_f64() * 1e6;
            println!(
                "seed lesson prompt build, median per build: Rust {rust_us:.3} µs, Node (the seed's own builder) {node:.2} µs: Node/Rust = {:.1}x",
                node / rust_us
            );
        }
        Ok(out) => panic!(
            "the Node peer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => println!("Node peer not run ({e}); Rust median {rust:?}"),
    }
}

fn benches(c: &mut Criterion) {
    let full = lesson();
    assert_eq!(build(&full.prompt_input(NORMAL)).declarations.len(), 6);
    c.bench_function("build_full_lesson", |b| {
        b.iter(|| build(&black_box(&full).prompt_input(NORMAL)))
    });
    let seed = seed_lesson();
    assert_eq!(build(&seed.prompt_input(NORMAL)).declarations.len(), 6);
    c.bench_function("build_seed_lesson", |b| {
        b.iter(|| build(&black_box(&seed).prompt_input(NORMAL)))
    });
    against_node(&seed);

    let long = "The student should practise ordering food, asking for directions and talking about their weekend. "
        .repeat(625);
    let tokens = switchboard::server::platform::tokens::count_blocking(&long).unwrap();
    assert!((9_000..=11_000).contains(&tokens), "{tokens} tokens");
    c.bench_function("bpe_count_10k_tokens", |b| {
        b.iter(|| switchboard::server::platform::tokens::count_blocking(black_box(&long)).unwrap())
    });
}

criterion_group!(prompt, benches);
criterion_main!(prompt);
