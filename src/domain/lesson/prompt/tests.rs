//! The builder's tests: golden prompts, each section's wording, and
//! property tests holding it equal to the reference builder kept here.

use super::input::token_text;
use super::writer::push_number;
use super::*;
use crate::domain::declaration::FunctionDeclaration;
use crate::domain::lesson::config::fits_lesson;
use crate::domain::lesson::config::Preset;
use crate::domain::lesson::config::ToolConfig;
use crate::domain::lesson::fixtures::review_items;
use crate::domain::lesson::optimise::estimate_tokens;
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::trigger::TriggerCondition;
use crate::domain::lesson::trigger::TriggerKind;
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};

fn cafe() -> LessonDraft {
    LessonDraft {
        title: "Café".into(),
        review_items: vec![],
        conversation_prompt:
            "You are Lucía, a waiter in a Madrid café.   Speak Spanish.\n\n\n\nStay in role.".into(),
        tool_configuration: Preset::StandardLesson.configuration(),
        tasks: vec![
            LessonTask {
                id: "greet".into(),
                text: "Greet the waiter".into(),
            },
            LessonTask {
                id: "order-drink".into(),
                text: "Order a drink".into(),
            },
        ],
        duration_minutes: Some(15),
        level: Some(CefrLevel::A2),
        review: false,
    }
}

/// `lesson`'s prompt as sessions and the editor build it (normal mode).
fn built(lesson: &LessonDraft) -> BuiltPrompt {
    build(&lesson.prompt_input(Some(OptimiseMode::Normal)))
}

/// The seed's own builder input (issue #15; the input `make bench`
/// times): six tools with keyword, time and task triggers, three tasks,
/// 15 minutes, A2, and two review items so the review tools fit.
fn seed_lesson() -> LessonDraft {
    serde_json::from_str(include_str!(
        "../../../../tests/fixtures/prompt/seed_lesson.json"
    ))
    .unwrap()
}

#[test]
fn the_seed_lessons_prompt_is_the_pinned_one() {
    let built = built(&seed_lesson());
    let golden = include_str!("../../../../tests/fixtures/prompt/seed_lesson.prompt.txt");
    assert_eq!(built.system_prompt, golden.strip_suffix('\n').unwrap());
    assert_eq!(built.estimated_tokens, 1298);
    assert_eq!(built.estimated_tokens, estimate_tokens(&built.token_text()));
    assert_eq!(built.stats, OptimisationStats::from_chars(1809, 1809));
    assert_eq!(built.student_tokens, 0);
    let costs: Vec<(&str, usize, usize, usize)> = built
        .tool_costs
        .iter()
        .map(|c| {
            (
                &*c.tool_id,
                c.declaration_tokens,
                c.instruction_tokens,
                c.total_tokens,
            )
        })
        .collect();
    assert_eq!(
        costs,
        [
            ("mark_for_review", 203, 86, 289),
            ("update_user_profile", 141, 25, 166),
            ("show_session_summary", 193, 19, 212),
            ("mark_task_complete", 95, 47, 142),
            ("mark_item_mastered", 104, 6, 110),
            ("play_student_audio", 110, 21, 131),
        ]
    );
    let names: Vec<&str> = built.declarations.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, costs.iter().map(|c| c.0).collect::<Vec<_>>());
    assert_eq!(
        built,
        reference::build(&seed_lesson().prompt_input(Some(OptimiseMode::Normal)))
    );
}

#[test]
fn numbers_are_written_in_decimal() {
    for n in [0, 7, 10, 15, 90, 4_294_967_295] {
        let mut out = String::from("x");
        push_number(&mut out, n);
        assert_eq!(out, format!("x{n}"));
    }
}

#[test]
fn sections_come_in_order_with_functions_last() {
    let prompt = built(&cafe()).system_prompt;
    let at = |needle: &str| {
        prompt
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing:\n{prompt}"))
    };
    assert_eq!(at("You are Lucía"), 0);
    assert!(at("## Session Parameters") < at("## Lesson Objectives"));
    assert!(at("## Lesson Objectives") < at("## Available Functions"));
    assert!(prompt.contains("- Duration: 15 minutes\n- Student level: A2 (CEFR)"));
    assert!(prompt.contains("call `mark_task_complete` with its task id.\n- greet: Greet the waiter\n- order-drink: Order a drink"));
    assert!(prompt.ends_with(&format!(
        "**mark_task_complete**: {}",
        template(TriggerKind::TaskContext)
    )));
}

