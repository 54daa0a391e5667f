// The peer of `domain::lesson::prompt::build` for `make bench`: the SEED's
// own prompt builder, as its design document ("Tool Configuration System
// Design", sections 2 "System Trigger Templates", 3 "Runtime Prompt
// Builder" and 4 "Token Optimization Utilities") wrote it in TypeScript,
// transcribed to plain JavaScript: types dropped; logic, regular
// expressions, template texts and string building as the seed wrote them.
// It is what a user of the seed runs today, so it is the fair peer.
//
// What is not the seed's own text, and why:
// - TUTOR_FUNCTION_DECLARATIONS: the seed imports a static array from
//   `@/types/functions`, which its document does not show. Here it is the
//   six declarations Switchboard sends (read from DECLARATIONS.json, written
//   by the Rust bench), parsed once at module load as the seed's import is;
//   the seed's builder only filters that static array per call.
// - `seedOptions` below maps Switchboard's `PromptInput` JSON to the seed's
//   `BuildPromptOptions` (level → targetLevel, optimise → optimizeTokens),
//   once, before timing.
//
// The seed's output differs from Switchboard's: its templates are worded
// differently, it has no review-item section, no lesson-fit filter, no
// per-tool costs or optimisation statistics, and its estimate covers the
// prompt only (UTF-16 length / 4). So its output is not compared with
// Switchboard's; it is checked for sanity instead (every enabled tool's
// line, every task, the declarations), so a broken transcription fails
// loudly before anything is timed.
//
// Usage: node prompt_builder.mjs INPUT.json DECLARATIONS.json
// Prints "ready", then for each line read a batch's micros per build.

import { readFileSync } from "node:fs";

const [inputPath, declarationsPath] = process.argv.slice(2);

// The seed's `import { TUTOR_FUNCTION_DECLARATIONS } from '@/types/functions'`.
const TUTOR_FUNCTION_DECLARATIONS = JSON.parse(readFileSync(declarationsPath, "utf8"));

// ---- The seed's src/lib/toolTriggerTemplates.ts ----

export const TRIGGER_TEMPLATES = {
  always: '', // No special instructions needed

  error_detected: `Call this function SILENTLY when the student makes any linguistic error:
- Grammar (wrong tense, conjugation, word order)
- Pronunciation (incorrect sounds, stress)
- Vocabulary (wrong word, false friend)
- Cultural (inappropriate formality)
Do NOT interrupt conversation flow. Log errors in the background.`,

  session_ending: `Call this function ONLY when:
- The session timer expires
- The student explicitly says goodbye/ends the conversation
- You've naturally wrapped up the practice objectives
Do NOT call this mid-conversation.`,

  task_context: `Call this function when the student SUCCESSFULLY accomplishes a lesson objective:
- Wait for clear completion, not partial attempts
- Match against the task IDs provided in context
- Only mark once per task`,

  keyword: `Call this function when the student mentions these topics: {{keywords}}.`,

  turn_count: `Call this function after at least {{minTurns}} conversation turns have passed.`,

  time_remaining: `Call this function when approximately {{minutesRemaining}} minutes remain in the session.`,
};

// Interpolate template with config values
export function buildTriggerInstruction(
  condition
) {
  let template = TRIGGER_TEMPLATES[condition.type];

  if (condition.keywords) {
    template = template.replace('{{keywords}}', condition.keywords.join(', '));
  }
  if (condition.minTurns) {
    template = template.replace('{{minTurns}}', String(condition.minTurns));
  }
  if (condition.minutesRemaining) {
    template = template.replace('{{minutesRemaining}}', String(condition.minutesRemaining));
  }

  return template;
}

// ---- The seed's src/lib/promptBuilder.ts ----

export function buildLessonPrompt(options) {
  const {
    conversationPrompt,
    toolConfiguration,
    tasks,
    durationMinutes,
    targetLevel,
    optimizeTokens = true,
  } = options;

  // 1. Filter enabled tools
  const enabledTools = toolConfiguration.tools.filter(t => t.enabled);

  // 2. Get matching function declarations
  const functionDeclarations = TUTOR_FUNCTION_DECLARATIONS.filter(
    decl => enabledTools.some(t => t.toolId === decl.name)
  );

  // 3. Build tool instructions section
  const toolInstructions = buildToolInstructions(enabledTools, toolConfiguration.globalInstructions);

  // 4. Build task context if present
  const taskContext = tasks?.length
    ? buildTaskContext(tasks)
    : '';

  // 5. Assemble final prompt
  let systemPrompt = assemblePrompt({
    conversationPrompt,
    toolInstructions,
    taskContext,
    durationMinutes,
    targetLevel,
  });

  // 6. Optimize tokens if requested
  if (optimizeTokens) {
    systemPrompt = optimizePromptTokens(systemPrompt);
  }

  return {
    systemPrompt,
    functionDeclarations,
    estimatedTokens: estimateTokenCount(systemPrompt),
  };
}

function buildToolInstructions(
  tools,
  globalInstructions
) {
  if (tools.length === 0) return '';

  const parts = [];

  if (globalInstructions) {
    parts.push(globalInstructions);
  }

  parts.push('You have access to these functions:\n');

  for (const tool of tools) {
    const triggerText = buildTriggerInstruction(tool.triggerCondition);
    const customText = tool.customInstructions || '';

    parts.push(`**${tool.toolId}**: ${triggerText} ${customText}`.trim());
  }

  return parts.join('\n\n');
}

function buildTaskContext(tasks) {
  return `
## Lesson Objectives
The student should accomplish these tasks during the session:
${tasks.map(t => `- ${t.id}: ${t.text}`).join('\n')}

When a task is clearly completed, call mark_task_complete with the task ID.`;
}

