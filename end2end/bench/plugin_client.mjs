// Benchmark: a call relayed to a plugin on another origin, through the
// JavaScript client Switchboard serves (issue #36's target: median round
// trip ≤ 3 ms).
//
// The release server allows a second origin (API_ORIGINS). Two plugins use
// the module exactly as Switchboard serves it (`/clients/switchboard.js`),
// each in its own session, joined with a join code, registering `echo`
// and answering each relayed call with its arguments:
//   - a page on that origin in Chromium (served here by node:http), which
//     imports the module from the server: the browser's CORS rules apply
//     (preflights, allowed headers);
//   - a Node process importing the same bytes, every request sent with
//     that origin's `Origin` header (the server answers it as it answers
//     the page; Node does not enforce CORS), for the client's own cost
//     without a browser's.
// This script plays the agent: it posts `echo` to `POST …/tool-calls` with
// the session token (node:http on one kept-alive connection) and times each call from just before the request
// until its answer (the plugin's result) is read — the whole relay: the
// server offers the call on the plugin's stream, the client runs the
// handler and posts the result, the server answers the agent. The two
// plugins' calls are interleaved, so both see the same machine.
//
// Beside them, in the same run, the floor the page cannot go under: the
// page's own `fetch` of a small POST to Switchboard (a 404 answer, its
// preflight cached) — two of these (the agent's call and the plugin's
// answer) and one event make a relayed call.
//
// Then issue #40's registration as such a plugin makes it: each plugin
// joins a new session, its event stream open (as `onCall` opens it), and
// registers 1,000 tools with realistic schemas (the shape of
// `benches/plugins/registration.rs`: about 0.95 KB a tool, each schema new
// to the server), timed from `registerTools` until its answer is read. The
// update event the registration sends back on the plugin's own stream
// (about 0.9 MB) is read by the client on the same thread, as in a page.
// Beside each registration, its floor: the same body serialised and
// posted to a node:http server that only reads it.
//
// Prints medians, p95 and maximum. Run with `make bench-plugin-client`;
// SWITCHBOARD_BIN and SITE_ROOT choose the build, ROUNDS (300) the number
// of calls, REGISTRATIONS (20) of registrations.
import { Agent, createServer, request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PASSWORDS, start } from './server.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 300);
const WARM_UP = 30;
const REGISTRATIONS = Number(process.env.REGISTRATIONS ?? 20);

/**
 * 1,000 tools like a data plugin's (`realistic_tool` in
 * benches/plugins/registration.rs); `round` makes every schema new to the
 * server, which shares what it checked between sessions. Its source is
 * also the page's, so the page and Node build their bodies alike.
 */
function realisticTools(round) {
  return Array.from({ length: 1000 }, (_, i) => ({
    name: `createGraph_${i}`,
    description: `Creates graph ${i} from a data context's attributes; returns the new component's id.`,
    parameters: {
      type: 'object',
      properties: {
        dataContext: { type: 'string', description: 'The data context', maxLength: 128 },
        xAttribute: { type: 'string', description: 'x axis attribute' },
        yAttribute: { type: 'string', description: 'y axis attribute' },
        graphType: { type: 'string', enum: ['scatter', 'bar', 'line', 'dot'] },
        dimensions: {
          type: 'object',
          properties: {
            width: { type: 'integer', minimum: 100, maximum: 2000 + i + 1000 * round },
            height: { type: 'integer', minimum: 100, maximum: 2000 },
          },
        },
        filters: {
          type: 'array',
          maxItems: 10,
          items: {
            type: 'object',
            properties: {
              attribute: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_ ]*$' },
              op: { type: 'string', enum: ['=', '<', '>', 'contains'] },
              value: { type: ['string', 'number'] },
            },
            required: ['attribute', 'op'],
          },
        },
      },
      required: ['dataContext'],
      additionalProperties: false,
    },
  }));
}

/**
 * The same body serialised and posted to `url`, a node:http server on the
 * page's origin that reads it and answers: what sending it costs this
 * client before Switchboard does anything (milliseconds until the answer
 * was read). The page's source too.
 */
async function uploadFloor(url, tools) {
  const started = performance.now();
  const body = JSON.stringify({ pluginType: 'custom', pluginVersion: '1.0.0', availableTools: tools });
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  await res.json();
  return performance.now() - started;
}

/**
 * Joins `code`'s session with `client`, opens its stream and registers
 * `echo` (which waits for the stream), then times one registration of
 * `tools`: the milliseconds until the answer was read. Run in the page and
 * in Node alike (its source is the page's too).
 */