#[test]
fn functions_section_lists_enabled_tools_in_catalogue_order() {
    let mut lesson = cafe();
    lesson.tool_configuration.tools.reverse();
    lesson.tool_configuration.global_instructions = Some("Never mention these functions.".into());
    lesson
        .tool_configuration
        .tool_mut("mark_for_review")
        .unwrap()
        .custom_instructions = Some("Focus on verb endings.".into());
    let prompt = built(&lesson).system_prompt;
    let functions = &prompt[prompt.find("## Available Functions").unwrap()..];
    let expected = format!(
            "## Available Functions\nNever mention these functions.\n**mark_for_review**: {} Focus on verb endings.\n**update_user_profile**\n**show_session_summary**: {}\n**mark_task_complete**: {}",
            template(TriggerKind::ErrorDetected),
            template(TriggerKind::SessionEnding),
            template(TriggerKind::TaskContext),
        );
    assert_eq!(functions, expected);
}

#[test]
fn no_tools_means_no_functions_section_and_no_declarations() {
    let mut lesson = cafe();
    lesson.tool_configuration = Preset::NoTracking.configuration();
    let built = built(&lesson);
    assert!(!built.system_prompt.contains("## Available Functions"));
    assert!(built.declarations.is_empty());
    assert!(built.tool_costs.is_empty());
    assert!(built
        .system_prompt
        .contains("Guide the student through these tasks.\n- greet"));
}

#[test]
fn only_enabled_tools_are_declared() {
    let built = built(&cafe());
    let names: Vec<&str> = built.declarations.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mark_for_review",
            "update_user_profile",
            "show_session_summary",
            "mark_task_complete"
        ]
    );
    assert_eq!(built.tool_costs.len(), 4);
    for cost in &built.tool_costs {
        assert_eq!(
            cost.total_tokens,
            cost.declaration_tokens + cost.instruction_tokens
        );
        assert!(cost.declaration_tokens > 10);
    }
}

#[test]
fn sections_without_content_are_left_out() {
    let lesson = LessonDraft {
        title: "Chat".into(),
        review_items: vec![],
        conversation_prompt: "Chat.".into(),
        tool_configuration: Preset::NoTracking.configuration(),
        tasks: vec![],
        duration_minutes: None,
        level: None,
        review: false,
    };
    assert_eq!(build(&lesson.prompt_input(None)).system_prompt, "Chat.");
}

#[test]
fn the_same_input_gives_byte_identical_output() {
    let a = built(&cafe());
    let b = built(&cafe());
    assert_eq!(a.system_prompt.as_bytes(), b.system_prompt.as_bytes());
    assert_eq!(
        serde_json::to_string(&a.declarations).unwrap(),
        serde_json::to_string(&b.declarations).unwrap()
    );
}

#[test]
fn optimising_removes_waste_and_reports_it() {
    let built = built(&cafe());
    assert!(built
        .system_prompt
        .starts_with("You are Lucía, a waiter in a Madrid café. Speak Spanish.\n\nStay in role."));
    assert!(
        built.stats.saved_tokens > 0 || built.stats.optimised_chars < built.stats.original_chars
    );
    let raw = build(&cafe().prompt_input(None));
    assert!(raw.system_prompt.contains("café.   Speak"));
    assert_eq!(raw.stats.saved_tokens, 0);
    assert_eq!(raw.estimated_tokens, estimate_tokens(&raw.token_text()));
    assert!(raw.token_text().starts_with(&raw.system_prompt));
    assert!(raw
        .token_text()
        .ends_with(&serde_json::to_string(raw.declarations.last().unwrap()).unwrap()));
}

