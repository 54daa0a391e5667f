//! Unit tests of the lesson editor's pure edits, kept beside them so the
//! module itself stays short.

use super::*;
use crate::domain::lesson::trigger::TriggerKind;

const SUMMARY: &str = "show_session_summary";

fn bare() -> LessonDraft {
    let mut draft = LessonDraft::new("Café");
    draft.tool_configuration = LessonToolConfiguration::default();
    draft
}

#[test]
fn a_change_is_followed_by_smart_defaults_and_reported() {
    let mut draft = bare();
    let notices = edit_draft(&mut draft, |d| add_task(d, "Order a drink"));
    assert_eq!(draft.tasks.len(), 1);
    assert!(!notices.is_empty(), "adding a task turns task tracking on");
    assert!(draft.tool_configuration.is_enabled("mark_task_complete"));
    // Applying the same facts again changes nothing more.
    assert!(edit_draft(&mut draft, |_| {}).is_empty());
}

#[test]
fn review_items_get_unique_ids_and_keep_only_a_real_recording() {
    let mut draft = bare();
    add_review_item(&mut draft, " Ayer fui al cine ", "  ");
    add_review_item(&mut draft, "Ayer fui al cine", "rec/2.webm");
    add_review_item(&mut draft, "  ", "rec/3.webm");
    let items: Vec<(&str, Option<&str>)> = draft
        .review_items
        .iter()
        .map(|i| (i.id.as_str(), i.audio.as_deref()))
        .collect();
    assert_eq!(
        items,
        [
            ("ayer-fui-al-cine", None),
            ("ayer-fui-al-cine-2", Some("rec/2.webm"))
        ]
    );
    assert!(draft.problems().is_empty());
}

#[test]
fn tasks_get_unique_ids_and_blank_ones_are_ignored() {
    let mut draft = bare();
    add_task(&mut draft, "  Order a drink ");
    add_task(&mut draft, "Order a drink");
    add_task(&mut draft, "   ");
    let ids: Vec<&str> = draft.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert_eq!(draft.tasks[0].text, "Order a drink");
}

#[test]
fn a_preset_keeps_the_instructions_for_all_tools() {
    let mut config = LessonToolConfiguration {
        global_instructions: Some("Be brief.".into()),
        ..Default::default()
    };
    use_preset(&mut config, Preset::ReviewLesson);
    assert_eq!(config.global_instructions.as_deref(), Some("Be brief."));
    assert_eq!(Preset::matching(&config), Some(Preset::ReviewLesson));
    assert_eq!(
        enabled_count(&config),
        config.enabled_in_catalogue_order().len()
    );
}

#[test]
fn a_preset_keeps_what_the_teacher_wrote_and_names_what_it_would_drop() {
    let mut config = Preset::StandardLesson.configuration();
    edit_tool(&mut config, "update_user_profile", |t| {
        t.trigger_condition = TriggerCondition::Keyword {
            keywords: vec!["hobby".into(), "family".into()],
        };
        t.custom_instructions = Some("Only volunteered facts.".into());
    });
    edit_tool(&mut config, "mark_item_mastered", |t| {
        t.trigger_condition = TriggerCondition::Keyword {
            keywords: vec!["past".into()],
        };
    });
    // Review leaves Profile Learning off: its keywords stay; it turns
    // Mastery Marking on with `always`, so those keywords would go.
    assert_eq!(
        preset_losses(&config, Preset::ReviewLesson),
        ["Mastery Marking (review lessons): keywords past"]
    );
    assert!(preset_losses(&config, Preset::NoTracking).is_empty());
    // Turns and minutes are settings too.
    let mut turns = config.clone();
    edit_tool(&mut turns, "mark_item_mastered", |t| {
        t.trigger_condition = TriggerCondition::TurnCount { min_turns: 7 };
    });
    assert_eq!(
        preset_losses(&turns, Preset::ReviewLesson),
        ["Mastery Marking (review lessons): after 7 turns"]
    );
    // Standard turns it on with `always`: the keywords would go.
    assert_eq!(
        preset_losses(&config, Preset::StandardLesson),
        ["Profile Learning: keywords hobby, family"]
    );
    let mut review = config.clone();
    use_preset(&mut review, Preset::ReviewLesson);
    let profile = review.tool("update_user_profile").unwrap();
    assert!(!profile.enabled);
    assert_eq!(keywords_of(&profile.trigger_condition), ["hobby", "family"]);
    assert_eq!(
        profile.custom_instructions.as_deref(),
        Some("Only volunteered facts.")
    );
    // Mastery is turned on with `always`; the review preset wins.
    assert_eq!(
        review.tool("mark_item_mastered").unwrap().trigger_condition,
        TriggerCondition::Always
    );
    use_preset(&mut config, Preset::StandardLesson);
    let profile = config.tool("update_user_profile").unwrap();
    assert_eq!(profile.trigger_condition, TriggerCondition::Always);
    assert_eq!(
        profile.custom_instructions.as_deref(),
        Some("Only volunteered facts.")
    );
}

