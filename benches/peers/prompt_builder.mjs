// The peer of `domain::lesson::prompt::build` for `make bench`: the seed's
// TypeScript prompt builder transcribed to plain JavaScript (types dropped),
// run by Node on the same machine in the same run as the Rust benchmark.
//
// It builds what the Rust builder builds, in the way the TypeScript did:
// each call creates the tool declarations, serialises each to estimate its
// tokens, joins sections and lines, and optimises with split/map/join. The
// output is checked against the Rust builder's (system prompt and token
// estimate) before anything is timed, so both sides do the same work.
//
// Usage: node prompt_builder.mjs INPUT.json EXPECTED.json
// Prints one JSON line: {"medianMicros", "iterations", "samples"}.

import { readFileSync } from "node:fs";

const TEMPLATES = {
  always: "",
  error_detected:
    "Call silently whenever the student makes an error: grammar (wrong tense, conjugation, word order), pronunciation (incorrect sounds and stress), vocabulary (wrong word, false friends) or cultural (inappropriate formality). Do not interrupt the conversation or mention the call.",
  session_ending:
    "Call only when the session timer expires, the student says goodbye, or all objectives are wrapped up. Never call it mid-conversation.",
  task_context:
    "Call only when the student clearly completes one of the listed objectives, with its task id; wait for clear completion, not partial attempts. Call once per task.",
  keyword: "Call when the student mentions these topics: {keywords}.",
  turn_count: "Call after at least {minTurns} turns of conversation.",
  time_remaining: "Call when the session has about {minutesRemaining} left.",
};

const CATALOGUE = [
  "mark_for_review",
  "update_user_profile",
  "show_session_summary",
  "mark_task_complete",
  "mark_item_mastered",
  "play_student_audio",
];
const REVIEW_TOOLS = ["mark_item_mastered", "play_student_audio"];

function declaration(id) {
  switch (id) {
    case "mark_for_review":
      return {
        name: id,
        description:
          "Record a mistake the student made so it can be reviewed later. Call silently; do not interrupt the conversation.",
        parameters: {
          type: "object",
          properties: {
            errorType: { type: "string", enum: ["grammar", "pronunciation", "vocabulary", "cultural"], description: "Kind of mistake." },
            studentSaid: { type: "string", description: "What the student said, verbatim." },
            correctForm: { type: "string", description: "The correct way to say it." },
            severity: { type: "integer", minimum: 1, maximum: 10, description: "1 = minor slip, 10 = blocks understanding." },
            explanation: { type: "string", description: "Short reason, for the review lesson." },
          },
          required: ["errorType", "studentSaid", "correctForm", "severity"],
        },
      };
    case "update_user_profile":
      return {
        name: id,
        description: "Remember something the student revealed about themselves, to personalise later lessons.",
        parameters: {
          type: "object",
          properties: {
            category: { type: "string", enum: ["interest", "goal", "preference", "personal_detail", "learning_style"], description: "What kind of fact this is." },
            value: { type: "string", description: "The fact, in a few words." },
            confidence: { type: "number", minimum: 0, maximum: 1, description: "How sure you are, 0-1." },
          },
          required: ["category", "value"],
        },
      };
    case "show_session_summary":
      return {
        name: id,
        description: "Show the student a summary of the session: what went well and what to practise next.",
        parameters: {
          type: "object",
          properties: {
            summary: { type: "string", description: "Two or three sentences on the session." },
            strengths: { type: "array", items: { type: "string" }, description: "What the student did well." },
            areasToImprove: { type: "array", items: { type: "string" }, description: "What to practise." },
            nextSteps: { type: "array", items: { type: "string" }, description: "Suggested next activities." },
            stars: { type: "integer", minimum: 1, maximum: 5, description: "How the session went overall, 1-5 stars." },
          },
          required: ["summary", "strengths", "areasToImprove"],
        },
      };
    case "mark_task_complete":
      return {
        name: id,
        description: "Mark one of the lesson objectives as completed by the student.",
        parameters: {
          type: "object",
          properties: {
            taskId: { type: "string", description: "The id of the completed task, as listed in the lesson objectives." },
            evidence: { type: "string", description: "What the student said or did that completed it." },
          },
          required: ["taskId"],
        },
      };
    case "mark_item_mastered":
      return {
        name: id,
        description: "Mark a review item as mastered so it leaves the student's review queue.",
        parameters: {
          type: "object",
          properties: {
            itemId: { type: "string", description: "The id of the review item." },
            confidence: { type: "integer", minimum: 1, maximum: 5, description: "How solidly it is mastered, 1-5." },
          },
          required: ["itemId"],
        },
      };
    default:
      return {
        name: id,
        description:
          "Play the student's earlier recording of a review item so they can compare it with the correct form.",
        parameters: {
          type: "object",
          properties: {
            recordingId: { type: "string", description: "The id of the review item whose recording to play (an item listed with a recording)." },
            reason: { type: "string", description: "Why it is being played, shown to the student." },
          },
          required: ["recordingId"],
        },
      };
  }
}

