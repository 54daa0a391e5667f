//! The prompt's sections, each written onto the one pre-sized string the
//! builder assembles: objectives, the functions section with each tool's
//! cost counted where its line was written, the student's facts and due
//! items; which tools are enabled, kept on the stack; and the room the
//! whole prompt needs, so it is allocated once.

use super::input::{PromptInput, ToolCost};
use super::lines::push_tool_line;
use crate::domain::lesson::config::{fits_lesson, ToolConfig};
use crate::domain::lesson::optimise::{char_count, trimmed};
use crate::domain::lesson::tools::{prepared_declarations, PreparedDeclaration, TUTOR_TOOLS};
use crate::domain::lesson::trigger::TriggerCondition;
use crate::domain::lesson::LessonTask;
use crate::domain::review_queue::{QueueItem, DUE_ITEMS_PER_LESSON};
use crate::domain::student::{KnownFact, FACTS_PER_LESSON};
use std::borrow::Cow;

/// Writes the `## Lesson Objectives` section (there are tasks) onto `out`.
pub(super) fn push_objectives(out: &mut String, tasks: &[LessonTask], completion: bool) {
    out.push_str("## Lesson Objectives\n");
    out.push_str(if completion {
        "Guide the student through these tasks. When the student completes one, call `mark_task_complete` with its task id.\n"
    } else {
        "Guide the student through these tasks.\n"
    });
    for (i, task) in tasks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("- ");
        out.push_str(&task.id);
        out.push_str(": ");
        out.push_str(trimmed(&task.text));
    }
}

/// What writing the functions section gave: each tool's cost, and the size
/// of the tool lines (each with the line break before it), which end the
/// prompt.
pub(super) struct FunctionsSection {
    pub(super) costs: Vec<ToolCost>,
    pub(super) line_bytes: usize,
    pub(super) line_chars: usize,
}

/// Writes `## Available Functions` (when any tool is enabled) onto `out`:
/// the global instructions, then a line per tool, whose characters are
/// counted where it was written.
pub(super) fn push_functions_section(
    out: &mut String,
    input: &PromptInput,
    enabled: &[(&ToolConfig, &'static PreparedDeclaration)],
) -> FunctionsSection {
    let mut section = FunctionsSection {
        costs: Vec::with_capacity(enabled.len()),
        line_bytes: 0,
        line_chars: 0,
    };
    if enabled.is_empty() {
        return section;
    }
    start_section(out);
    out.push_str("## Available Functions");
    if let Some(global) = input.configuration.global() {
        out.push('\n');
        out.push_str(global);
    }
    let lines_start = out.len();
    for (config, prepared) in enabled {
        out.push('\n');
        let line = out.len();
        push_tool_line(out, config);
        let chars = char_count(&out[line..]);
        section.line_chars += 1 + chars;
        let instruction = chars.div_ceil(4);
        section.costs.push(ToolCost {
            tool_id: Cow::Borrowed(prepared.id),
            declaration_tokens: prepared.tokens,
            instruction_tokens: instruction,
            total_tokens: prepared.tokens + instruction,
        });
    }
    section.line_bytes = out.len() - lines_start;
    section
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
pub(super) fn push_facts_section(out: &mut String, facts: &[KnownFact]) -> usize {
    if facts.is_empty() {
        return 0;
    }
    let start = out.len();
    start_section(out);
    out.push_str("## About This Student\nWhat their earlier lessons learnt about this student, newest first. Use it to make the conversation personal; do not recite it.");
    for fact in facts.iter().take(FACTS_PER_LESSON) {
        out.push_str("\n- ");
        push_one_line(out, &fact.category);
        out.push_str(": ");
        push_one_line(out, &fact.value);
    }
    char_count(&out[start..])
}

/// Writes the `## This Student's Review Queue` section (the items due for
/// them, each with the id `mark_item_mastered` takes) onto `out`; the
/// characters written (none without items).
pub(super) fn push_due_section(out: &mut String, items: &[QueueItem], mastery: bool) -> usize {
    if items.is_empty() {
        return 0;
    }
    let start = out.len();
    start_section(out);
    out.push_str("## This Student's Review Queue\nMistakes this student made in earlier lessons, due for review now (most overdue first). Practise each one with them.");
    if mastery {
        out.push_str(" When the student says one correctly and confidently, call `mark_item_mastered` with its item id.");
    }
    for item in items.iter().take(DUE_ITEMS_PER_LESSON) {
        out.push_str("\n- ");
        out.push_str(&item.offer_id());
        out.push_str(" (");
        push_one_line(out, &item.error_type);
        out.push_str("): they said \"");
        push_one_line(out, &item.student_said);
        out.push_str("\"; correct: \"");
        push_one_line(out, &item.correct_form);
        out.push('"');
        if let Some(why) = &item.explanation {
            out.push_str(". ");
            push_one_line(out, why);
        }
    }
    char_count(&out[start..])
}

/// Writes `text` onto `out` on one line (its whitespace runs as single
/// spaces), so recorded words cannot start a section of their own.
fn push_one_line(out: &mut String, text: &str) {
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// Separates a new section from what came before (nothing before the
/// first).
pub(super) fn start_section(out: &mut String) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
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