#[test]
fn every_template_is_fully_interpolated() {
    let conditions = [
        TriggerCondition::Always,
        TriggerCondition::Keyword {
            keywords: vec!["hobby".into(), " family ".into()],
        },
        TriggerCondition::TurnCount { min_turns: 4 },
        TriggerCondition::TimeRemaining {
            minutes_remaining: 1,
        },
        TriggerCondition::TimeRemaining {
            minutes_remaining: 5,
        },
        TriggerCondition::TaskContext,
        TriggerCondition::ErrorDetected,
        TriggerCondition::SessionEnding,
    ];
    for condition in &conditions {
        let text = trigger_instruction(condition);
        assert!(!text.contains('{') && !text.contains('}'), "{text}");
    }
    assert_eq!(trigger_instruction(&conditions[0]), "");
    assert_eq!(
        trigger_instruction(&conditions[1]),
        "Call when the student mentions these topics: hobby, family."
    );
    assert_eq!(
        trigger_instruction(&conditions[2]),
        "Call after at least 4 turns of conversation."
    );
    assert_eq!(
        trigger_instruction(&conditions[3]),
        "Call when the session has about 1 minute left."
    );
    assert_eq!(
        trigger_instruction(&conditions[4]),
        "Call when the session has about 5 minutes left."
    );
    let errors = trigger_instruction(&conditions[6]);
    for kind in [
        "wrong tense",
        "conjugation",
        "word order",
        "incorrect sounds and stress",
        "wrong word",
        "false friends",
        "inappropriate formality",
    ] {
        assert!(errors.contains(kind), "{kind} missing: {errors}");
    }
    assert!(trigger_instruction(&conditions[7]).contains("Never call it mid-conversation"));
    let tasks = trigger_instruction(&conditions[5]);
    assert!(tasks.contains("once per task"));
    assert!(tasks.contains("wait for clear completion, not partial attempts"));
}

#[test]
fn task_completion_without_tasks_is_left_out_of_prompt_and_declarations() {
    let mut lesson = cafe();
    lesson.tasks.clear();
    let built = built(&lesson);
    assert!(!built.system_prompt.contains("mark_task_complete"));
    assert!(!built.system_prompt.contains("Lesson Objectives"));
    assert!(built
        .declarations
        .iter()
        .all(|d| d.name != "mark_task_complete"));
    assert!(built
        .tool_costs
        .iter()
        .all(|c| c.tool_id != "mark_task_complete"));
}

#[test]
fn review_tools_reach_only_a_review_lessons_prompt() {
    let mut lesson = cafe();
    lesson.tool_configuration = Preset::ReviewLesson.configuration();
    let names = |built: &BuiltPrompt| -> Vec<String> {
        built.declarations.iter().map(|d| d.name.clone()).collect()
    };
    let plain = built(&lesson);
    assert_eq!(names(&plain), ["mark_for_review", "show_session_summary"]);
    assert!(!plain.system_prompt.contains("mark_item_mastered"));
    lesson.review = true;
    assert_eq!(
        names(&built(&lesson)),
        ["mark_for_review", "show_session_summary"],
        "a review lesson without items has nothing to review"
    );
    lesson.review_items = review_items();
    let review = built(&lesson);
    assert_eq!(
        names(&review),
        [
            "mark_for_review",
            "show_session_summary",
            "mark_item_mastered",
            "play_student_audio"
        ]
    );
    assert!(review.system_prompt.contains("## Review Items"));
    assert!(review
        .system_prompt
        .contains("- fui: Ayer fui al mercado (recording)"));
    assert!(review.system_prompt.contains("- comi: Comí paella"));
    assert!(review
        .system_prompt
        .contains("call `mark_item_mastered` with its item id"));
    for id in ["mark_item_mastered", "play_student_audio"] {
        lesson.tool_configuration.tool_mut(id).unwrap().enabled = false;
    }
    let quiet = built(&lesson);
    assert!(quiet.system_prompt.contains("- fui: Ayer fui al mercado\n"));
    assert!(!quiet.system_prompt.contains("mark_item_mastered"));
    assert!(!quiet.system_prompt.contains("(recording)"));
    lesson.review = false;
    assert!(!built(&lesson).system_prompt.contains("## Review Items"));
}

#[test]
fn global_instructions_without_a_tool_are_left_out() {
    let mut lesson = cafe();
    lesson.tool_configuration = Preset::NoTracking.configuration();
    lesson.tool_configuration.global_instructions = Some("Never mention functions.".into());
    assert!(!built(&lesson)
        .system_prompt
        .contains("Never mention functions."));
}

/// The builder as it was before it was made fast (every declaration
/// built, serialised and estimated per call, sections joined from
/// per-line strings): the fast one must give the same result.
mod reference {
    use super::*;
    use crate::domain::lesson::optimise::{estimate_tokens, optimise};
    use crate::domain::lesson::tools::tutor_tool;

    /// The `## Review Items` section, `None` without items.
    fn prompt_section(items: &[ReviewItem], mastery: bool, audio: bool) -> Option<String> {
        if items.is_empty() {
            return None;
        }
        let mut section = String::from("## Review Items\nReview these items with the student.");
        if mastery {
            section.push_str(" When the student says one correctly and confidently, call `mark_item_mastered` with its item id.");
        }
        if audio && items.iter().any(|i| i.audio.is_some()) {
            section.push_str(" Items marked (recording) have the student's earlier recording: `play_student_audio` with the item id plays it.");
        }
        for item in items {
            let recording = if audio && item.audio.is_some() {
                " (recording)"
            } else {
                ""
            };
            section.push_str(&format!("\n- {}: {}{recording}", item.id, item.text.trim()));
        }
        Some(section)
    }