// Characters as Rust's chars().count() counts them (code points), without
// allocating: UTF-16 units minus the low halves of surrogate pairs. (A
// spread into an array, [...text], would make the peer several times slower
// than the seed's builder and flatter the comparison.)
const codePoints = (text) => {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) n--;
  }
  return n;
};
const estimateTokens = (text) => Math.ceil(codePoints(text) / 4);
const minutesPhrase = (m) => (m === 1 ? "1 minute" : `${m} minutes`);

function triggerInstruction(condition) {
  const values = {};
  if (condition.type === "keyword") values.keywords = condition.keywords.map((k) => k.trim()).join(", ");
  if (condition.type === "turn_count") values.minTurns = String(condition.minTurns);
  if (condition.type === "time_remaining") values.minutesRemaining = minutesPhrase(condition.minutesRemaining);
  let out = TEMPLATES[condition.type];
  for (const [name, value] of Object.entries(values)) out = out.replaceAll(`{${name}}`, value);
  return out;
}

function toolLine(config) {
  const words = [triggerInstruction(config.triggerCondition), config.customInstructions?.trim()].filter(
    (s) => s,
  );
  return words.length ? `**${config.toolId}**: ${words.join(" ")}` : `**${config.toolId}**`;
}

function fits(id, input) {
  if (id === "mark_task_complete") return input.tasks.length > 0;
  if (REVIEW_TOOLS.includes(id)) return input.review && input.reviewItems.length > 0;
  return true;
}

