//! A lesson's tool configuration: which tutor tools are on, when each fires,
//! and the teacher's extra instructions — plus presets, validation and the
//! smart defaults that follow the lesson form.
//!
//! Kept apart from the teacher's free-form prompt on purpose: editing the
//! prompt can no longer weaken or delete a tool instruction.

mod configuration;
mod defaults;
mod facts;
mod preset;
pub use configuration::*;
pub use defaults::*;
pub use facts::*;
pub use preset::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind};
    use serde_json::json;

    fn enabled(config: &LessonToolConfiguration) -> Vec<(&str, TriggerKind)> {
        config
            .enabled_in_catalogue_order()
            .into_iter()
            .map(|t| (t.tool_id.as_str(), t.trigger_condition.kind()))
            .collect()
    }

    #[test]
    fn every_preset_enables_exactly_its_tools_with_its_triggers() {
        use TriggerKind::*;
        assert_eq!(
            enabled(&Preset::StandardLesson.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("update_user_profile", Always),
                ("show_session_summary", SessionEnding),
                ("mark_task_complete", TaskContext)
            ]
        );
        assert_eq!(
            enabled(&Preset::ReviewLesson.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("show_session_summary", SessionEnding),
                ("mark_item_mastered", Always),
                ("play_student_audio", Always)
            ]
        );
        assert_eq!(
            enabled(&Preset::ConversationOnly.configuration()),
            [
                ("mark_for_review", ErrorDetected),
                ("show_session_summary", SessionEnding)
            ]
        );
        assert!(enabled(&Preset::NoTracking.configuration()).is_empty());
        for preset in Preset::ALL {
            let config = preset.configuration();
            assert_eq!(config.tools.len(), 6, "{preset:?} lists every tool");
            assert!(config.problems().is_empty(), "{preset:?} is valid");
            assert_eq!(Preset::matching(&config), Some(preset));
            assert_eq!(Preset::parse(preset.as_str()), Some(preset));
        }
    }

    #[test]
    fn the_configuration_json_is_camel_case_with_tagged_triggers() {
        let mut config = Preset::ConversationOnly.configuration();
        config.tools[0].custom_instructions = Some("Focus on past tenses.".into());
        config.global_instructions = Some("Be brief.".into());
        let value = serde_json::to_value(&config).unwrap();
        assert_eq!(value["tools"][0]["toolId"], "mark_for_review");
        assert_eq!(
            value["tools"][0]["triggerCondition"],
            json!({"type": "error_detected"})
        );
        assert_eq!(
            value["tools"][0]["customInstructions"],
            "Focus on past tenses."
        );
        assert_eq!(value["globalInstructions"], "Be brief.");
        assert!(value.get("teacherChoices").is_none());
        let back: LessonToolConfiguration = serde_json::from_value(value).unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn a_trigger_the_tool_does_not_allow_is_refused_naming_tool_and_rule() {
        let mut config = Preset::StandardLesson.configuration();
        config
            .tool_mut("show_session_summary")
            .unwrap()
            .trigger_condition = TriggerCondition::Always;
        let err = config.validate().unwrap_err();
        assert_eq!(err.field, "tools[2].triggerCondition.type");
        assert_eq!(
            err.rule,
            "Session Summary (show_session_summary): trigger always is not allowed; allowed: session_ending, time_remaining"
        );
    }

    #[test]
    fn duplicates_and_unknown_ids_are_refused() {
        let mut config = Preset::NoTracking.configuration();
        config.tools.push(config.tools[0].clone());
        config.tools.push(ToolConfig {
            tool_id: "launch_rocket".into(),
            ..config.tools[0].clone()
        });
        let problems = config.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].field, "tools[6].toolId");
        assert!(problems[0]
            .rule
            .contains("Error Tracking (mark_for_review) is listed twice"));
        assert_eq!(problems[1].field, "tools[7].toolId");
        assert_eq!(problems[1].rule, "unknown tool id \"launch_rocket\"");
    }

    #[test]
    fn keyword_problems_name_the_keywords_field() {
        let mut config = Preset::StandardLesson.configuration();
        config
            .tool_mut("update_user_profile")
            .unwrap()
            .trigger_condition = TriggerCondition::Keyword { keywords: vec![] };
        let err = config.validate().unwrap_err();
        assert_eq!(err.field, "tools[1].triggerCondition.keywords");
        assert_eq!(
            err.rule,
            "Profile Learning (update_user_profile): needs at least one keyword"
        );
    }

    #[test]
    fn instructions_over_2000_characters_are_refused() {
        let mut config = Preset::StandardLesson.configuration();
        config.tools[3].custom_instructions = Some("x".repeat(2000));
        assert!(config.validate().is_ok());
        config.tools[3].custom_instructions = Some("é".repeat(2001));
        assert_eq!(
            config.validate().unwrap_err().field,
            "tools[3].customInstructions"
        );
        config.tools[3].custom_instructions = None;
        config.global_instructions = Some("x".repeat(2001));
        assert_eq!(config.validate().unwrap_err().field, "globalInstructions");
    }

    #[test]
    fn tasks_turn_task_completion_on_and_say_so() {
        let mut config = Preset::ConversationOnly.configuration();
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].message, "Task tracking enabled automatically");
        let task = config.tool("mark_task_complete").unwrap();
        assert!(task.enabled);
        assert_eq!(task.trigger_condition, TriggerCondition::TaskContext);
        assert!(apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            }
        )
        .is_empty());
    }

    #[test]
    fn a_missing_task_tool_is_added_with_task_context() {
        let mut config = LessonToolConfiguration::default();
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        let ids: Vec<&str> = changes.iter().map(|c| c.tool_id.as_str()).collect();
        assert_eq!(ids, ["mark_task_complete", "show_session_summary"]);
        assert_eq!(
            config
                .tool("show_session_summary")
                .unwrap()
                .trigger_condition,
            TriggerCondition::SessionEnding
        );
    }

    #[test]
    fn a_review_lesson_gets_mastery_and_audio_with_always() {
        let mut config = Preset::StandardLesson.configuration();
        apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: false,
                is_review: true,
                has_review_items: false,
            },
        );
        for id in ["mark_item_mastered", "play_student_audio"] {
            let tool = config.tool(id).unwrap();
            assert!(tool.enabled, "{id}");
            assert_eq!(tool.trigger_condition, TriggerCondition::Always);
        }
    }

    #[test]
    fn without_tasks_or_review_smart_defaults_turn_those_tools_off_and_say_so() {
        let mut config = Preset::StandardLesson.configuration();
        config.tool_mut("mark_item_mastered").unwrap().enabled = true;
        let changes = apply_smart_defaults(&mut config, LessonFacts::default());
        let messages: Vec<&str> = changes.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Task tracking turned off automatically: the lesson has no tasks",
                "Mastery marking turned off automatically: not a review lesson"
            ]
        );
        assert_eq!(
            Preset::for_lesson(&config, LessonFacts::default()),
            Some(Preset::StandardLesson)
        );
        assert_eq!(Preset::matching(&config), None);
    }

    #[test]
    fn a_chosen_tool_gets_a_suggestion_instead_of_a_change() {
        let mut config = Preset::NoTracking.configuration();
        config.set_enabled_by_teacher("mark_task_complete", false);
        let facts = LessonFacts {
            has_tasks: true,
            is_review: false,
            has_review_items: false,
        };
        assert!(apply_smart_defaults(&mut config, facts).is_empty());
        let suggested = suggestions(&config, facts);
        assert_eq!(suggested.len(), 1);
        assert_eq!(suggested[0].tool_id, "mark_task_complete");
        assert!(suggestions(&config, LessonFacts::default()).is_empty());
    }

    #[test]
    fn the_menu_reads_a_preset_with_its_unusable_tools_set_aside_but_not_others() {
        let facts = LessonFacts::default();
        let conversation = Preset::ConversationOnly.configuration();
        assert_eq!(
            Preset::for_lesson(&conversation, facts),
            Some(Preset::ConversationOnly)
        );
        let mut mastery_only = conversation.clone();
        mastery_only.tool_mut("mark_item_mastered").unwrap().enabled = true;
        assert_eq!(Preset::for_lesson(&mastery_only, facts), None);
        assert!(fits_lesson("mark_for_review", facts));
        assert!(!fits_lesson("mark_task_complete", facts));
        assert!(!fits_lesson("play_student_audio", facts));
    }

    #[test]
    fn a_teachers_explicit_choice_is_never_reversed() {
        let mut config = Preset::StandardLesson.configuration();
        config.set_enabled_by_teacher("mark_task_complete", false);
        let changes = apply_smart_defaults(
            &mut config,
            LessonFacts {
                has_tasks: true,
                is_review: false,
                has_review_items: false,
            },
        );
        assert!(changes.is_empty());
        assert!(!config.is_enabled("mark_task_complete"));
        // A disabled summary the teacher did not touch stays disabled: it is
        // only added when missing.
        let mut config = Preset::NoTracking.configuration();
        assert!(apply_smart_defaults(&mut config, LessonFacts::default()).is_empty());
        assert!(!config.is_enabled("show_session_summary"));
    }
}