#[test]
fn picking_no_tracking_on_a_lesson_with_tasks_stays_no_tracking() {
    let mut draft = bare();
    add_task(&mut draft, "Order a drink");
    edit_draft(&mut draft, |d| {
        use_preset(&mut d.tool_configuration, Preset::NoTracking)
    });
    assert!(edit_draft(&mut draft, |d| d.title = "Café 2".into()).is_empty());
    assert_eq!(enabled_count(&draft.tool_configuration), 0);
    assert_eq!(
        Preset::for_lesson(&draft.tool_configuration, draft.facts()),
        Some(Preset::NoTracking)
    );
}

#[test]
fn an_unconfigured_tool_reads_as_its_disabled_default() {
    let config = LessonToolConfiguration::default();
    let summary = config_of(&config, SUMMARY);
    assert!(!summary.enabled);
    assert_eq!(Some(summary), ToolConfig::default_for(SUMMARY, false));
    let unknown = config_of(&config, "no_such_tool");
    assert_eq!(unknown.trigger_condition, TriggerCondition::Always);
    assert_eq!(enabled_count(&config), 0);
}

#[test]
fn editing_a_missing_tool_adds_it_first_and_unknown_ids_change_nothing() {
    let mut config = LessonToolConfiguration::default();
    edit_tool(&mut config, SUMMARY, |t| {
        t.custom_instructions = Some("x".into())
    });
    let summary = config.tool(SUMMARY).unwrap();
    assert!(!summary.enabled);
    assert_eq!(summary.custom_instructions.as_deref(), Some("x"));
    edit_tool(&mut config, "no_such_tool", |t| t.enabled = true);
    assert_eq!(config.tools.len(), 1);
}

#[test]
fn keyword_edits_turn_the_trigger_into_a_keyword_trigger() {
    let mut tool = ToolConfig::default_for(SUMMARY, true).unwrap();
    assert!(keywords_of(&tool.trigger_condition).is_empty());
    edit_keywords(&mut tool, |list| list.push("food".into()));
    edit_keywords(&mut tool, |list| list.push("drinks".into()));
    assert_eq!(tool.trigger_condition.kind(), TriggerKind::Keyword);
    assert_eq!(keywords_of(&tool.trigger_condition), ["food", "drinks"]);
    edit_keywords(&mut tool, |list| {
        list.remove(0);
    });
    assert_eq!(keywords_of(&tool.trigger_condition), ["drinks"]);
}

#[test]
fn trigger_parameters_fall_back_to_their_defaults() {
    let minutes = TriggerCondition::TimeRemaining {
        minutes_remaining: 5,
    };
    let turns = TriggerCondition::TurnCount { min_turns: 9 };
    assert_eq!(minutes_remaining(&minutes), 5);
    assert_eq!(min_turns(&turns), 9);
    assert_eq!(minutes_remaining(&turns), DEFAULT_MINUTES_REMAINING);
    assert_eq!(min_turns(&TriggerCondition::Always), DEFAULT_MIN_TURNS);
}

#[test]
fn a_tool_problem_is_found_by_the_tool_position_in_the_draft() {
    let mut draft = bare();
    edit_tool(&mut draft.tool_configuration, "mark_for_review", |_| {});
    edit_tool(&mut draft.tool_configuration, SUMMARY, |_| {});
    let problems = vec![FieldError::new(
        "toolConfiguration.tools[1].customInstructions",
        "is too long",
    )];
    assert_eq!(
        tool_problem(&draft, &problems, SUMMARY).as_deref(),
        Some("is too long")
    );
    assert_eq!(tool_problem(&draft, &problems, "mark_for_review"), None);
    assert_eq!(tool_problem(&draft, &problems, "mark_task_complete"), None);
}

mod properties;

#[test]
fn a_list_changes_for_its_rows_not_for_their_text() {
    let task = |id: &str, text: &str| LessonTask {
        id: id.into(),
        text: text.into(),
    };
    let list = vec![task("a", "one"), task("b", "two")];
    let typed = vec![task("a", "one more"), task("b", "two")];
    let moved = vec![task("b", "two"), task("a", "one")];
    assert!(!ids_changed(Some(&list), Some(&typed)));
    assert!(ids_changed(Some(&list), Some(&moved)));
    assert!(ids_changed(Some(&list), Some(&list[..1].to_vec())));
    assert!(ids_changed(None, Some(&list)));
    assert!(!ids_changed::<LessonTask>(None, None));
}
