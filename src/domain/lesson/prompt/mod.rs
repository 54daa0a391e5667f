//! The runtime prompt builder: assembles the tutor's system prompt and the
//! function declarations from the teacher's prompt, the tool configuration
//! and the system's trigger templates.
//!
//! Deterministic by construction — no clocks, no maps with random order,
//! tools in catalogue order — because provider prompt caches only hit on
//! byte-identical prompts.

use crate::domain::lesson::config::{ToolConfig, TASK_TOOL};
use crate::domain::lesson::normalise::{is_normal, is_normal_inline};
use crate::domain::lesson::optimise::{
    char_count, optimise_owned, trimmed, OptimisationStats, OptimiseMode,
};
use crate::domain::lesson::review::push_prompt_section as push_review_section;
use crate::domain::lesson::tools::{catalogue_position, PreparedDeclaration};
use crate::domain::lesson::trigger::TriggerCondition;
use std::borrow::Cow;

mod input;
mod lines;
mod sections;

pub use input::{BuiltPrompt, PromptInput, ToolCost};
use lines::push_number;
pub use lines::{
    interpolate, minutes_phrase, situation_template, template, tool_line, trigger_instruction,
};
use sections::{
    capacity, push_due_section, push_facts_section, push_functions_section, push_objectives,
    start_section, EnabledTools,
};

/// Assembles the prompt: conversation prompt; `## Session Parameters`
/// (when duration or level is given); `## Lesson Objectives` (when there are
/// tasks); `## Available Functions` last (when any tool is enabled).
///
/// An enabled tool that contradicts the lesson (Task Completion without
/// tasks, a review tool outside a review lesson) is left out of the prompt
/// and the declarations: the model is never told to mark objectives that do
/// not exist. The editor warns about it instead.
///
/// Built for speed, since the editor's preview runs it on every keystroke:
/// the declarations and their token estimates come prepared
/// ([`prepared_declarations`]), every section is written into one
/// pre-sized string, and each tool's instruction tokens are counted on
/// its line where it was written.
pub fn build(input: &PromptInput) -> BuiltPrompt {
    let enabled = EnabledTools::of(input);
    let mut assembled = String::with_capacity(capacity(input));
    let conversation = trimmed(input.conversation_prompt);
    assembled.push_str(conversation);

    if input.duration_minutes.is_some() || input.level.is_some() {
        start_section(&mut assembled);
        assembled.push_str("## Session Parameters");
        if let Some(minutes) = input.duration_minutes {
            assembled.push_str("\n- Duration: ");
            push_number(&mut assembled, minutes);
            assembled.push_str(" minutes");
        }
        if let Some(level) = input.level {
            assembled.push_str("\n- Student level: ");
            assembled.push_str(level.as_str());
            assembled.push_str(" (CEFR)");
        }
    }

    let mut student_chars = push_facts_section(&mut assembled, input.known_facts());

    if !input.tasks.is_empty() {
        start_section(&mut assembled);
        push_objectives(&mut assembled, input.tasks, enabled.on(TASK_TOOL_AT));
    }

    if input.review && !input.review_items.is_empty() {
        start_section(&mut assembled);
        push_review_section(
            &mut assembled,
            input.review_items,
            enabled.on(MASTERY_TOOL_AT),
            enabled.on(AUDIO_TOOL_AT),
        );
    }
    student_chars += push_due_section(
        &mut assembled,
        input.due_items(),
        enabled.on(MASTERY_TOOL_AT),
    );

    let functions = push_functions_section(&mut assembled, input, enabled.as_slice());
    // Each text's characters are counted once, for every figure: the tool
    // lines' were counted for their costs. The prompt's are counted only
    // when optimising changed its length, since normal mode only removes
    // characters or swaps one ASCII character for another.
    let assembled_len = assembled.len();
    let assembled_chars =
        char_count(&assembled[..assembled_len - functions.line_bytes]) + functions.line_chars;
    let system_prompt = match input.optimise {
        Some(OptimiseMode::Normal) if written_normal(input, enabled.as_slice()) => assembled,
        Some(mode) => optimise_owned(assembled, mode),
        None => assembled,
    };
    let prompt_chars = match input.optimise {
        None => assembled_chars,
        Some(OptimiseMode::Normal) if system_prompt.len() == assembled_len => assembled_chars,
        Some(_) => char_count(&system_prompt),
    };
    // The token text is the prompt, then a line break and each
    // declaration's JSON: its characters are summed, not assembled.
    let declared = enabled.as_slice();
    let token_chars = prompt_chars
        + declared
            .iter()
            .map(|(_, p)| 1 + p.json_chars)
            .sum::<usize>();
    BuiltPrompt {
        estimated_tokens: token_chars.div_ceil(4),
        stats: OptimisationStats::from_chars(assembled_chars, prompt_chars),
        declarations: declared
            .iter()
            .map(|(_, p)| Cow::Borrowed(&p.declaration))
            .collect(),
        system_prompt,
        tool_costs: functions.costs,
        student_tokens: student_chars.div_ceil(4),
    }
}

/// Whether the assembled prompt is already normal, judged from the
/// teacher's and the student's texts alone: the builder writes its own
/// parts normal (sections joined by one blank line, each a header with
/// content under it), so only what it copies in can need normal mode.
/// The conversation prompt is scanned as a text of its own; every other
/// copied piece must be a plain inline one ([`is_normal_inline`]), judged
/// before the builder trims it (so one with space at an end takes the
/// long way, still right); the student's texts, written on one line
/// already, must not be blank where they end a line. Most prompts pass, and are then not scanned whole.
fn written_normal(input: &PromptInput, enabled: &[(&ToolConfig, &PreparedDeclaration)]) -> bool {
    // A piece that may end its line: empty, it would leave the space
    // before it there.
    let line_end = |text: &str| !text.is_empty() && is_normal_inline(text);
    let not_blank = |text: &str| text.split_whitespace().next().is_some();
    is_normal(trimmed(input.conversation_prompt))
        && input.configuration.global().is_none_or(is_normal_inline)
        && input
            .tasks
            .iter()
            .all(|t| is_normal_inline(&t.id) && line_end(&t.text))
        && (!input.review
            || input
                .review_items
                .iter()
                .all(|i| is_normal_inline(&i.id) && line_end(&i.text)))
        && enabled.iter().all(|(config, _)| {
            config.instructions().is_none_or(is_normal_inline)
                && match &config.trigger_condition {
                    TriggerCondition::Keyword { keywords } => {
                        keywords.iter().all(|k| is_normal_inline(k))
                    }
                    _ => true,
                }
        })
        && input.known_facts().iter().all(|f| not_blank(&f.value))
        && input
            .due_items()
            .iter()
            .all(|i| i.explanation.as_deref().is_none_or(not_blank))
}

/// Catalogue positions of the tools the sections mention.
const TASK_TOOL_AT: usize = catalogue_position(TASK_TOOL);
const MASTERY_TOOL_AT: usize = catalogue_position("mark_item_mastered");
const AUDIO_TOOL_AT: usize = catalogue_position("play_student_audio");

#[cfg(test)]
mod tests;