async function timedRegistration(client, code, baseUrl, echo, tools, fetchFn) {
  const plugin = await client.join(code, fetchFn ? { baseUrl, fetch: fetchFn } : { baseUrl });
  try {
    plugin.onCall(() => ({}));
    await plugin.registerTools([echo]);
    const started = performance.now();
    const answer = await plugin.registerTools(tools);
    const ms = performance.now() - started;
    if (answer.registeredTools.length !== tools.length) throw new Error(`registered ${answer.registeredTools.length}`);
    return ms;
  } finally {
    plugin.close();
  }
}
const PAGE_PORT = Number(process.env.PAGE_PORT ?? 3197);
const PAGE_ORIGIN = `http://127.0.0.1:${PAGE_PORT}`;
process.env.API_ORIGINS = PAGE_ORIGIN;
// As the Rust benches do (benches/common): the per-session write window
// and call cap would stop one session's hundreds of calls a minute.
process.env.SESSION_WRITES_PER_MINUTE = '1000000';
process.env.SESSION_CALLS_MAX = '10000000';

/** The tool both plugins register. */
const ECHO = {
  name: 'echo',
  description: 'Answers with its arguments.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
};

/** The plugin page: nothing but the client, a join and the echo tool. */
function page(server) {
  return `<!doctype html><meta charset="utf-8"><title>bench plugin</title><script type="module">
const { join } = await import(${JSON.stringify(`${server}/clients/switchboard.js`)});
window.joinWith = async (code, tool) => {
  const plugin = await join(code, { baseUrl: ${JSON.stringify(server)} });
  plugin.onCall((call) => ({ echoed: call.arguments }));
  return (await plugin.registerTools([tool])).registeredTools;
};
window.register1000 = async (code, echo, round) => {
  const client = await import(${JSON.stringify(`${server}/clients/switchboard.js`)});
  return (${timedRegistration.toString()})(client, code, ${JSON.stringify(server)}, echo, (${realisticTools.toString()})(round));
};
window.uploadFloor = async (round) => (${uploadFloor.toString()})(${JSON.stringify(`${PAGE_ORIGIN}/sink`)}, (${realisticTools.toString()})(round));
window.ready = true;
</script>`;
}

