//! The runtime prompt builder: assembles the tutor's system prompt and the
//! function declarations from the teacher's prompt, the tool configuration
//! and the system's trigger templates.
//!
//! Deterministic by construction — no clocks, no maps with random order,
//! tools in catalogue order — because provider prompt caches only hit on
//! byte-identical prompts.

use crate::domain::declaration::FunctionDeclaration;
use crate::domain::lesson::config::{
    fits_lesson, LessonFacts, LessonToolConfiguration, ToolConfig, TASK_TOOL,
};
use crate::domain::lesson::normalise::{is_normal, is_normal_inline};
use crate::domain::lesson::optimise::{
    char_count, optimise_owned, trimmed, OptimisationStats, OptimiseMode,
};
use crate::domain::lesson::review::{push_prompt_section as push_review_section, ReviewItem};
use crate::domain::lesson::tools::{
    catalogue_position, prepared_declarations, PreparedDeclaration, TUTOR_TOOLS,
};
use crate::domain::lesson::trigger::{TriggerCondition, TriggerKind};
use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
use crate::domain::review_queue::{QueueItem, DUE_ITEMS_PER_LESSON};
use crate::domain::student::{KnownFact, StudentContext, FACTS_PER_LESSON};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// A lesson's prompt input: here, beside [`PromptInput`], so the lesson
/// module need not import the prompt builder that imports it.
impl LessonDraft {
    /// What the prompt builder needs from this lesson; the editor's preview
    /// and the backends' prompt endpoint both build from it.
    pub fn prompt_input(&self, optimise: Option<OptimiseMode>) -> PromptInput {
        self.prompt_input_for(optimise, None)
    }

    /// [`LessonDraft::prompt_input`] for a session opened for a student:
    /// what the session knows of them (their due review items, their
    /// known facts) goes into the prompt as data.
    pub fn prompt_input_for(
        &self,
        optimise: Option<OptimiseMode>,
        student: Option<&StudentContext>,
    ) -> PromptInput {
        PromptInput {
            student: student.cloned(),
            conversation_prompt: self.conversation_prompt.clone(),
            configuration: self.tool_configuration.clone(),
            tasks: self.tasks.clone(),
            review_items: self.review_items.clone(),
            duration_minutes: self.duration_minutes,
            level: self.level,
            review: self.review,
            optimise,
        }
    }
}

/// The instruction template of each trigger kind, in the design's full
/// wording (the concrete error types and "wait for clear completion" are
/// what keep the model from over- or under-calling); `{name}` placeholders
/// are filled by [`trigger_instruction`].
pub const fn template(kind: TriggerKind) -> &'static str {
    match kind {
        TriggerKind::Always => "",
        TriggerKind::ErrorDetected => "Call silently whenever the student makes an error: grammar (wrong tense, conjugation, word order), pronunciation (incorrect sounds and stress), vocabulary (wrong word, false friends) or cultural (inappropriate formality). Do not interrupt the conversation or mention the call.",
        TriggerKind::SessionEnding => "Call only when the session timer expires, the student says goodbye, or all objectives are wrapped up. Never call it mid-conversation.",
        TriggerKind::TaskContext => "Call only when the student clearly completes one of the listed objectives, with its task id; wait for clear completion, not partial attempts. Call once per task.",
        TriggerKind::Keyword => "Call when the student mentions these topics: {keywords}.",
        TriggerKind::TurnCount => "Call after at least {minTurns} turns of conversation.",
        TriggerKind::TimeRemaining => "Call when the session has about {minutesRemaining} left.",
    }
}

/// What has happened when a trigger fires during a session, as the start
/// of a nudge ("About 2 minutes remain: call `tool` now."); kept beside the
/// prompt's templates so the model hears one voice. Empty for triggers the
/// model judges itself (always, error detected, task context).
pub fn situation_template(kind: TriggerKind) -> &'static str {
    match kind {
        TriggerKind::Keyword => "The student mentioned {keyword}",
        TriggerKind::TurnCount => "{minTurns} turns of conversation have passed",
        TriggerKind::TimeRemaining => "About {minutesRemaining} remain",
        TriggerKind::SessionEnding => "The session is ending",
        TriggerKind::Always | TriggerKind::ErrorDetected | TriggerKind::TaskContext => "",
    }
}

/// `1 minute`, `2 minutes`: how the prompt and nudges say a minute count.
pub fn minutes_phrase(minutes: u8) -> String {
    let mut out = String::new();
    push_minutes_phrase(&mut out, minutes);
    out
}

