//! The prompt's sections, each written into the one pre-sized [`Writer`]
//! the builder assembles in: objectives, review items, the functions
//! section with each tool's cost counted where its line was written, the
//! student's facts and due items; which tools are enabled, kept on the
//! stack; and the room the whole prompt needs, so it is allocated once.

use super::input::{PromptInput, ToolCost};
use super::lines::push_tool_line;
use super::writer::{Text, Writer};
use crate::domain::lesson::config::{fits_lesson, ToolConfig};
use crate::domain::lesson::optimise::trimmed;
use crate::domain::lesson::review::ReviewItem;
use crate::domain::lesson::tools::{prepared_declarations, PreparedDeclaration, TUTOR_TOOLS};
use crate::domain::lesson::trigger::TriggerCondition;
use crate::domain::lesson::LessonTask;
use crate::domain::review_queue::{QueueItem, DUE_ITEMS_PER_LESSON};
use crate::domain::student::{KnownFact, FACTS_PER_LESSON};
use std::borrow::Cow;

/// Writes the `## Lesson Objectives` section (there are tasks) onto `out`.
pub(super) fn push_objectives(out: &mut Writer, tasks: &[LessonTask], completion: bool) {
    out.fixed("## Lesson Objectives\n");
    out.fixed(if completion {
        "Guide the student through these tasks. When the student completes one, call `mark_task_complete` with its task id.\n"
    } else {
        "Guide the student through these tasks.\n"
    });
    for (i, task) in tasks.iter().enumerate() {
        if i > 0 {
            out.fixed("\n");
        }
        out.fixed("- ");
        out.copied(&task.id);
        out.fixed(": ");
        out.line_end(trimmed(&task.text));
    }
}

/// Writes the `## Review Items` section (a review lesson's items, each
/// with the id the tutor passes and which have a recording) onto `out`.
pub(super) fn push_review_items(
    out: &mut Writer,
    items: &[ReviewItem],
    mastery: bool,
    audio: bool,
) {
    out.fixed("## Review Items\nReview these items with the student.");
    if mastery {
        out.fixed(" When the student says one correctly and confidently, call `mark_item_mastered` with its item id.");
    }
    if audio && items.iter().any(|i| i.audio.is_some()) {
        out.fixed(
            " Items marked (recording) have the student's earlier recording: `play_student_audio` with the item id plays it.",
        );
    }
    for item in items {
        out.fixed("\n- ");
        out.copied(&item.id);
        out.fixed(": ");
        out.line_end(trimmed(&item.text));
        if audio && item.audio.is_some() {
            out.fixed(" (recording)");
        }
    }
}

