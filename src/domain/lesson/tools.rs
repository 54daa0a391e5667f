//! The tutor's tool catalogue: the six tools a lesson can enable, what each
//! does, which triggers make sense for it, and its function declaration.
//!
//! Held as data so the configuration panel, the validator and the prompt
//! builder all read the same facts.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::lesson::optimise::estimate_tokens;
use crate::domain::lesson::trigger::TriggerKind;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Which group a tool belongs to in the panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCategory {
    /// Useful in any lesson.
    Core,
    /// Only meaningful in review lessons.
    Review,
}

/// One tutor tool, as the catalogue describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TutorTool {
    /// The function name the model calls.
    pub id: &'static str,
    /// The name teachers see.
    pub name: &'static str,
    /// One line for teachers.
    pub summary: &'static str,
    /// Icon name for the panel.
    pub icon: &'static str,
    /// Panel group.
    pub category: ToolCategory,
    /// Whether a fresh configuration enables it.
    pub enabled_by_default: bool,
    /// Triggers that make sense for it, in menu order.
    pub allowed: &'static [TriggerKind],
    /// The trigger it starts with.
    pub default_trigger: TriggerKind,
}

use TriggerKind::*;

/// The six tutor tools, in the order the panel and the prompt list them.
pub const TUTOR_TOOLS: [TutorTool; 6] = [
    TutorTool {
        id: "mark_for_review",
        name: "Error Tracking",
        summary: "Records the student's mistakes for your view of the run. In a session opened for a student record, each also joins that student's review queue and comes back in their review lessons.",
        icon: "flag",
        category: ToolCategory::Core,
        enabled_by_default: true,
        allowed: &[Always, ErrorDetected, Keyword],
        default_trigger: ErrorDetected,
    },
    TutorTool {
        id: "update_user_profile",
        name: "Profile Learning",
        summary: "Notes the student's interests, goals and preferences. In a session opened for a student record they are saved to the student's profile, and their later lessons that use profile facts get them.",
        icon: "user",
        category: ToolCategory::Core,
        enabled_by_default: true,
        allowed: &[Always, TurnCount, Keyword],
        default_trigger: Always,
    },
    TutorTool {
        id: "show_session_summary",
        name: "Session Summary",
        summary: "Records what went well and what to practise next, for your view of the run. Switchboard shows the student nothing: the tutor tells them.",
        icon: "summary",
        category: ToolCategory::Core,
        enabled_by_default: true,
        allowed: &[SessionEnding, TimeRemaining],
        default_trigger: SessionEnding,
    },
    TutorTool {
        id: "mark_task_complete",
        name: "Task Completion",
        summary: "Ticks off a lesson objective when the student achieves it.",
        icon: "check",
        category: ToolCategory::Core,
        enabled_by_default: true,
        allowed: &[TaskContext, Always, Keyword],
        default_trigger: TaskContext,
    },
    TutorTool {
        id: "mark_item_mastered",
        name: "Mastery Marking (review lessons)",
        summary: "Marks a reviewed item as mastered. An item from the student's review queue moves to its next box (Leitner: back after 2, 4, 8 or 16 days; after the fifth it leaves the queue); the lesson's own items are recorded for you.",
        icon: "star",
        category: ToolCategory::Review,
        enabled_by_default: false,
        allowed: &[Always, Keyword],
        default_trigger: Always,
    },
    TutorTool {
        id: "play_student_audio",
        name: "Audio Playback (review lessons)",
        summary: "Plays back the student's earlier recording of an item.",
        icon: "audio",
        category: ToolCategory::Review,
        enabled_by_default: false,
        allowed: &[Always, Keyword],
        default_trigger: Always,
    },
];

/// The catalogue entry for `id`.
pub fn tutor_tool(id: &str) -> Option<&'static TutorTool> {
    TUTOR_TOOLS.iter().find(|t| t.id == id)
}

/// The catalogue position of `id`, for constants: a name that is not in
/// the catalogue fails the build.
pub const fn catalogue_position(id: &str) -> usize {
    let mut at = 0;
    while at < TUTOR_TOOLS.len() {
        let (a, b) = (TUTOR_TOOLS[at].id.as_bytes(), id.as_bytes());
        if a.len() == b.len() {
            let mut i = 0;
            while i < a.len() && a[i] == b[i] {
                i += 1;
            }
            if i == a.len() {
                return at;
            }
        }
        at += 1;
    }
    panic!("not a tutor tool")
}