/// Writes [`minutes_phrase`] onto `out`.
fn push_minutes_phrase(out: &mut String, minutes: u8) {
    if minutes == 1 {
        out.push_str("1 minute");
    } else {
        push_number(out, minutes.into());
        out.push_str(" minutes");
    }
}

/// Writes `n` in decimal onto `out`, without the formatting machinery,
/// which costs more than the rest of writing a prompt's number or two.
fn push_number(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Decimal digits are ASCII.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// Replaces each `{name}` in `template` with its value.
pub fn interpolate(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.to_owned();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// The trigger's instruction with its parameters filled in (empty for
/// `always`).
pub fn trigger_instruction(condition: &TriggerCondition) -> String {
    let mut out = String::new();
    push_trigger_instruction(&mut out, condition);
    out
}

/// Writes [`trigger_instruction`] onto `out`: the template with its
/// placeholder replaced by the condition's value. Each template has at
/// most one placeholder, named for its kind's parameter, and is split
/// around it when compiling, so a build searches no template.
fn push_trigger_instruction(out: &mut String, condition: &TriggerCondition) {
    const KEYWORD: (&str, &str) = around_placeholder(template(TriggerKind::Keyword));
    const TURNS: (&str, &str) = around_placeholder(template(TriggerKind::TurnCount));
    const MINUTES: (&str, &str) = around_placeholder(template(TriggerKind::TimeRemaining));
    match condition {
        TriggerCondition::Keyword { keywords } => {
            out.push_str(KEYWORD.0);
            for (i, keyword) in keywords.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(trimmed(keyword));
            }
            out.push_str(KEYWORD.1);
        }
        TriggerCondition::TurnCount { min_turns } => {
            out.push_str(TURNS.0);
            push_number(out, *min_turns);
            out.push_str(TURNS.1);
        }
        TriggerCondition::TimeRemaining { minutes_remaining } => {
            out.push_str(MINUTES.0);
            push_minutes_phrase(out, *minutes_remaining);
            out.push_str(MINUTES.1);
        }
        _ => out.push_str(template(condition.kind())),
    }
}

/// `template` without its `{placeholder}`: what comes before and after it.
const fn around_placeholder(template: &'static str) -> (&'static str, &'static str) {
    let bytes = template.as_bytes();
    let mut open = 0;
    while bytes[open] != b'{' {
        open += 1;
    }
    let mut close = open;
    while bytes[close] != b'}' {
        close += 1;
    }
    let (before, rest) = template.split_at(open);
    let (_, after) = rest.split_at(close + 1 - open);
    (before, after)
}

/// The tool's line in the functions section:
/// `**tool_id**: <trigger instruction> <custom instructions>`.
pub fn tool_line(config: &ToolConfig) -> String {
    let mut out = String::new();
    push_tool_line(&mut out, config);
    out
}

/// Writes [`tool_line`] onto `out`.
fn push_tool_line(out: &mut String, config: &ToolConfig) {
    out.push_str("**");
    out.push_str(&config.tool_id);
    out.push_str("**");
    let colon = out.len();
    out.push_str(": ");
    let instruction = out.len();
    push_trigger_instruction(out, &config.trigger_condition);
    let has_trigger = out.len() > instruction;
    if let Some(extra) = config.instructions() {
        if has_trigger {
            out.push(' ');
        }
        out.push_str(extra);
    } else if !has_trigger {
        out.truncate(colon);
    }
}

/// Everything the builder needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInput {
    /// The teacher's free-form prompt.
    pub conversation_prompt: String,
    /// The lesson's tool configuration.
    pub configuration: LessonToolConfiguration,
    /// Lesson objectives.
    #[serde(default)]
    pub tasks: Vec<LessonTask>,
    /// A review lesson's items.
    #[serde(default)]
    pub review_items: Vec<ReviewItem>,
    /// Planned length.
    #[serde(default)]
    pub duration_minutes: Option<u32>,
    /// Student level.
    #[serde(default)]
    pub level: Option<CefrLevel>,
    /// Whether this is a review lesson: the review tools are left out of
    /// any other lesson's prompt.
    #[serde(default)]
    pub review: bool,
    /// Whether to optimise (default on), and how.
    #[serde(default = "default_optimise")]
    pub optimise: Option<OptimiseMode>,
    /// For a session opened for a student record: the review items due for
    /// them (a review lesson's) and their known facts (a lesson that uses
    /// profile facts), fixed when the session opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student: Option<StudentContext>,
}

