// Switchboard's JavaScript client for plugins: join a session with a join
// code, register tools, answer the agent's calls relayed to them, follow
// tool changes. An ES module with no dependencies, for browsers and
// Node 20+. Types: switchboard.d.ts; guide: README.md and docs/api.md.
//
// The plugin's event stream (`GET /api/sessions/{id}/plugin-events`) is
// read with fetch, so the plugin token travels in the Authorization header
// (never in a URL), and is parsed here (SSE); when it drops, the client
// reconnects with back-off and sends Last-Event-ID. The server offers a
// new stream every call still waiting for an answer, so a call id already
// being handled is skipped, never run twice, and a call past its deadline
// is not started.

/** The client's version, also in the served file's ETag's content. */
export const VERSION = '1.0.0';

/** The `tool-call-request` event: a call relayed to the plugin. */
const CALL_EVENT = 'tool-call-request';
/** The `tool-availability-update` event: the session's plugin tools changed. */
const TOOLS_EVENT = 'tool-availability-update';
/** Call ids remembered so a re-offered call is not run twice. */
const REMEMBERED_CALLS = 1000;
/** Statuses after which a stream is not retried: the credential or session is wrong or gone. */
const FATAL_STATUSES = [400, 401, 403, 404, 410];

/**
 * An HTTP error from Switchboard: the status, the JSON (or text) body and,
 * for 429, the seconds to wait.
 */
export class SwitchboardError extends Error {
  /**
   * @param {number} status
   * @param {unknown} body
   * @param {number | null} retryAfter
   */
  constructor(status, body, retryAfter) {
    super(`Switchboard answered ${status}: ${describe(body)}`);
    this.name = 'SwitchboardError';
    /** @type {number} */
    this.status = status;
    /** @type {unknown} */
    this.body = body;
    /** @type {number | null} */
    this.retryAfter = retryAfter;
  }
}

/**
 * A readable line for an error body: `{"Invalid":{"field","rule"}}`,
 * `{"error","message"}`, or the JSON itself.
 * @param {unknown} body
 * @returns {string}
 */
function describe(body) {
  if (body && typeof body === 'object') {
    const b = /** @type {Record<string, any>} */ (body);
    if (b.Invalid) return `${b.Invalid.field}: ${b.Invalid.rule}`;
    if (typeof b.message === 'string') return b.message;
    return JSON.stringify(body);
  }
  return String(body ?? '');
}

/**
 * A Server-Sent Events parser (the WHATWG rules): feed it text as it
 * arrives, in chunks cut anywhere, and get the complete events.
 */
export class SseParser {
  /**
   * The line being read when a chunk ended inside it, in pieces: joined
   * once, when the line ends, so a 1 MB line cut into a hundred chunks is
   * copied once and each character is looked at once (reading the whole
   * line again with every chunk made such an event quadratic: 36 ms for
   * 0.7 MB in 64 KiB chunks).
   * @type {string[]}
   */
  #partial = [];
  /** @type {string[]} */
  #data = [];
  #event = '';
  #started = false;
  #skipLineFeed = false;

  constructor() {
    /** The last `id:` seen: sent back as Last-Event-ID on a reconnect. */
    this.lastEventId = '';
    /** @type {number | null} the last `retry:` in milliseconds, if any. */
    this.retry = null;
  }

  /**
   * Parses `text`, the next piece of the stream.
   * @param {string} text
   * @returns {import('./switchboard.js').SseEvent[]}
   */
  push(text) {
    if (text.length === 0) return [];
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.#skipLineFeed && text.startsWith('\n')) text = text.slice(1);
    this.#skipLineFeed = false;
    /** @type {import('./switchboard.js').SseEvent[]} */
    const events = [];
    const lineEnd = /[\r\n]/g;
    let start = 0;
    for (let found = lineEnd.exec(text); found; found = lineEnd.exec(text)) {
      let end = found.index;
      let line = text.slice(start, end);
      if (this.#partial.length > 0) {
        this.#partial.push(line);
        line = this.#partial.join('');
        this.#partial = [];
      }
      if (text[end] === '\r') {
        if (end + 1 === text.length) this.#skipLineFeed = true;
        else if (text[end + 1] === '\n') end++;
      }
      start = end + 1;
      lineEnd.lastIndex = start;
      const event = this.#line(line);
      if (event) events.push(event);
    }
    if (start < text.length) this.#partial.push(text.slice(start));
    return events;
  }

  /**
   * One line: a field, a comment, or the blank line that ends an event.
   * @param {string} line
   * @returns {import('./switchboard.js').SseEvent | null}
   */
  #line(line) {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }

  /** @returns {import('./switchboard.js').SseEvent | null} */
  #dispatch() {
    const data = this.#data;
    const event = this.#event || 'message';
    this.#data = [];
    this.#event = '';
    if (data.length === 0) return null;
    return { event, data: data.join('\n'), id: this.lastEventId };
  }
}

/**
 * The origin to talk to: `baseUrl` without a trailing slash, or the page's
 * own origin in a browser.
 * @param {string | undefined} baseUrl
 * @returns {string}
 */
function origin(baseUrl) {
  const location = /** @type {any} */ (globalThis).location;
  const base = baseUrl ?? location?.origin;
  if (!base) throw new TypeError('baseUrl is required outside a browser page');
  return String(base).replace(/\/+$/, '');
}

/**
 * Sends a JSON request; the parsed answer, or a SwitchboardError.
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {string} method
 * @param {string | null} token
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function requestJson(fetchFn, url, method, token, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetchFn(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  if (!res.ok) throw new SwitchboardError(res.status, json, retryAfter(res));
  return json;
}

/**
 * A 429's Retry-After, in seconds.
 * @param {Response} res
 * @returns {number | null}
 */
function retryAfter(res) {
  const value = Number(res.headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? value : null;
}

/**
 * Waits `ms`, or less if `signal` aborts first.
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * An error's message, for the `{"error"}` answer.
 * @param {unknown} error
 * @returns {string}
 */
function messageOf(error) {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : JSON.stringify(error) ?? String(error);
}

/**
 * Joins a session with a join code (`POST /api/plugins/join`), for a
 * plugin token with plugin rights only.
 * @param {string} code
 * @param {import('./switchboard.js').PluginOptions} [options]
 * @returns {Promise<import('./switchboard.js').Plugin>}
 */
export async function join(code, options = {}) {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = origin(options.baseUrl);
  const joined = await requestJson(fetchFn, `${base}/api/plugins/join`, 'POST', null, {
    code: String(code).trim(),
  });
  return new Plugin({ ...options, baseUrl: base, sessionId: joined.sessionId, pluginToken: joined.pluginToken });
}

/**
 * One plugin of one session: registers tools, answers relayed calls,
 * follows tool changes, over one event stream.
 */
export class Plugin {
  /** @type {{fetch: typeof fetch, initialDelayMs: number, maxDelayMs: number, idleTimeoutMs: number, pluginType: string, pluginVersion: string, now: () => number}} */
  #options;
  /** @type {import('./switchboard.js').CallHandler | null} */
  #callHandler = null;
  /** @type {Array<(update: import('./switchboard.js').AvailabilityUpdate) => void>} */
  #toolsHandlers = [];
  /** @type {Array<(status: import('./switchboard.js').Status, error?: Error) => void>} */
  #statusHandlers = [];
  /** @type {Array<(error: Error) => void>} */
  #errorHandlers = [];
  /** @type {Map<string, AbortController>} calls seen, by id (a running one's controller aborts it). */
  #calls = new Map();
  #stopped = new AbortController();
  /** @type {AbortController | null} */
  #streamAbort = null;
  /** @type {Promise<void> | null} settles when the stream first opens or first fails. */
  #firstOpen = null;
  #markOpen = () => {};

  /** @param {import('./switchboard.js').PluginInit} init */
  constructor(init) {
    if (!init || !init.sessionId || !init.pluginToken) {
      throw new TypeError('sessionId and pluginToken are required');
    }
    /** @readonly */
    this.sessionId = String(init.sessionId);
    /** @readonly */
    this.pluginToken = String(init.pluginToken);
    /** @readonly */
    this.baseUrl = origin(init.baseUrl);
    /** @type {import('./switchboard.js').Status} */
    this.status = 'idle';
    /** @type {string} the last event id received; sent as Last-Event-ID. */
    this.lastEventId = '';
    this.#options = {
      fetch: init.fetch ?? globalThis.fetch.bind(globalThis),
      initialDelayMs: init.backoff?.initialMs ?? 500,
      maxDelayMs: init.backoff?.maxMs ?? 10_000,
      idleTimeoutMs: init.idleTimeoutMs ?? 45_000,
      pluginType: init.pluginType ?? 'custom',
      pluginVersion: init.pluginVersion ?? '1.0.0',
      now: init.now ?? Date.now,
    };
  }

  /** The URL of one of this session's routes. @param {string} path */
  #url(path) {
    return `${this.baseUrl}/api/sessions/${encodeURIComponent(this.sessionId)}/${path}`;
  }

  /**
   * Registers the plugin's tools (replacing what it registered before):
   * a list of tool definitions, or a whole registration body.
   * @param {import('./switchboard.js').ToolDefinition[] | import('./switchboard.js').Registration} tools
   * @returns {Promise<import('./switchboard.js').ChangeAnswer>}
   */
  async registerTools(tools) {
    const body = Array.isArray(tools)
      ? { pluginType: this.#options.pluginType, pluginVersion: this.#options.pluginVersion, availableTools: tools }
      : tools;
    if (this.#firstOpen) await this.#firstOpen;
    return requestJson(this.#options.fetch, this.#url('register-tools'), 'POST', this.pluginToken, body);
  }

  /**
   * Adds, removes and changes tools (`PATCH …/tools`).
   * @param {import('./switchboard.js').ToolPatch} patch
   * @returns {Promise<import('./switchboard.js').ChangeAnswer>}
   */
  updateTools(patch) {
    return requestJson(this.#options.fetch, this.#url('tools'), 'PATCH', this.pluginToken, patch);
  }

  /**
   * Answers the agent's calls of this plugin's tools with `handler`
   * (one handler; a second call replaces it) and starts listening.
   * @param {import('./switchboard.js').CallHandler} handler
   * @returns {this}
   */
  onCall(handler) {
    this.#callHandler = handler;
    this.#listen();
    return this;
  }

  /**
   * Calls `handler` with each `tool-availability-update` of the session
   * (any registration or patch of its plugin tools), and starts listening.
   * @param {(update: import('./switchboard.js').AvailabilityUpdate) => void} handler
   * @returns {this}
   */
  onToolsChanged(handler) {
    this.#toolsHandlers.push(handler);
    this.#listen();
    return this;
  }

  /**
   * Calls `handler` whenever the stream's status changes.
   * @param {(status: import('./switchboard.js').Status, error?: Error) => void} handler
   * @returns {this}
   */
  onStatus(handler) {
    this.#statusHandlers.push(handler);
    return this;
  }

  /**
   * Calls `handler` with problems that do not stop the plugin: a dropped
   * stream, an answer the server refused (409: answered or too late).
   * @param {(error: Error) => void} handler
   * @returns {this}
   */
  onError(handler) {
    this.#errorHandlers.push(handler);
    return this;
  }

  /** Stops listening; running calls' signals abort. Idempotent. */
  close() {
    if (this.#stopped.signal.aborted) return;
    this.#stopped.abort();
    this.#streamAbort?.abort();
    for (const running of this.#calls.values()) running.abort();
    this.#setStatus('closed');
  }

  /** @param {import('./switchboard.js').Status} status @param {Error} [error] */
  #setStatus(status, error) {
    if (this.status === status && !error) return;
    this.status = status;
    for (const h of this.#statusHandlers) h(status, error);
  }

  /** @param {Error} error */
  #report(error) {
    for (const h of this.#errorHandlers) h(error);
  }

  /** Starts the stream once. */
  #listen() {
    if (this.#firstOpen || this.#stopped.signal.aborted) return;
    this.#firstOpen = new Promise((resolve) => {
      this.#markOpen = resolve;
    });
    void this.#run();
  }

  /** Keeps the stream open until closed, reconnecting with back-off. */
  async #run() {
    const { initialDelayMs, maxDelayMs } = this.#options;
    let delay = initialDelayMs;
    while (!this.#stopped.signal.aborted) {
      this.#setStatus(this.status === 'idle' ? 'connecting' : 'reconnecting');
      /** @type {number | null} */
      let asked = null;
      try {
        if (await this.#stream()) delay = initialDelayMs;
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        if (this.#stopped.signal.aborted) break;
        if (error instanceof SwitchboardError && FATAL_STATUSES.includes(error.status)) {
          this.#markOpen();
          this.#stopped.abort();
          this.#setStatus('closed', error);
          return;
        }
        if (error instanceof SwitchboardError && error.retryAfter) asked = error.retryAfter * 1000;
        this.#report(error);
      }
      if (this.#stopped.signal.aborted) break;
      this.#markOpen();
      this.#setStatus('reconnecting');
      await sleep(asked ?? delay, this.#stopped.signal);
      delay = Math.min(delay * 2, maxDelayMs);
    }
  }

  /**
   * One connection: opens the stream and reads it until it ends; whether
   * it opened.
   * @returns {Promise<boolean>}
   */
  async #stream() {
    const abort = new AbortController();
    this.#streamAbort = abort;
    /** @type {Record<string, string>} */
    const headers = { Accept: 'text/event-stream', Authorization: `Bearer ${this.pluginToken}` };
    if (this.lastEventId) headers['Last-Event-ID'] = this.lastEventId;
    let idle = setTimeout(() => abort.abort(), this.#options.idleTimeoutMs);
    try {
      const res = await this.#options.fetch(this.#url('plugin-events'), {
        headers,
        signal: abort.signal,
        cache: 'no-store',
      });
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        let body = text;
        try {
          body = JSON.parse(text);
        } catch {}
        throw new SwitchboardError(res.status, body, retryAfter(res));
      }
      if (!res.body) throw new Error('the event stream has no body');
      this.#setStatus('live');
      this.#markOpen();
      const parser = new SseParser();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(), this.#options.idleTimeoutMs);
        for (const event of parser.push(decoder.decode(value, { stream: true }))) {
          if (event.id) this.lastEventId = event.id;
          this.#dispatch(event);
        }
      }
      return true;
    } catch (e) {
      if (abort.signal.aborted && !this.#stopped.signal.aborted && this.status === 'live') {
        this.#report(new Error('the event stream went quiet; reconnecting'));
        return true;
      }
      throw e;
    } finally {
      clearTimeout(idle);
      abort.abort();
    }
  }

  /** @param {import('./switchboard.js').SseEvent} event */
  #dispatch(event) {
    // A registration's update carries every new tool's schema (up to
    // 1 MB): read only if someone listens for it.
    if (event.event === TOOLS_EVENT && this.#toolsHandlers.length === 0) return;
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      this.#report(new Error(`an unreadable ${event.event} event`));
      return;
    }
    if (event.event === CALL_EVENT) this.#handleCall(data);
    else if (event.event === TOOLS_EVENT) for (const h of this.#toolsHandlers) h(data);
  }

  /**
   * Runs one relayed call, unless its id was seen or its deadline passed.
   * @param {any} request
   */
  #handleCall(request) {
    const handler = this.#callHandler;
    const callId = String(request?.callId ?? '');
    if (!handler || !callId || this.#calls.has(callId)) return;
    const now = this.#options.now();
    const left =
      typeof request.timeoutMs === 'number'
        ? request.timeoutMs
        : request.deadline
          ? Date.parse(request.deadline) - now
          : Infinity;
    if (!(left > 0)) return;
    const running = new AbortController();
    this.#remember(callId, running);
    const timer = Number.isFinite(left) ? setTimeout(() => running.abort(), left) : null;
    /** @type {import('./switchboard.js').ToolCall} */
    const call = {
      callId,
      name: String(request.name),
      arguments: request.arguments ?? {},
      deadline: new Date(Number.isFinite(left) ? now + left : 8.64e15),
      timeoutMs: left,
      signal: running.signal,
    };
    Promise.resolve()
      .then(() => handler(call))
      .then(
        (result) => ({ result: result ?? {} }),
        (error) => ({ error: messageOf(error) }),
      )
      .then((answer) => this.#deliver(callId, answer, call.deadline.getTime()))
      .finally(() => {
        if (timer) clearTimeout(timer);
      });
  }

  /**
   * Remembers call `callId` (forgetting the oldest past the bound).
   * @param {string} callId
   * @param {AbortController} running
   */
  #remember(callId, running) {
    this.#calls.set(callId, running);
    if (this.#calls.size > REMEMBERED_CALLS) {
      const oldest = this.#calls.keys().next().value;
      if (oldest !== undefined) this.#calls.delete(oldest);
    }
  }

  /**
   * POSTs the answer to `…/tool-results` with the call's id in the body
   * (one URL per session, so a browser on another origin asks its CORS
   * preflight once, not once per call), retrying a network failure or a
   * 5xx until the deadline; a refusal (409: answered or too late, 404) is
   * reported, not retried.
   * @param {string} callId
   * @param {{result: unknown} | {error: string}} answer
   * @param {number} deadline
   */
  async #deliver(callId, answer, deadline) {
    const url = this.#url('tool-results');
    const body = { callId, ...answer };
    let delay = this.#options.initialDelayMs;
    while (!this.#stopped.signal.aborted) {
      try {
        await requestJson(this.#options.fetch, url, 'POST', this.pluginToken, body);
        return;
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        const retry = !(error instanceof SwitchboardError) || error.status >= 500;
        if (!retry || this.#options.now() + delay > deadline) {
          this.#report(error);
          return;
        }
      }
      await sleep(delay, this.#stopped.signal);
      delay = Math.min(delay * 2, this.#options.maxDelayMs);
    }
  }
}

/**
 * The exports as the hand-written types declare them: `tsc -p clients/js`
 * fails here if the module and switchboard.d.ts part ways.
 * @type {{
 *   join: typeof import('./switchboard.js').join,
 *   Plugin: typeof import('./switchboard.js').Plugin,
 *   SseParser: typeof import('./switchboard.js').SseParser,
 *   SwitchboardError: typeof import('./switchboard.js').SwitchboardError,
 *   VERSION: typeof import('./switchboard.js').VERSION,
 * }}
 */
const declared = { join, Plugin, SseParser, SwitchboardError, VERSION };
void declared;