impl TutorTool {
    /// Whether `kind` is one of this tool's allowed triggers.
    pub fn allows(&self, kind: TriggerKind) -> bool {
        self.allowed.contains(&kind)
    }

    /// Position in the catalogue: the order prompts list tools in.
    pub fn position(&self) -> usize {
        TUTOR_TOOLS
            .iter()
            .position(|t| t.id == self.id)
            .unwrap_or(usize::MAX)
    }

    /// What the model is told about this tool: its description and its
    /// argument schema, read from [`DECLARATIONS`].
    pub fn declaration(&self) -> FunctionDeclaration {
        let (description, parameters) = DECLARATIONS
            .iter()
            .find(|(id, _, _)| *id == self.id)
            .map_or(("", "{}"), |(_, description, schema)| {
                (*description, *schema)
            });
        FunctionDeclaration {
            name: self.id.to_owned(),
            description: description.to_owned(),
            // The schemas are constants checked by the tests below. Read
            // from bytes: the browser's one JSON reader
            // (`ui::components::fetched`), where `from_str` compiled a
            // second one into the editor's bundle.
            parameters: serde_json::from_slice(parameters.as_bytes()).unwrap_or_default(),
        }
    }
}

/// Each tutor tool's description and argument schema (JSON), as data: a
/// schema written as text costs the browser bundle a string, where one
/// built with `json!` cost a large function of its own.
pub const DECLARATIONS: [(&str, &str, &str); 6] = [
    (
        "mark_for_review",
        "Record a mistake the student made so it can be reviewed later (in the student's review queue when the session has a student record). Call silently; do not interrupt the conversation.",
        r#"{"type":"object","properties":{"errorType":{"type":"string","enum":["grammar","pronunciation","vocabulary","cultural"],"description":"Kind of mistake."},"studentSaid":{"type":"string","description":"What the student said, verbatim."},"correctForm":{"type":"string","description":"The correct way to say it."},"severity":{"type":"integer","minimum":1,"maximum":10,"description":"1 = minor slip, 10 = blocks understanding."},"explanation":{"type":"string","description":"Short reason, for the review lesson."}},"required":["errorType","studentSaid","correctForm","severity"]}"#,
    ),
    (
        "update_user_profile",
        "Record something the student revealed about themselves. The answer says whether it was saved to their profile for later lessons.",
        r#"{"type":"object","properties":{"category":{"type":"string","enum":["interest","goal","preference","personal_detail","learning_style"],"description":"What kind of fact this is."},"value":{"type":"string","description":"The fact, in a few words."},"confidence":{"type":"number","minimum":0,"maximum":1,"description":"How sure you are, 0-1."}},"required":["category","value"]}"#,
    ),
    (
        "show_session_summary",
        "Record a summary of the session for the teacher: what went well and what to practise next. It is not shown to the student; tell them yourself.",
        r#"{"type":"object","properties":{"summary":{"type":"string","description":"Two or three sentences on the session."},"strengths":{"type":"array","items":{"type":"string"},"description":"What the student did well."},"areasToImprove":{"type":"array","items":{"type":"string"},"description":"What to practise."},"nextSteps":{"type":"array","items":{"type":"string"},"description":"Suggested next activities."},"stars":{"type":"integer","minimum":1,"maximum":5,"description":"How the session went overall, 1-5 stars."}},"required":["summary","strengths","areasToImprove"]}"#,
    ),
    (
        "mark_task_complete",
        "Mark one of the lesson objectives as completed by the student.",
        r#"{"type":"object","properties":{"taskId":{"type":"string","description":"The id of the completed task, as listed in the lesson objectives."},"evidence":{"type":"string","description":"What the student said or did that completed it."}},"required":["taskId"]}"#,
    ),
    (
        "mark_item_mastered",
        "Mark a review item as mastered. A review-queue item (q-…) moves on in the student's queue; the answer says when it comes back.",
        r#"{"type":"object","properties":{"itemId":{"type":"string","description":"The id of the review item."},"confidence":{"type":"integer","minimum":1,"maximum":5,"description":"How solidly it is mastered, 1-5."}},"required":["itemId"]}"#,
    ),
    (
        "play_student_audio",
        "Play the student's earlier recording of a review item so they can compare it with the correct form.",
        r#"{"type":"object","properties":{"recordingId":{"type":"string","description":"The id of the review item whose recording to play (an item listed with a recording)."},"reason":{"type":"string","description":"Why it is being played, shown to the student."}},"required":["recordingId"]}"#,
    ),
];