fn default_optimise() -> Option<OptimiseMode> {
    Some(OptimiseMode::Normal)
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
    /// Declarations of the enabled tools only, in catalogue order (shared
    /// with the prepared catalogue, not copied per build).
    pub declarations: Vec<Arc<FunctionDeclaration>>,
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

fn token_text(system_prompt: &str, declarations: &[Arc<FunctionDeclaration>]) -> String {
    let mut text = system_prompt.to_owned();
    for declaration in declarations {
        text.push('\n');
        text.push_str(&serde_json::to_string(&**declaration).unwrap_or_default());
    }
    text
}

impl PromptInput {
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
        match &self.student {
            Some(s) if self.review => &s.due,
            _ => &[],
        }
    }

    /// The student's known facts this prompt carries (a lesson that uses
    /// profile facts only).
    pub fn known_facts(&self) -> &[KnownFact] {
        match &self.student {
            Some(s) if self.configuration.use_profile_facts => &s.facts,
            _ => &[],
        }
    }
}

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
    let conversation = trimmed(&input.conversation_prompt);
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
        push_objectives(&mut assembled, &input.tasks, enabled.on(TASK_TOOL_AT));
    }

    if input.review && !input.review_items.is_empty() {
        start_section(&mut assembled);
        push_review_section(
            &mut assembled,
            &input.review_items,
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
            .map(|(_, p)| p.declaration.clone())
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
    is_normal(trimmed(&input.conversation_prompt))
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

/// Writes the `## Lesson Objectives` section (there are tasks) onto `out`.
fn push_objectives(out: &mut String, tasks: &[LessonTask], completion: bool) {
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
struct FunctionsSection {
    costs: Vec<ToolCost>,
    line_bytes: usize,
    line_chars: usize,
}

/// Writes `## Available Functions` (when any tool is enabled) onto `out`:
/// the global instructions, then a line per tool, whose characters are
/// counted where it was written.
fn push_functions_section(
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
struct EnabledTools<'a> {
    tools: [(&'a ToolConfig, &'static PreparedDeclaration); TUTOR_TOOLS.len()],
    len: usize,
    /// Whether the tool at each catalogue position is among them.
    on: [bool; TUTOR_TOOLS.len()],
}

impl<'a> EnabledTools<'a> {
    fn of(input: &'a PromptInput) -> Self {
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

    fn as_slice(&self) -> &[(&'a ToolConfig, &'static PreparedDeclaration)] {
        &self.tools[..self.len]
    }

    /// Whether the tool at catalogue position `at` is enabled and fits.
    fn on(&self, at: usize) -> bool {
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
fn push_facts_section(out: &mut String, facts: &[KnownFact]) -> usize {
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
fn push_due_section(out: &mut String, items: &[QueueItem], mastery: bool) -> usize {
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
fn start_section(out: &mut String) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
}

/// Room for the whole assembled prompt, so it is allocated once: the
/// teacher's texts plus a bound on what the templates add.
fn capacity(input: &PromptInput) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lesson::config::Preset;
    use crate::domain::lesson::optimise::estimate_tokens;

    fn cafe() -> PromptInput {
        PromptInput {
            review_items: vec![],
            conversation_prompt:
                "You are Lucía, a waiter in a Madrid café.   Speak Spanish.\n\n\n\nStay in role."
                    .into(),
            configuration: Preset::StandardLesson.configuration(),
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
            optimise: Some(OptimiseMode::Normal),
            student: None,
        }
    }

    /// The seed's own builder input (issue #15; the input `make bench`
    /// times): six tools with keyword, time and task triggers, three tasks,
    /// 15 minutes, A2, and two review items so the review tools fit.
    fn seed_lesson() -> PromptInput {
        serde_json::from_str(include_str!(
            "../../../tests/fixtures/prompt/seed_lesson.json"
        ))
        .unwrap()
    }

    #[test]
    fn the_seed_lessons_prompt_is_the_pinned_one() {
        let built = build(&seed_lesson());
        let golden = include_str!("../../../tests/fixtures/prompt/seed_lesson.prompt.txt");
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
        assert_eq!(built, reference::build(&seed_lesson()));
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
        let prompt = build(&cafe()).system_prompt;
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
        let mut input = cafe();
        input.configuration.tools.reverse();
        input.configuration.global_instructions = Some("Never mention these functions.".into());
        input
            .configuration
            .tool_mut("mark_for_review")
            .unwrap()
            .custom_instructions = Some("Focus on verb endings.".into());
        let prompt = build(&input).system_prompt;
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
        let mut input = cafe();
        input.configuration = Preset::NoTracking.configuration();
        let built = build(&input);
        assert!(!built.system_prompt.contains("## Available Functions"));
        assert!(built.declarations.is_empty());
        assert!(built.tool_costs.is_empty());
        assert!(built
            .system_prompt
            .contains("Guide the student through these tasks.\n- greet"));
    }

    #[test]
    fn only_enabled_tools_are_declared() {
        let built = build(&cafe());
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
        let input = PromptInput {
            review_items: vec![],
            conversation_prompt: "Chat.".into(),
            configuration: Preset::NoTracking.configuration(),
            tasks: vec![],
            duration_minutes: None,
            level: None,
            review: false,
            optimise: None,
            student: None,
        };
        assert_eq!(build(&input).system_prompt, "Chat.");
    }

    #[test]
    fn the_same_input_gives_byte_identical_output() {
        let a = build(&cafe());
        let b = build(&cafe());
        assert_eq!(a.system_prompt.as_bytes(), b.system_prompt.as_bytes());
        assert_eq!(
            serde_json::to_string(&a.declarations).unwrap(),
            serde_json::to_string(&b.declarations).unwrap()
        );
    }

    #[test]
    fn optimising_removes_waste_and_reports_it() {
        let built = build(&cafe());
        assert!(built.system_prompt.starts_with(
            "You are Lucía, a waiter in a Madrid café. Speak Spanish.\n\nStay in role."
        ));
        assert!(
            built.stats.saved_tokens > 0
                || built.stats.optimised_chars < built.stats.original_chars
        );
        let mut raw = cafe();
        raw.optimise = None;
        let raw = build(&raw);
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
        let mut input = cafe();
        input.tasks.clear();
        let built = build(&input);
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
        let mut input = cafe();
        input.configuration = Preset::ReviewLesson.configuration();
        let names = |built: &BuiltPrompt| -> Vec<String> {
            built.declarations.iter().map(|d| d.name.clone()).collect()
        };
        let plain = build(&input);
        assert_eq!(names(&plain), ["mark_for_review", "show_session_summary"]);
        assert!(!plain.system_prompt.contains("mark_item_mastered"));
        input.review = true;
        assert_eq!(
            names(&build(&input)),
            ["mark_for_review", "show_session_summary"],
            "a review lesson without items has nothing to review"
        );
        input.review_items = vec![
            ReviewItem {
                id: "fui".into(),
                text: "Ayer fui al mercado".into(),
                audio: Some("rec/fui.webm".into()),
            },
            ReviewItem {
                id: "comi".into(),
                text: "Comí paella".into(),
                audio: None,
            },
        ];
        let review = build(&input);
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
        input.review = false;
        assert!(!build(&input).system_prompt.contains("## Review Items"));
    }

    #[test]
    fn global_instructions_without_a_tool_are_left_out() {
        let mut input = cafe();
        input.configuration = Preset::NoTracking.configuration();
        input.configuration.global_instructions = Some("Never mention functions.".into());
        assert!(!build(&input)
            .system_prompt
            .contains("Never mention functions."));
    }

    /// The builder as it was before it was made fast (every declaration
    /// built, serialised and estimated per call, sections joined from
    /// per-line strings): the fast one must give the same result.
    mod reference {
        use super::super::*;
        use crate::domain::lesson::optimise::{estimate_tokens, optimise};
        use crate::domain::lesson::review::prompt_section;
        use crate::domain::lesson::tools::tutor_tool;

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
                    &input.review_items,
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
            let declarations: Vec<Arc<FunctionDeclaration>> = enabled
                .iter()
                .filter_map(|c| tutor_tool(&c.tool_id))
                .map(|t| Arc::new(t.declaration()))
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
        use super::super::*;
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

        fn input() -> impl Strategy<Value = PromptInput> {
            input_from(text)
        }

        fn input_from<S: Strategy<Value = String>>(
            text: fn() -> S,
        ) -> impl Strategy<Value = PromptInput> {
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
                        PromptInput {
                            conversation_prompt: prompt,
                            configuration,
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
                            optimise: [
                                None,
                                Some(OptimiseMode::Normal),
                                Some(OptimiseMode::Aggressive),
                            ][optimise as usize],
                            student: None,
                        }
                    },
                )
        }

        proptest! {
            #[test]
            fn the_fast_builder_gives_what_the_reference_gives(input in input()) {
                prop_assert_eq!(build(&input), super::reference::build(&input));
            }

            #[test]
            fn tidy_texts_too(input in input_from(tidy_text)) {
                prop_assert_eq!(build(&input), super::reference::build(&input));
            }
        }
    }
}
