// Types of Switchboard's JavaScript plugin client (switchboard.js), written
// by hand; `tsc -p clients/js` checks the module against them.

/** The client's version. */
export const VERSION: string;

/** A plugin tool as registered: a name, what it does, an object JSON Schema. */
export interface ToolDefinition {
  /** 1-64 characters of `a-z A-Z 0-9 _ -`, not a catalogue tool's name. */
  name: string;
  /** 1-1024 characters: what the agent reads. */
  description: string;
  /** An object schema of at most 16 KiB and 12 levels. */
  parameters: Record<string, unknown>;
}

/** The kinds of plugin the API knows. */
export type PluginType = 'codap' | 'slack' | 'database' | 'custom';

/** A whole `register-tools` body (docs/api.md, "Plugin tools"). */
export interface Registration {
  pluginType: PluginType;
  pluginVersion: string;
  capabilities?: Array<{
    type: 'data_analysis' | 'visualization' | 'messaging' | 'storage' | 'computation';
    level: 'basic' | 'advanced' | 'enterprise';
    resources?: string[];
    permissions?: string[];
  }>;
  availableTools: ToolDefinition[];
  environment?: {
    version?: string;
    features?: string[];
    limitations?: string[];
    contextInfo?: Record<string, unknown>;
  };
  constraints?: unknown;
}

/** A `PATCH …/tools` body: each entry is checked alone. */
export interface ToolPatch {
  add?: ToolDefinition[];
  remove?: string[];
  modify?: Array<{
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    status?: 'active' | 'disabled';
  }>;
}

/** What a registration or patch answers. */
export interface ChangeAnswer {
  success: boolean;
  registeredTools: string[];
  failedTools: Array<{ toolName: string; error: string; recoverable: boolean }>;
  added: string[];
  removed: string[];
  modified: string[];
  sessionConfiguration: Record<string, unknown>;
  [key: string]: unknown;
}

/** A call of one of the plugin's tools, relayed from the agent. */
export interface ToolCall {
  /** The call's id (sent back with its answer to `…/tool-results`). */
  callId: string;
  /** The tool called. */
  name: string;
  /** Its arguments, already checked against the tool's schema. */
  arguments: any;
  /** When the agent stops waiting (from the server's `timeoutMs`, on this machine's clock). */
  deadline: Date;
  /** Milliseconds the agent was still waiting when the call arrived. */
  timeoutMs: number;
  /** Aborts at the deadline, or when the plugin closes. */
  signal: AbortSignal;
}

/**
 * Answers a call: its return value (or the value of the Promise it returns)
 * is sent as `{"result"}`; if it throws (or rejects), the error's message
 * is sent as `{"error"}`. `undefined` and `null` are sent as `{}`.
 */
export type CallHandler = (call: ToolCall) => unknown;

/** `tool-availability-update`: what changed in the session's plugin tools. */
export interface AvailabilityUpdate {
  type: 'tools-registered' | 'tools-updated' | 'tools-removed';
  added: ToolDefinition[];
  removed: string[];
  modified: ToolDefinition[];
  statusChanged: Array<{ name: string; status: 'active' | 'disabled' }>;
  toolCount: number;
  /** When, Unix milliseconds. */
  timestamp: number;
  reason: 'plugin-registration' | 'plugin-update';
}

/** The event stream's state. */
export type Status = 'idle' | 'connecting' | 'live' | 'reconnecting' | 'closed';

/** Options of `join` and `new Plugin`. */
export interface PluginOptions {
  /** Switchboard's origin, e.g. `https://sb.example`; in a browser, the page's own by default. */
  baseUrl?: string;
  /** The fetch to use (tests, proxies); `globalThis.fetch` by default. */
  fetch?: typeof fetch;
  /** Reconnect delays: the first (500 ms), doubled up to `maxMs` (10 s); reset once a stream opens. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A stream silent this long is reconnected (45000; the server sends a keep-alive every 15 s). */
  idleTimeoutMs?: number;
  /** `pluginType` when `registerTools` is given a list (`custom`). */
  pluginType?: PluginType;
  /** `pluginVersion` when `registerTools` is given a list (`1.0.0`). */
  pluginVersion?: string;
  /** The clock deadlines are measured on (`Date.now`). */
  now?: () => number;
}

/** What `new Plugin` takes: a session and its plugin token, plus options. */
export interface PluginInit extends PluginOptions {
  sessionId: string;
  /** The session's plugin token (`pt_…`); a session token works too. */
  pluginToken: string;
}

/** One SSE event as parsed. */
export interface SseEvent {
  /** The `event:` name (`message` when none). */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The last id seen, this event's or an earlier one's. */
  id: string;
}

/** An HTTP error from Switchboard. */
export class SwitchboardError extends Error {
  constructor(status: number, body: unknown, retryAfter: number | null);
  /** The HTTP status. */
  status: number;
  /** The answer's JSON (or text). */
  body: unknown;
  /** For 429: the seconds to wait. */
  retryAfter: number | null;
}

/** A Server-Sent Events parser: text in, complete events out. */
export class SseParser {
  constructor();
  /** The last `id:` seen. */
  lastEventId: string;
  /** The last `retry:` in milliseconds, if any. */
  retry: number | null;
  /** Parses the next piece of the stream (cut anywhere). */
  push(text: string): SseEvent[];
}

/** One plugin of one session. */
export class Plugin {
  /** A plugin for a session whose id and plugin token are known already. */
  constructor(init: PluginInit);
  readonly sessionId: string;
  readonly pluginToken: string;
  /** Switchboard's origin, without a trailing slash. */
  readonly baseUrl: string;
  /** The event stream's state. */
  status: Status;
  /** The last event id received (sent as `Last-Event-ID` when reconnecting). */
  lastEventId: string;
  /** Registers the plugin's tools, replacing earlier ones; waits for the stream to open first if it was started. */
  registerTools(tools: ToolDefinition[] | Registration): Promise<ChangeAnswer>;
  /** Adds, removes and changes tools. */
  updateTools(patch: ToolPatch): Promise<ChangeAnswer>;
  /** Answers relayed calls with `handler` (replacing an earlier one); starts the stream. */
  onCall(handler: CallHandler): this;
  /** Called with each `tool-availability-update`; starts the stream. */
  onToolsChanged(handler: (update: AvailabilityUpdate) => void): this;
  /** Called when the stream's status changes (`closed` with the error that ended it, if any). */
  onStatus(handler: (status: Status, error?: Error) => void): this;
  /** Called with problems that do not stop the plugin (a dropped stream, a refused answer). */
  onError(handler: (error: Error) => void): this;
  /** Stops listening; running calls' signals abort. */
  close(): void;
}

/** Joins a session with a join code; the plugin, not yet listening. */
export function join(code: string, options?: PluginOptions): Promise<Plugin>;