function headerLevel(line) {
  const m = /^(#{1,6})( |$)/.exec(line);
  return m ? m[1].length : null;
}

function normalise(text) {
  const lines = text
    .replace(/\r\n/g, "\n")
    .replace(/\r/g, "\n")
    .trim()
    .split("\n")
    .map((line) => {
      const trimmed = line.trimEnd();
      const body = trimmed.trimStart();
      return trimmed.slice(0, trimmed.length - body.length) + body.replace(/[ \t]+/g, " ");
    });
  const kept = [];
  let next = { kind: "end" };
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (line.trim() === "") {
      kept.push(line);
      continue;
    }
    const level = headerLevel(line);
    if (level !== null) {
      const empty = next.kind === "end" || (next.kind === "header" && next.level <= level);
      if (empty) continue;
      next = { kind: "header", level };
    } else {
      next = { kind: "content" };
    }
    kept.push(line);
  }
  kept.reverse();
  return kept.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function build(input) {
  const config = input.configuration;
  const enabled = CATALOGUE.map((id) => config.tools.find((t) => t.toolId === id))
    .filter((t) => t && t.enabled)
    .filter((t) => fits(t.toolId, input));
  const on = (id) => enabled.some((t) => t.toolId === id);
  const sections = [];
  const conversation = input.conversationPrompt.trim();
  if (conversation) sections.push(conversation);
  const parameters = [];
  if (input.durationMinutes != null) parameters.push(`- Duration: ${input.durationMinutes} minutes`);
  if (input.level != null) parameters.push(`- Student level: ${input.level} (CEFR)`);
  if (parameters.length) sections.push(`## Session Parameters\n${parameters.join("\n")}`);
  if (input.tasks.length) {
    const intro = on("mark_task_complete")
      ? "Guide the student through these tasks. When the student completes one, call `mark_task_complete` with its task id.\n"
      : "Guide the student through these tasks.\n";
    sections.push(`## Lesson Objectives\n${intro}${input.tasks.map((t) => `- ${t.id}: ${t.text.trim()}`).join("\n")}`);
  }
  if (input.review && input.reviewItems.length) {
    const audio = on("play_student_audio");
    let section = "## Review Items\nReview these items with the student.";
    if (on("mark_item_mastered"))
      section += " When the student says one correctly and confidently, call `mark_item_mastered` with its item id.";
    if (audio && input.reviewItems.some((i) => i.audio))
      section +=
        " Items marked (recording) have the student's earlier recording: `play_student_audio` with the item id plays it.";
    for (const item of input.reviewItems) section += `\n- ${item.id}: ${item.text.trim()}${audio && item.audio ? " (recording)" : ""}`;
    sections.push(section);
  }
  const lines = enabled.map(toolLine);
  if (enabled.length) {
    const global = config.globalInstructions?.trim();
    sections.push(`## Available Functions\n${global ? `${global}\n` : ""}${lines.join("\n")}`);
  }
  const assembled = sections.join("\n\n");
  const systemPrompt = normalise(assembled);
  const declarations = enabled.map((t) => declaration(t.toolId));
  const declarationJson = declarations.map((d) => JSON.stringify(d));
  const declarationTokens = declarationJson.map(estimateTokens);
  const toolCosts = enabled.map((t, i) => {
    const instruction = estimateTokens(lines[i]);
    return {
      toolId: t.toolId,
      declarationTokens: declarationTokens[i],
      instructionTokens: instruction,
      totalTokens: declarationTokens[i] + instruction,
    };
  });
  const tokenText = [systemPrompt, ...declarationJson].join("\n");
  const originalTokens = estimateTokens(assembled);
  const optimisedTokens = estimateTokens(systemPrompt);
  const saved = Math.max(0, originalTokens - optimisedTokens);
  return {
    systemPrompt,
    declarations,
    estimatedTokens: estimateTokens(tokenText),
    stats: {
      originalChars: codePoints(assembled),
      optimisedChars: codePoints(systemPrompt),
      originalTokens,
      optimisedTokens,
      savedTokens: saved,
      savedPercent: originalTokens ? Math.round((saved * 1000) / originalTokens) / 10 : 0,
    },
    toolCosts,
  };
}

const [inputPath, expectedPath] = process.argv.slice(2);
const input = JSON.parse(readFileSync(inputPath, "utf8"));
const expected = JSON.parse(readFileSync(expectedPath, "utf8"));
const built = build(input);
for (const key of ["systemPrompt", "estimatedTokens"]) {
  if (JSON.stringify(built[key]) !== JSON.stringify(expected[key])) {
    console.error(`peer ${key} differs from the Rust builder's:\n${built[key]}\n---\n${expected[key]}`);
    process.exit(1);
  }
}
if (JSON.stringify(built.toolCosts) !== JSON.stringify(expected.toolCosts)) {
  console.error("peer toolCosts differ from the Rust builder's");
  process.exit(1);
}

// Warm up (JIT), then time batches and report the median per build.
const BATCH = 2000;
let sink = 0;
for (let i = 0; i < 20000; i++) sink += build(input).estimatedTokens;
const samples = [];
for (let s = 0; s < 60; s++) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < BATCH; i++) sink += build(input).estimatedTokens;
  samples.push(Number(process.hrtime.bigint() - started) / 1000 / BATCH);
}
samples.sort((a, b) => a - b);
console.log(
  JSON.stringify({ medianMicros: samples[samples.length >> 1], iterations: BATCH, samples: samples.length, sink: sink > 0 }),
);
