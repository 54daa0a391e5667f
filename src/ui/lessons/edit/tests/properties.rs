//! Properties of the editor's draft edits, over generated input.

use super::super::*;
use crate::domain::lesson::config::LessonFacts;
use proptest::prelude::*;

fn condition(
    tool: &'static crate::domain::lesson::tools::TutorTool,
) -> BoxedStrategy<TriggerCondition> {
    let kinds = tool.allowed.to_vec();
    (
        prop::sample::select(kinds),
        prop::collection::vec("[a-z]{1,8}", 1..4),
        1u32..50,
    )
        .prop_map(|(kind, keywords, turns)| match kind.default_condition() {
            TriggerCondition::Keyword { .. } => TriggerCondition::Keyword { keywords },
            TriggerCondition::TurnCount { .. } => TriggerCondition::TurnCount { min_turns: turns },
            other => other,
        })
        .boxed()
}

/// Any configuration a teacher could have made: each tool listed or
/// not, on or off, with any allowed trigger, instructions, and chosen
/// by hand or not.
fn any_configuration() -> impl Strategy<Value = LessonToolConfiguration> {
    let tools: Vec<_> = TUTOR_TOOLS
        .iter()
        .map(|tool| {
            (
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                condition(tool),
                prop::option::of("[a-z ]{0,20}"),
            )
                .prop_map(move |(listed, enabled, chosen, trigger, text)| {
                    listed.then(|| {
                        (
                            ToolConfig {
                                tool_id: tool.id.to_owned(),
                                enabled,
                                trigger_condition: trigger,
                                custom_instructions: text,
                            },
                            chosen,
                        )
                    })
                })
        })
        .collect();
    (tools, prop::option::of("[a-z ]{0,20}")).prop_map(|(tools, global)| {
        let mut config = LessonToolConfiguration {
            global_instructions: global,
            ..Default::default()
        };
        for (tool, chosen) in tools.into_iter().flatten() {
            if chosen {
                config.teacher_choices.insert(tool.tool_id.clone());
            }
            config.tools.push(tool);
        }
        config
    })
}

fn any_facts() -> impl Strategy<Value = LessonFacts> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(has_tasks, is_review, has_review_items)| LessonFacts {
            has_tasks,
            is_review,
            has_review_items,
        },
    )
}

proptest! {
    #[test]
    fn smart_defaults_never_change_an_explicit_preset(
        mut config in any_configuration(),
        preset in prop::sample::select(Preset::ALL.to_vec()),
        lesson_changes in prop::collection::vec(any_facts(), 1..5),
    ) {
        use_preset(&mut config, preset);
        let chosen = config.clone();
        for facts in lesson_changes {
            prop_assert!(apply_smart_defaults(&mut config, facts).is_empty());
            prop_assert_eq!(&config, &chosen);
            prop_assert_eq!(Preset::for_lesson(&config, facts), Some(preset));
        }
    }

    #[test]
    fn a_preset_keeps_instructions_and_trigger_settings_unless_it_says_so(
        mut config in any_configuration(),
        preset in prop::sample::select(Preset::ALL.to_vec()),
    ) {
        let before = config.clone();
        let losses = preset_losses(&config, preset);
        use_preset(&mut config, preset);
        prop_assert_eq!(&config.global_instructions, &before.global_instructions);
        let mut lost = 0;
        for old in &before.tools {
            let new = config.tool(&old.tool_id).unwrap();
            prop_assert_eq!(&new.custom_instructions, &old.custom_instructions);
            // What the teacher set: keywords, turns or minutes.
            let set = match &old.trigger_condition {
                TriggerCondition::Keyword { keywords } => !keywords.is_empty(),
                TriggerCondition::TurnCount { .. } | TriggerCondition::TimeRemaining { .. } => true,
                _ => false,
            };
            if set && new.trigger_condition != old.trigger_condition {
                lost += 1;
            }
        }
        prop_assert_eq!(lost, losses.len());
        prop_assert!(config.problems().is_empty() || before.problems().len() >= config.problems().len());
    }

    #[test]
    fn smart_defaults_settle_in_one_pass(
        mut config in any_configuration(),
        facts in any_facts(),
    ) {
        apply_smart_defaults(&mut config, facts);
        let settled = config.clone();
        prop_assert!(apply_smart_defaults(&mut config, facts).is_empty());
        prop_assert_eq!(config, settled);
    }
}
