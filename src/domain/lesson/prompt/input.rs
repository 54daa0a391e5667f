//! What the builder reads and what it gives: [`PromptInput`] (made from a
//! lesson, and for a session from what it knows of its student) and
//! [`BuiltPrompt`] with each tool's [`ToolCost`]. Shared by the server, the
//! backends' prompt endpoint and the editor's preview in the browser.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::lesson::config::{LessonFacts, LessonToolConfiguration};
use crate::domain::lesson::optimise::{OptimisationStats, OptimiseMode};
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::domain::review_queue::QueueItem;
use crate::domain::student::{KnownFact, StudentContext};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A lesson's prompt input: here, beside [`PromptInput`], so the lesson
/// module need not import the prompt builder that imports it.
impl LessonDraft {
    /// What the prompt builder needs from this lesson, borrowed from it;
    /// the editor's preview and the backends' prompt endpoint both build
    /// from it.
    pub fn prompt_input(&self, optimise: Option<OptimiseMode>) -> PromptInput<'_> {
        self.prompt_input_for(optimise, None)
    }

    /// [`LessonDraft::prompt_input`] for a session opened for a student:
    /// what the session knows of them (their due review items, their
    /// known facts) goes into the prompt as data.
    ///
    /// Borrowed, not copied: every build starts here (a session's prompt,
    /// the prompt endpoint, the preview on every keystroke), and copying
    /// the lesson's texts, tools and tasks (34 allocations for the seed's
    /// lesson) took more time than the build itself.
    pub fn prompt_input_for<'a>(
        &'a self,
        optimise: Option<OptimiseMode>,
        student: Option<&'a StudentContext>,
    ) -> PromptInput<'a> {
        PromptInput {
            student,
            conversation_prompt: &self.conversation_prompt,
            configuration: &self.tool_configuration,
            tasks: &self.tasks,
            review_items: &self.review_items,
            duration_minutes: self.duration_minutes,
            level: self.level,
            review: self.review,
            optimise,
        }
    }
}

/// Everything the builder needs: a view of a lesson
/// ([`LessonDraft::prompt_input`]) and of what a session knows of its
/// student, with how to optimise. Serialised as the bench hands it to the
/// seed's builder.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInput<'a> {
    /// The teacher's free-form prompt.
    pub conversation_prompt: &'a str,
    /// The lesson's tool configuration.
    pub configuration: &'a LessonToolConfiguration,
    /// Lesson objectives.
    pub tasks: &'a [LessonTask],
    /// A review lesson's items.
    pub review_items: &'a [ReviewItem],
    /// Planned length.
    pub duration_minutes: Option<u32>,
    /// Student level.
    pub level: Option<CefrLevel>,
    /// Whether this is a review lesson: the review tools are left out of
    /// any other lesson's prompt.
    pub review: bool,
    /// Whether to optimise, and how (`None`: the prompt as written).
    pub optimise: Option<OptimiseMode>,
    /// For a session opened for a student record: the review items due for
    /// them (a review lesson's) and their known facts (a lesson that uses
    /// profile facts), fixed when the session opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub student: Option<&'a StudentContext>,
}

/// One enabled tool's share of the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCost {
    /// The tool (borrowed from the catalogue when built, so a build
    /// allocates no copy of each id).
    pub tool_id: Cow<'static, str>,
    /// Estimated tokens of its declaration (as compact JSON).
    pub declaration_tokens: usize,
    /// Estimated tokens of its line in the functions section.
    pub instruction_tokens: usize,
    /// The two together.
    pub total_tokens: usize,
}

/// What the model gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltPrompt {
    /// The assembled (and, if asked, optimised) system prompt.
    pub system_prompt: String,
    /// Declarations of the enabled tools only, in catalogue order (borrowed
    /// from the prepared catalogue, not copied per build; owned only when
    /// read back from JSON).
    pub declarations: Vec<Cow<'static, FunctionDeclaration>>,
    /// Quick estimate (characters / 4) of [`BuiltPrompt::token_text`]: the
    /// prompt and the declarations together, the same text the server counts
    /// exactly, so the two figures can be compared.
    pub estimated_tokens: usize,
    /// Unoptimised versus sent prompt.
    pub stats: OptimisationStats,
    /// Per enabled tool.
    pub tool_costs: Vec<ToolCost>,
    /// Estimated tokens of the student's sections (their due review items
    /// and known facts), part of [`BuiltPrompt::estimated_tokens`]: zero
    /// for a prompt built without a student (the editor's preview).
    #[serde(default)]
    pub student_tokens: usize,
}

impl BuiltPrompt {
    /// What the model is sent, as one text: the system prompt, then each
    /// declaration as compact JSON, one per line. The estimate and the exact
    /// count are both taken over this text, so they measure the same thing.
    pub fn token_text(&self) -> String {
        token_text(&self.system_prompt, &self.declarations)
    }
}

pub(super) fn token_text(
    system_prompt: &str,
    declarations: &[Cow<'static, FunctionDeclaration>],
) -> String {
    let mut text = system_prompt.to_owned();
    for declaration in declarations {
        text.push('\n');
        text.push_str(&serde_json::to_string(&**declaration).unwrap_or_default());
    }
    text
}

impl PromptInput<'_> {
    /// The facts about the lesson that decide which enabled tools fit it.
    pub fn facts(&self) -> LessonFacts {
        LessonFacts {
            has_tasks: !self.tasks.is_empty(),
            is_review: self.review,
            has_review_items: !self.review_items.is_empty() || !self.due_items().is_empty(),
        }
    }

    /// The student's due review items this prompt offers (a review
    /// lesson's only).
    pub fn due_items(&self) -> &[QueueItem] {
        match self.student {
            Some(s) if self.review => &s.due,
            _ => &[],
        }
    }

    /// The student's known facts this prompt carries (a lesson that uses
    /// profile facts only).
    pub fn known_facts(&self) -> &[KnownFact] {
        match self.student {
            Some(s) if self.configuration.use_profile_facts => &s.facts,
            _ => &[],
        }
    }
}
