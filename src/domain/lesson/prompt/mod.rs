//! The runtime prompt builder: assembles the tutor's system prompt and the
//! function declarations from the teacher's prompt, the tool configuration
//! and the system's trigger templates.
//!
//! Deterministic by construction — no clocks, no maps with random order,
//! tools in catalogue order — because provider prompt caches only hit on
//! byte-identical prompts.

use crate::domain::lesson::config::TASK_TOOL;
use crate::domain::lesson::normalise::is_normal;
use crate::domain::lesson::optimise::{
    char_count, optimise_owned, trimmed, OptimisationStats, OptimiseMode,
};
use crate::domain::lesson::tools::catalogue_position;
use std::borrow::Cow;

mod input;
mod lines;
mod sections;
mod writer;

pub use input::{BuiltPrompt, PromptInput, ToolCost};
pub use lines::{
    interpolate, minutes_phrase, situation_template, template, tool_line, trigger_instruction,
};
use sections::{
    capacity, push_due_section, push_facts_section, push_functions_section, push_objectives,
    push_review_items, EnabledTools,
};
use writer::{Text, Writer};

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
/// ([`prepared_declarations`](crate::domain::lesson::tools::prepared_declarations)),
/// and every section is written into one pre-sized [`Writer`], which
/// reads each text it copies in once, as it copies it: for its characters
/// (each tool's line counted where it was written, the prompt's a sum)
/// and for whether normal mode could change it (when none could, normal
/// mode's scan of the whole prompt is skipped).
pub fn build(input: &PromptInput) -> BuiltPrompt {
    let enabled = EnabledTools::of(input);
    let mut out = Writer::with_capacity(capacity(input));
    let conversation = trimmed(input.conversation_prompt);
    out.block(conversation);

    if input.duration_minutes.is_some() || input.level.is_some() {
        out.start_section();
        out.fixed("## Session Parameters");
        if let Some(minutes) = input.duration_minutes {
            out.fixed("\n- Duration: ");
            out.number(minutes);
            out.fixed(" minutes");
        }
        if let Some(level) = input.level {
            out.fixed("\n- Student level: ");
            out.fixed(level.as_str());
            out.fixed(" (CEFR)");
        }
    }

    let mut student_chars = push_facts_section(&mut out, input.known_facts());

    if !input.tasks.is_empty() {
        out.start_section();
        push_objectives(&mut out, input.tasks, enabled.on(TASK_TOOL_AT));
    }

    if input.review && !input.review_items.is_empty() {
        out.start_section();
        push_review_items(
            &mut out,
            input.review_items,
            enabled.on(MASTERY_TOOL_AT),
            enabled.on(AUDIO_TOOL_AT),
        );
    }
    student_chars += push_due_section(&mut out, input.due_items(), enabled.on(MASTERY_TOOL_AT));

    let tool_costs = push_functions_section(&mut out, input, enabled.as_slice());
    let (assembled, assembled_chars, plain) = out.finish();
    // Normal mode only removes characters or swaps one ASCII character for
    // another, so the prompt's characters are counted again only when
    // optimising changed its length. The builder writes its own parts
    // normal (sections joined by one blank line, each a header with
    // content under it), so when every copied text was plain the prompt
    // is normal if the conversation prompt, scanned as a text of its own,
    // is.
    let assembled_len = assembled.len();
    let system_prompt = match input.optimise {
        Some(OptimiseMode::Normal) if plain && is_normal(conversation) => assembled,
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
        tool_costs,
        student_tokens: student_chars.div_ceil(4),
    }
}

/// Catalogue positions of the tools the sections mention.
const TASK_TOOL_AT: usize = catalogue_position(TASK_TOOL);
const MASTERY_TOOL_AT: usize = catalogue_position("mark_item_mastered");
const AUDIO_TOOL_AT: usize = catalogue_position("play_student_audio");

#[cfg(test)]
mod tests;