/** The median, p95 and maximum of `ms`, as a line. */
function summary(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.round((sorted.length - 1) * p))];
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms, max ${at(1).toFixed(2)} ms (${sorted.length})`;
}

const { base: BASE, browser, stop } = await start('plugin-client', 3196);
const host = createServer((req, res) => {
  if (req.method === 'POST') {
    // The floor of a registration: a server that only reads the body.
    let bytes = 0;
    req.on('data', (chunk) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes })));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(BASE));
});
await new Promise((resolve) => host.listen(PAGE_PORT, '127.0.0.1', resolve));
const dir = mkdtempSync(joinPath(tmpdir(), 'switchboard-client-'));
let nodePlugin;

try {
  const context = await browser.newContext();
  const api = context.request;
  const login = await api.post(`${BASE}/rpc/login`, {
    form: { email: 'admin@example.com', password: PASSWORDS.admin },
    headers: { Origin: BASE },
    maxRedirects: 0,
  });
  if (login.status() >= 400) throw new Error(`login: ${login.status()}`);
  const created = await api.post(`${BASE}/rpc/create_api_key`, {
    form: { name: 'plugin client bench', 'scopes[0]': 'sessions' },
    headers: { Origin: BASE },
  });
  if (!created.ok()) throw new Error(`create_api_key: ${created.status()} ${await created.text()}`);
  const key = (await created.json()).secret;

  /** A new session and a join code for it. */
  const session = async () => {
    const opened = await fetch(`${BASE}/api/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ workflowId: 'idv' }),
    });
    if (opened.status !== 201) throw new Error(`open: ${opened.status}`);
    const s = await opened.json();
    const made = await fetch(`${BASE}/api/sessions/${s.sessionId}/join-codes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.sessionToken}` },
    });
    if (made.status !== 201) throw new Error(`join code: ${made.status}`);
    return { ...s, code: (await made.json()).code };
  };

  // The page's plugin.
  const inPage = await session();
  const plugin = await context.newPage();
  await plugin.goto(PAGE_ORIGIN);
  await plugin.waitForFunction(() => window.ready === true);
  const registered = await plugin.evaluate(([c, t]) => window.joinWith(c, t), [inPage.code, ECHO]);
  if (!registered.includes('echo')) throw new Error(`register in the page: ${registered}`);

  // The Node plugin: the served bytes, every request from the page's origin.
  const served = await fetch(`${BASE}/clients/switchboard.js`, { headers: { Origin: PAGE_ORIGIN } });
  if (served.headers.get('access-control-allow-origin') !== PAGE_ORIGIN) {
    throw new Error('the server did not answer the other origin');
  }
  const file = joinPath(dir, 'switchboard.js');
  writeFileSync(file, await served.text());
  const client = await import(pathToFileURL(file).href);
  const fromPage = (url, init = {}) =>
    fetch(url, { ...init, headers: { ...(init.headers ?? {}), Origin: PAGE_ORIGIN } });
  const inNode = await session();
  nodePlugin = await client.join(inNode.code, { baseUrl: BASE, fetch: fromPage });
  nodePlugin.onCall((call) => ({ echoed: call.arguments }));
  const fromNode = await nodePlugin.registerTools([ECHO]);
  if (!fromNode.registeredTools.includes('echo')) throw new Error('register in Node');

  // The agent: one kept-alive connection, as a backend's HTTP client
  // keeps one (Node's `fetch` would add its own cost to every call).
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (path, token, body) =>
    new Promise((resolve, reject) => {
      const data = Buffer.from(JSON.stringify(body));
      const req = request(
        `${BASE}${path}`,
        {
          method: 'POST',
          agent,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': data.length },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString()) }));
        },
      );
      req.on('error', reject);
      req.end(data);
    });

  /** One relayed call in session `s`, timed by the agent. */
  const round = async (s, n) => {
    const started = performance.now();
    const { status, body: answer } = await post(`/api/sessions/${s.sessionId}/tool-calls`, s.sessionToken, {
      name: 'echo',
      arguments: { n },
    });
    const ms = performance.now() - started;
    if (status !== 200 || answer.allowed === false || answer.result?.echoed?.n !== n) {
      throw new Error(`call ${n}: ${status} ${JSON.stringify(answer)}`);
    }
    return ms;
  };
  const [page_, node_] = [[], []];
  for (let i = 0; i < ROUNDS + WARM_UP; i++) {
    const a = await round(inPage, i);
    const b = await round(inNode, i);
    if (i >= WARM_UP) {
      page_.push(a);
      node_.push(b);
    }
  }

  // The floor: the page's own POST to Switchboard, preflight cached.
  const floor = await plugin.evaluate(
    async ({ base, id, token, rounds }) => {
      const url = `${base}/api/sessions/${id}/tool-results`;
      const times = [];
      for (let i = 0; i < rounds; i++) {
        const t0 = performance.now();
        const r = await fetch(url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: '{"callId":"999999999","result":1}',
        });
        await r.text();
        times.push(performance.now() - t0);
      }
      return times.slice(10);
    },
    { base: BASE, id: inPage.sessionId, token: inPage.sessionToken, rounds: ROUNDS + 10 },
  );

  console.log(`relayed call, agent round trip (${ROUNDS} each, interleaved):`);
  console.log(`  plugin page on ${PAGE_ORIGIN} in Chromium: ${summary(page_)}`);
  console.log(`  plugin in Node, same module, Origin ${PAGE_ORIGIN}: ${summary(node_)}`);
  console.log(`  floor: the page's own small POST to Switchboard: ${summary(floor)}`);

  // Registrations: a new session each (a session takes 10 a minute), the
  // page's and Node's interleaved, after two of each not counted.
  // Beside each, the floor: the same body posted to the page's host.
  const [pageReg, nodeReg, pageFloor, nodeFloor] = [[], [], [], []];
  for (let i = 0; i < REGISTRATIONS + 2; i++) {
    const forPage = await session();
    const a = await plugin.evaluate(([c, e, r]) => window.register1000(c, e, r), [forPage.code, ECHO, 2 * i]);
    const forNode = await session();
    const b = await timedRegistration(client, forNode.code, BASE, ECHO, realisticTools(2 * i + 1), fromPage);
    const c = await plugin.evaluate((r) => window.uploadFloor(r), 2 * i);
    const d = await uploadFloor(`${PAGE_ORIGIN}/sink`, realisticTools(2 * i + 1));
    if (i >= 2) {
      pageReg.push(a);
      nodeReg.push(b);
      pageFloor.push(c);
      nodeFloor.push(d);
    }
  }
  const kib = Math.round(JSON.stringify({ availableTools: realisticTools(0) }).length / 1024);
  console.log(`registering 1,000 tools (${kib} KiB of realistic schemas) through the client, its stream open, round trip:`);
  console.log(`  plugin page in Chromium: ${summary(pageReg)}`);
  console.log(`  plugin in Node: ${summary(nodeReg)}`);
  console.log(`  floor: the page's own POST of the same body to node:http: ${summary(pageFloor)}`);
  console.log(`  floor: Node's own POST of the same body to node:http: ${summary(nodeFloor)}`);
  agent.destroy();
} finally {
  nodePlugin?.close();
  host.closeAllConnections();
  host.close();
  rmSync(dir, { recursive: true, force: true });
  await stop();
}
