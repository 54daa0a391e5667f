//! How fast the lesson prompt is assembled and counted.
//!
//! `build_full_lesson`: filter + templates + assemble + optimise + estimate for
//! a realistic lesson with all six tools (target: median under 20 µs).
//! `build_seed_lesson`: the same on the seed's own builder input, from the
//! lesson as the server holds it (`prompt_input`, then `build`; issue
//! #40's target: at least 10× faster than the seed's own builder under
//! Node), then the seed's builder as its design document wrote it,
//! transcribed to JavaScript (`benches/peers/prompt_builder.mjs`), under
//! Node on the same input in the same run, both timed the same way
//! (batches of 2,000 builds), a batch of each in turn. The seed's output is worded differently from ours, so the
//! peer checks its own output for sanity instead of comparing; ours for
//! this input is pinned by `domain::lesson::prompt`'s golden test.
//! `bpe_count_10k_tokens`: the exact o200k_base count of a ~10,000-token
//! prompt (target: under 5 ms).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
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

/// Batches each side times, alternating.
const ROUNDS: usize = 60;
/// Builds per batch, on both sides.
const BATCH: u32 = 2000;

/// Mean time per call of `f` over one batch, in microseconds.
fn batch_micros(mut f: impl FnMut()) -> f64 {
    let started = std::time::Instant::now();
    for _ in 0..BATCH {
        f();
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(BATCH)
}

/// The median and the 99th percentile of `values`.
fn median_p99(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// Runs the seed's own builder under Node on the seed input (it checks its
/// own output first) side by side with ours: a batch of ours, then a batch
/// of Node's (asked for over its stdin), sixty times, so each pair is timed
/// at the same moment of the machine, whose speed can change twofold from
/// one second to the next (timing all of one side, then all of the other,
/// read anywhere from 5× to 12× on one machine). Prints both sides' median
/// and p99 per build, the ratio of the medians, and the pairs' ratios.
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
    let peer =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/prompt_builder.mjs");
    let child = std::process::Command::new("node")
        .arg(peer)
        .arg(&input_path)
        .arg(&declarations_path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            println!("Node peer not run ({e})");
            return;
        }
    };
    let mut to_node = child.stdin.take().unwrap();
    let mut from_node = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut read_line = |line: &mut String| {
        line.clear();
        from_node.read_line(line).unwrap();
        assert!(
            !line.is_empty(),
            "the Node peer stopped (its own sanity check failed?)"
        );
        line.trim().to_owned()
    };
    assert_eq!(read_line(&mut line), "ready");
    let mut ours = || {
        black_box(build(&black_box(draft).prompt_input(NORMAL)));
    };
    for _ in 0..20_000 {
        ours();
    }
    let pairs: Vec<(f64, f64)> = (0..ROUNDS)
        .map(|_| {
            let rust = batch_micros(&mut ours);
            writeln!(to_node, "batch").unwrap();
            let node: f64 = read_line(&mut line).parse().unwrap();
            (rust, node)
        })
        .collect();
    drop(to_node);
    child.wait().unwrap();
    let (rust, rust_p99) = median_p99(pairs.iter().map(|p| p.0).collect());
    let (node, node_p99) = median_p99(pairs.iter().map(|p| p.1).collect());
    let mut ratios: Vec<f64> = pairs.iter().map(|(r, n)| n / r).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "seed lesson prompt build, {ROUNDS} paired batches of {BATCH}, per build: \
         Rust median {rust:.3} µs (p99 {rust_p99:.3}), \
         Node (the seed's own builder) median {node:.2} µs (p99 {node_p99:.2}): \
         Node/Rust = {:.1}x of the medians; per pair median {:.1}x, lowest {:.1}x",
        node / rust,
        ratios[ratios.len() / 2],
        ratios[0]
    );
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
