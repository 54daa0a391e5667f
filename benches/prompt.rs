//! How fast the lesson prompt is assembled and counted.
//!
//! `build_full_lesson`: filter + templates + assemble + optimise + estimate for
//! a realistic lesson with all six tools (target: median under 20 µs).
//! `bpe_count_10k_tokens`: the exact o200k_base count of a ~10,000-token
//! prompt (target: under 5 ms).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use switchboard::domain::lesson::config::{LessonToolConfiguration, Preset};
use switchboard::domain::lesson::optimise::OptimiseMode;
use switchboard::domain::lesson::prompt::{build, PromptInput};
use switchboard::domain::lesson::review::ReviewItem;
use switchboard::domain::lesson::trigger::TriggerCondition;
use switchboard::domain::lesson::{CefrLevel, LessonTask};

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

fn lesson() -> PromptInput {
    PromptInput {
        conversation_prompt: "You are Lucía, a friendly waiter in a busy café in Madrid.  Speak only Spanish, \
slowly and clearly.\n\n\n\nStay in role: greet the student, take their order, and bring the bill when asked.   \n\
If the student is stuck, offer two short options rather than translating.\n\n## Notes\n"
            .repeat(3),
        configuration: all_six_tools(),
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
        optimise: Some(OptimiseMode::Normal),
    }
}

fn benches(c: &mut Criterion) {
    let input = lesson();
    assert_eq!(build(&input).declarations.len(), 6);
    c.bench_function("build_full_lesson", |b| b.iter(|| build(black_box(&input))));

    let long = "The student should practise ordering food, asking for directions and talking about their weekend. "
        .repeat(625);
    let tokens = switchboard::server::tokens::count_blocking(&long).unwrap();
    assert!((9_000..=11_000).contains(&tokens), "{tokens} tokens");
    c.bench_function("bpe_count_10k_tokens", |b| {
        b.iter(|| switchboard::server::tokens::count_blocking(black_box(&long)).unwrap())
    });
}

criterion_group!(prompt, benches);
criterion_main!(prompt);