    fn trigger_instruction(condition: &TriggerCondition) -> String {
        let values: Vec<(&str, String)> = match condition {
            TriggerCondition::Keyword { keywords } => vec![(
                "keywords",
                keywords
                    .iter()
                    .map(|k| k.trim())
                    .collect::<Vec<_>>()
                    .join(", "),
            )],
            TriggerCondition::TurnCount { min_turns } => {
                vec![("minTurns", min_turns.to_string())]
            }
            TriggerCondition::TimeRemaining { minutes_remaining } => {
                vec![("minutesRemaining", minutes_phrase(*minutes_remaining))]
            }
            _ => Vec::new(),
        };
        interpolate(template(condition.kind()), &values)
    }

    fn tool_line(config: &ToolConfig) -> String {
        let words: Vec<String> = [
            Some(trigger_instruction(&config.trigger_condition)),
            config.instructions().map(str::to_owned),
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
        if words.is_empty() {
            format!("**{}**", config.tool_id)
        } else {
            format!("**{}**: {}", config.tool_id, words.join(" "))
        }
    }

    pub fn build(input: &PromptInput) -> BuiltPrompt {
        let facts = input.facts();
        let enabled: Vec<&ToolConfig> = input
            .configuration
            .enabled_in_catalogue_order()
            .into_iter()
            .filter(|t| fits_lesson(&t.tool_id, facts))
            .collect();
        let mut sections: Vec<String> = Vec::new();
        let conversation = input.conversation_prompt.trim();
        if !conversation.is_empty() {
            sections.push(conversation.to_owned());
        }
        let mut parameters = Vec::new();
        if let Some(minutes) = input.duration_minutes {
            parameters.push(format!("- Duration: {minutes} minutes"));
        }
        if let Some(level) = input.level {
            parameters.push(format!("- Student level: {level} (CEFR)"));
        }
        if !parameters.is_empty() {
            sections.push(format!("## Session Parameters\n{}", parameters.join("\n")));
        }
        if !input.tasks.is_empty() {
            let mut objectives = String::from("## Lesson Objectives\n");
            if enabled.iter().any(|t| t.tool_id == "mark_task_complete") {
                objectives.push_str("Guide the student through these tasks. When the student completes one, call `mark_task_complete` with its task id.\n");
            } else {
                objectives.push_str("Guide the student through these tasks.\n");
            }
            let list: Vec<String> = input
                .tasks
                .iter()
                .map(|t| format!("- {}: {}", t.id, t.text.trim()))
                .collect();
            objectives.push_str(&list.join("\n"));
            sections.push(objectives);
        }
        if input.review {
            let on = |id: &str| enabled.iter().any(|t| t.tool_id == id);
            if let Some(section) = prompt_section(
                input.review_items,
                on("mark_item_mastered"),
                on("play_student_audio"),
            ) {
                sections.push(section);
            }
        }
        let lines: Vec<String> = enabled.iter().map(|c| tool_line(c)).collect();
        if !enabled.is_empty() {
            let mut functions = String::from("## Available Functions\n");
            if let Some(global) = input.configuration.global() {
                functions.push_str(global);
                functions.push('\n');
            }
            functions.push_str(&lines.join("\n"));
            sections.push(functions);
        }
        let assembled = sections.join("\n\n");
        let system_prompt = match input.optimise {
            Some(mode) => optimise(&assembled, mode),
            None => assembled.clone(),
        };
        let declarations: Vec<Cow<'static, FunctionDeclaration>> = enabled
            .iter()
            .filter_map(|c| tutor_tool(&c.tool_id))
            .map(|t| Cow::Owned(t.declaration()))
            .collect();
        let declaration_tokens: Vec<usize> = declarations
            .iter()
            .map(|d| estimate_tokens(&serde_json::to_string(&**d).unwrap_or_default()))
            .collect();
        let tool_costs = enabled
            .iter()
            .zip(&lines)
            .zip(&declaration_tokens)
            .map(|((config, line), declaration)| {
                let instruction = estimate_tokens(line);
                ToolCost {
                    tool_id: config.tool_id.clone().into(),
                    declaration_tokens: *declaration,
                    instruction_tokens: instruction,
                    total_tokens: declaration + instruction,
                }
            })
            .collect();
        BuiltPrompt {
            estimated_tokens: estimate_tokens(&token_text(&system_prompt, &declarations)),
            stats: OptimisationStats::compare(&assembled, &system_prompt),
            system_prompt,
            declarations,
            tool_costs,
            student_tokens: 0,
        }
    }
}

mod same_as_reference {
    use super::*;
    use crate::domain::lesson::config::Preset;
    use crate::domain::lesson::tools::TUTOR_TOOLS;
    use crate::domain::lesson::trigger::MINUTE_MARKS;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        "[a-zé #\\-*\t\r\n]{0,40}"
    }

