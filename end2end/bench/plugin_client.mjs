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
// Prints medians, p95 and maximum. Run with `make bench-plugin-client`;
// SWITCHBOARD_BIN and SITE_ROOT choose the build, ROUNDS (300) the number.
import { Agent, createServer, request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PASSWORDS, start } from './server.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 300);
const WARM_UP = 30;
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
const host = createServer((_, res) => {
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
  agent.destroy();
} finally {
  nodePlugin?.close();
  host.closeAllConnections();
  host.close();
  rmSync(dir, { recursive: true, force: true });
  await stop();
}