function assemblePrompt(parts) {
  const sections = [];

  // Main conversation context
  sections.push(parts.conversationPrompt);

  // Session metadata
  if (parts.durationMinutes || parts.targetLevel) {
    sections.push(`
## Session Parameters
${parts.durationMinutes ? `- Duration: ${parts.durationMinutes} minutes` : ''}
${parts.targetLevel ? `- Student Level: ${parts.targetLevel}` : ''}`);
  }

  // Task context
  if (parts.taskContext) {
    sections.push(parts.taskContext);
  }

  // Tool instructions (always at end for clear separation)
  if (parts.toolInstructions) {
    sections.push(`
## Available Functions
${parts.toolInstructions}`);
  }

  return sections.filter(Boolean).join('\n\n');
}

function estimateTokenCount(text) {
  // Rough estimation: ~4 chars per token for English
  return Math.ceil(text.length / 4);
}

// ---- The seed's src/lib/tokenOptimizer.ts (the function the builder calls) ----

export function optimizePromptTokens(prompt) {
  let optimized = prompt;

  // 1. Normalize line endings
  optimized = optimized.replace(/\r\n/g, '\n');

  // 2. Remove trailing whitespace from lines
  optimized = optimized.replace(/[ \t]+$/gm, '');

  // 3. Collapse multiple blank lines to single
  optimized = optimized.replace(/\n{3,}/g, '\n\n');

  // 4. Remove multiple spaces (keep single)
  optimized = optimized.replace(/  +/g, ' ');

  // 5. Remove empty headers (## \n)
  optimized = optimized.replace(/^#+\s*$/gm, '');

  // 6. Trim start/end whitespace
  optimized = optimized.trim();

  return optimized;
}

// ---- Not the seed's: the bench's driver ----

/// Switchboard's `PromptInput` JSON as the seed's `BuildPromptOptions`.
function seedOptions(input) {
  return {
    conversationPrompt: input.conversationPrompt,
    toolConfiguration: {
      tools: input.configuration.tools.map((t) => ({
        toolId: t.toolId,
        enabled: t.enabled,
        triggerCondition: t.triggerCondition,
        ...(t.customInstructions != null ? { customInstructions: t.customInstructions } : {}),
      })),
      ...(input.configuration.globalInstructions != null
        ? { globalInstructions: input.configuration.globalInstructions }
        : {}),
    },
    tasks: input.tasks.map((t) => ({ id: t.id, text: t.text })),
    durationMinutes: input.durationMinutes ?? undefined,
    targetLevel: input.level ?? undefined,
    optimizeTokens: input.optimise != null,
  };
}

/// Fails loudly when the seed's output is not what its code must give
/// for this input: a line per enabled tool with its trigger filled in,
/// every task, the sections, the declarations and the estimate.
function checkSane(options, built) {
  const problems = [];
  const prompt = built.systemPrompt;
  const enabled = options.toolConfiguration.tools.filter((t) => t.enabled);
  if (enabled.length === 0) problems.push("the input enables no tool");
  for (const tool of enabled) {
    if (!prompt.includes(`\n**${tool.toolId}**:`)) problems.push(`no line for ${tool.toolId}`);
    if (tool.customInstructions && !prompt.includes(tool.customInstructions))
      problems.push(`${tool.toolId}'s custom instructions missing`);
    const keywords = tool.triggerCondition.keywords;
    if (keywords && !prompt.includes(`mentions these topics: ${keywords.join(", ")}.`))
      problems.push(`${tool.toolId}'s keywords missing`);
  }
  for (const task of options.tasks) {
    if (!prompt.includes(`\n- ${task.id}: ${task.text}\n`)) problems.push(`task ${task.id} missing`);
  }
  for (const header of ["## Session Parameters", "## Lesson Objectives", "## Available Functions"]) {
    if (!prompt.includes(`\n${header}\n`)) problems.push(`${header} missing`);
  }
  if (!prompt.startsWith(options.conversationPrompt.trim())) problems.push("the teacher's prompt does not open it");
  if (/\{\{|\}\}|  |\n\n\n|[ \t]\n/.test(prompt)) problems.push("a placeholder or unoptimised whitespace is left");
  const names = built.functionDeclarations.map((d) => d.name);
  if (JSON.stringify(names) !== JSON.stringify(TUTOR_FUNCTION_DECLARATIONS.map((d) => d.name).filter((n) => enabled.some((t) => t.toolId === n))))
    problems.push(`declarations ${names}`);
  if (names.length !== enabled.length) problems.push(`${names.length} declarations for ${enabled.length} tools`);
  if (built.estimatedTokens !== Math.ceil(prompt.length / 4)) problems.push("estimate");
  if (problems.length) {
    console.error(`the seed builder's output is not sane (${problems.join("; ")}):\n${prompt}`);
    process.exit(1);
  }
}

const options = seedOptions(JSON.parse(readFileSync(inputPath, "utf8")));
checkSane(options, buildLessonPrompt(options));

// Warm up (JIT), then time batches of BATCH builds on demand: the method
// of the Rust side's batches.
const BATCH = 2000;
let sink = 0;
for (let i = 0; i < 20000; i++) sink += buildLessonPrompt(options).estimatedTokens;
const batch = () => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < BATCH; i++) sink += buildLessonPrompt(options).estimatedTokens;
  return Number(process.hrtime.bigint() - started) / 1000 / BATCH;
};

// One batch per line read on stdin, its micros per build written back as
// a line, so that the Rust bench times its own batch just before each of
// ours and compares the two at the same moment of a noisy machine (whose
// speed can change twofold from one second to the next). Ends with stdin.
console.log("ready");
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  pending += chunk;
  let at;
  while ((at = pending.indexOf("\n")) >= 0) {
    pending = pending.slice(at + 1);
    console.log(String(batch()));
  }
});