/// Writes `## Available Functions` (when any tool is enabled) onto `out`:
/// the global instructions, then a line per tool, whose characters are
/// counted where it was written; each tool's cost.
pub(super) fn push_functions_section(
    out: &mut Writer,
    input: &PromptInput,
    enabled: &[(&ToolConfig, &'static PreparedDeclaration)],
) -> Vec<ToolCost> {
    let mut costs = Vec::with_capacity(enabled.len());
    if enabled.is_empty() {
        return costs;
    }
    out.start_section();
    out.fixed("## Available Functions");
    if let Some(global) = input.configuration.global() {
        out.fixed("\n");
        out.copied(global);
    }
    for (config, prepared) in enabled {
        out.fixed("\n");
        let line = out.mark();
        push_tool_line(out, config, |out| out.fixed(prepared.id));
        let instruction = out.chars_since(line).div_ceil(4);
        costs.push(ToolCost {
            tool_id: Cow::Borrowed(prepared.id),
            declaration_tokens: prepared.tokens,
            instruction_tokens: instruction,
            total_tokens: prepared.tokens + instruction,
        });
    }
    costs
}

/// The enabled tools that fit the lesson, with their prepared
/// declarations, in catalogue order: at most the catalogue's six, so kept
/// on the stack rather than in a vector allocated per build.
pub(super) struct EnabledTools<'a> {
    tools: [(&'a ToolConfig, &'static PreparedDeclaration); TUTOR_TOOLS.len()],
    len: usize,
    /// Whether the tool at each catalogue position is among them.
    on: [bool; TUTOR_TOOLS.len()],
}

impl<'a> EnabledTools<'a> {
    pub(super) fn of(input: &'a PromptInput) -> Self {
        let facts = input.facts();
        let prepared = prepared_declarations();
        let mut enabled = Self {
            tools: [(&NO_TOOL, &prepared[0]); TUTOR_TOOLS.len()],
            len: 0,
            on: [false; TUTOR_TOOLS.len()],
        };
        let configured = &input.configuration.tools;
        // Whether every setting so far stood at its catalogue position: a
        // setting found there is then the first with its id, as
        // `tool` would find it, without comparing every id before it.
        let mut in_order = true;
        for (at, (tool, prepared)) in TUTOR_TOOLS.iter().zip(prepared).enumerate() {
            let placed = configured.get(at).filter(|c| c.tool_id == tool.id);
            in_order &= placed.is_some();
            let found = match placed {
                Some(config) if in_order => Some(config),
                _ => input.configuration.tool(tool.id),
            };
            if let Some(config) = found {
                if config.enabled && fits_lesson(tool.id, facts) {
                    enabled.tools[enabled.len] = (config, prepared);
                    enabled.len += 1;
                    enabled.on[at] = true;
                }
            }
        }
        enabled
    }

    pub(super) fn as_slice(&self) -> &[(&'a ToolConfig, &'static PreparedDeclaration)] {
        &self.tools[..self.len]
    }

    /// Whether the tool at catalogue position `at` is enabled and fits.
    pub(super) fn on(&self, at: usize) -> bool {
        self.on[at]
    }
}

/// What the [`EnabledTools`] slots past the last enabled tool hold.
static NO_TOOL: ToolConfig = ToolConfig {
    tool_id: String::new(),
    enabled: false,
    trigger_condition: TriggerCondition::Always,
    custom_instructions: None,
};

/// Writes the `## About This Student` section (their known facts) onto
/// `out`; the characters written (none without facts).
pub(super) fn push_facts_section(out: &mut Writer, facts: &[KnownFact]) -> usize {
    if facts.is_empty() {
        return 0;
    }
    let start = out.mark();
    out.start_section();
    out.fixed("## About This Student\nWhat their earlier lessons learnt about this student, newest first. Use it to make the conversation personal; do not recite it.");
    for fact in facts.iter().take(FACTS_PER_LESSON) {
        out.fixed("\n- ");
        out.one_line(&fact.category, false);
        out.fixed(": ");
        out.one_line(&fact.value, true);
    }
    out.chars_since(start)
}

/// Writes the `## This Student's Review Queue` section (the items due for
/// them, each with the id `mark_item_mastered` takes) onto `out`; the
/// characters written (none without items).
pub(super) fn push_due_section(out: &mut Writer, items: &[QueueItem], mastery: bool) -> usize {
    if items.is_empty() {
        return 0;
    }
    let start = out.mark();
    out.start_section();
    out.fixed("## This Student's Review Queue\nMistakes this student made in earlier lessons, due for review now (most overdue first). Practise each one with them.");
    if mastery {
        out.fixed(" When the student says one correctly and confidently, call `mark_item_mastered` with its item id.");
    }
    for item in items.iter().take(DUE_ITEMS_PER_LESSON) {
        out.fixed("\n- ");
        out.copied(&item.offer_id());
        out.fixed(" (");
        out.one_line(&item.error_type, false);
        out.fixed("): they said \"");
        out.one_line(&item.student_said, false);
        out.fixed("\"; correct: \"");
        out.one_line(&item.correct_form, false);
        out.fixed("\"");
        if let Some(why) = &item.explanation {
            out.fixed(". ");
            out.one_line(why, true);
        }
    }
    out.chars_since(start)
}

/// Room for the whole assembled prompt, so it is allocated once: the
/// teacher's texts plus a bound on what the templates add.
pub(super) fn capacity(input: &PromptInput) -> usize {
    const FIXED: usize = 1024;
    const PER_TOOL: usize = 512;
    const PER_ENTRY: usize = 48;
    let texts = input.conversation_prompt.len()
        + input
            .configuration
            .global_instructions
            .as_ref()
            .map_or(0, String::len)
        + input
            .configuration
            .tools
            .iter()
            .map(|t| {
                PER_TOOL
                    + t.custom_instructions.as_ref().map_or(0, String::len)
                    + match &t.trigger_condition {
                        TriggerCondition::Keyword { keywords } => {
                            keywords.iter().map(|k| k.len() + 2).sum()
                        }
                        _ => 0,
                    }
            })
            .sum::<usize>()
        + input
            .tasks
            .iter()
            .map(|t| PER_ENTRY + t.id.len() + t.text.len())
            .sum::<usize>()
        + input
            .review_items
            .iter()
            .map(|i| PER_ENTRY + i.id.len() + i.text.len())
            .sum::<usize>()
        + input
            .due_items()
            .iter()
            .map(|i| {
                PER_ENTRY * 2
                    + i.error_type.len()
                    + i.student_said.len()
                    + i.correct_form.len()
                    + i.explanation.as_ref().map_or(0, String::len)
            })
            .sum::<usize>()
        + input
            .known_facts()
            .iter()
            .map(|f| PER_ENTRY + f.category.len() + f.value.len())
            .sum::<usize>();
    FIXED + texts
}