    /// Texts of words and single spaces, some lines headers: the
    /// pieces the builder may copy without normal mode's scan.
    fn tidy_text() -> impl Strategy<Value = String> {
        "(#{0,2} ?[a-zé*\\-]{1,5}( [a-zé#]{1,4}){0,2}\n{0,2}){0,4}"
    }

    fn condition() -> impl Strategy<Value = TriggerCondition> {
        prop_oneof![
            Just(TriggerCondition::Always),
            Just(TriggerCondition::ErrorDetected),
            Just(TriggerCondition::SessionEnding),
            Just(TriggerCondition::TaskContext),
            proptest::collection::vec("[a-z ]{0,8}", 0..4)
                .prop_map(|keywords| TriggerCondition::Keyword { keywords }),
            (0u32..50).prop_map(|min_turns| TriggerCondition::TurnCount { min_turns }),
            proptest::sample::select(MINUTE_MARKS.to_vec()).prop_map(|minutes_remaining| {
                TriggerCondition::TimeRemaining { minutes_remaining }
            }),
        ]
    }

    fn input() -> impl Strategy<Value = (LessonDraft, Option<OptimiseMode>)> {
        input_from(text)
    }

    fn input_from<S: Strategy<Value = String>>(
        text: fn() -> S,
    ) -> impl Strategy<Value = (LessonDraft, Option<OptimiseMode>)> {
        (
            text(),
            proptest::collection::vec(
                (any::<bool>(), condition(), proptest::option::of(text())),
                6,
            ),
            proptest::option::of(text()),
            proptest::collection::vec(("[a-z]{1,6}", text()), 0..4),
            proptest::collection::vec(("[a-z]{1,6}", text(), any::<bool>()), 0..3),
            (
                proptest::option::of(1u32..90),
                proptest::option::of(0usize..6),
            ),
            (any::<bool>(), 0u8..3, any::<bool>()),
        )
            .prop_map(
                |(
                    prompt,
                    tools,
                    global,
                    tasks,
                    items,
                    (minutes, level),
                    (review, optimise, reverse),
                )| {
                    let mut configuration = Preset::StandardLesson.configuration();
                    configuration.tools = TUTOR_TOOLS
                        .iter()
                        .zip(tools)
                        .map(|(tool, (enabled, condition, extra))| ToolConfig {
                            tool_id: tool.id.to_owned(),
                            enabled,
                            trigger_condition: condition,
                            custom_instructions: extra,
                        })
                        .collect();
                    if reverse {
                        configuration.tools.reverse();
                    }
                    configuration.global_instructions = global;
                    (
                        LessonDraft {
                            title: "Generated".into(),
                            conversation_prompt: prompt,
                            tool_configuration: configuration,
                            tasks: tasks
                                .into_iter()
                                .map(|(id, text)| LessonTask { id, text })
                                .collect(),
                            review_items: items
                                .into_iter()
                                .map(|(id, text, audio)| ReviewItem {
                                    id,
                                    text,
                                    audio: audio.then(|| "rec.webm".to_owned()),
                                })
                                .collect(),
                            duration_minutes: minutes,
                            level: level.map(|i| CefrLevel::ALL[i]),
                            review,
                        },
                        [
                            None,
                            Some(OptimiseMode::Normal),
                            Some(OptimiseMode::Aggressive),
                        ][optimise as usize],
                    )
                },
            )
    }

    proptest! {
        #[test]
        fn the_fast_builder_gives_what_the_reference_gives((lesson, optimise) in input()) {
            let input = lesson.prompt_input(optimise);
            prop_assert_eq!(build(&input), super::reference::build(&input));
        }

        #[test]
        fn tidy_texts_too((lesson, optimise) in input_from(tidy_text)) {
            let input = lesson.prompt_input(optimise);
            prop_assert_eq!(build(&input), super::reference::build(&input));
        }
    }
}