/// A tutor tool's declaration with what the prompt builder needs of it,
/// made once per process: the catalogue is fixed, so building each
/// declaration's JSON tree, serialising it and estimating its tokens on
/// every prompt build (every keystroke in the editor's preview) was work
/// thrown away.
#[derive(Debug)]
pub struct PreparedDeclaration {
    /// The tool's id.
    pub id: &'static str,
    /// The declaration, lent to every prompt that declares the tool (it
    /// lives as long as the process, so a build borrows it: no reference
    /// count to raise and lower per tool per build).
    pub declaration: FunctionDeclaration,
    /// Characters of its compact JSON (its share of the prompt's token
    /// text, which also counts one line break before it).
    pub json_chars: usize,
    /// Estimated tokens of its compact JSON.
    pub tokens: usize,
}

/// The six declarations, prepared once, in catalogue order.
pub fn prepared_declarations() -> &'static [PreparedDeclaration; 6] {
    static PREPARED: OnceLock<[PreparedDeclaration; 6]> = OnceLock::new();
    PREPARED.get_or_init(|| {
        TUTOR_TOOLS.map(|tool| {
            let declaration = tool.declaration();
            let json = serde_json::to_string(&declaration).unwrap_or_default();
            PreparedDeclaration {
                id: tool.id,
                declaration,
                json_chars: json.chars().count(),
                tokens: estimate_tokens(&json),
            }
        })
    })
}

impl ToolCategory {
    /// Lower-case name, shown as a badge and used in its `cat-…` class.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCategory::Core => "core",
            ToolCategory::Review => "review",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_catalogue_matches_the_specified_triggers() {
        let spec: [(&str, &[TriggerKind], TriggerKind); 6] = [
            (
                "mark_for_review",
                &[Always, ErrorDetected, Keyword],
                ErrorDetected,
            ),
            ("update_user_profile", &[Always, TurnCount, Keyword], Always),
            (
                "show_session_summary",
                &[SessionEnding, TimeRemaining],
                SessionEnding,
            ),
            (
                "mark_task_complete",
                &[TaskContext, Always, Keyword],
                TaskContext,
            ),
            ("mark_item_mastered", &[Always, Keyword], Always),
            ("play_student_audio", &[Always, Keyword], Always),
        ];
        for (id, allowed, default) in spec {
            let tool = tutor_tool(id).unwrap();
            assert_eq!(tool.allowed, allowed, "{id}");
            assert_eq!(tool.default_trigger, default, "{id}");
            assert!(tool.allows(tool.default_trigger));
        }
    }

    #[test]
    fn every_declaration_is_an_object_schema_named_after_its_tool() {
        for tool in TUTOR_TOOLS {
            let decl = tool.declaration();
            assert_eq!(decl.name, tool.id);
            assert_eq!(decl.parameters["type"], "object");
            for required in decl.parameters["required"].as_array().unwrap() {
                let key = required.as_str().unwrap();
                assert!(
                    decl.parameters["properties"].get(key).is_some(),
                    "{}: {key}",
                    tool.id
                );
            }
        }
    }

    #[test]
    fn mark_for_review_takes_error_type_said_correct_and_severity() {
        let p = tutor_tool("mark_for_review")
            .unwrap()
            .declaration()
            .parameters;
        assert_eq!(
            p["properties"]["errorType"]["enum"],
            json!(["grammar", "pronunciation", "vocabulary", "cultural"])
        );
        assert_eq!(p["properties"]["severity"]["minimum"], 1);
        assert_eq!(p["properties"]["severity"]["maximum"], 10);
    }

    #[test]
    fn review_tools_are_off_by_default_and_core_tools_on() {
        for tool in TUTOR_TOOLS {
            assert_eq!(
                tool.enabled_by_default,
                tool.category == ToolCategory::Core,
                "{}",
                tool.id
            );
        }
        assert_eq!(tutor_tool("nope"), None);
    }

    #[test]
    fn prepared_declarations_are_the_catalogues_in_order() {
        for (tool, prepared) in TUTOR_TOOLS.iter().zip(prepared_declarations()) {
            let json = serde_json::to_string(&tool.declaration()).unwrap();
            assert_eq!(prepared.declaration, tool.declaration());
            assert_eq!(prepared.json_chars, json.chars().count());
            assert_eq!(prepared.tokens, estimate_tokens(&json));
        }
    }

    #[test]
    fn tool_categories_have_lower_case_names() {
        assert_eq!(ToolCategory::Core.as_str(), "core");
        assert_eq!(ToolCategory::Review.as_str(), "review");
    }
}
