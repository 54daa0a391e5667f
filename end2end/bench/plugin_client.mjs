// Browser benchmark: a call relayed to a plugin on another origin, through
// the JavaScript client Switchboard serves (issue #36's target: median
// round trip ≤ 3 ms).
//
// The release server allows a second origin (API_ORIGINS). A page on that
// origin, served here by node:http, imports `/clients/switchboard.js`
// from the server, joins a session with a join code and registers `echo`;
// its handler answers each relayed call with its arguments. This script
// plays the agent: it posts `echo` to `POST …/tool-calls` with the session
// token and times each call from just before the request until its answer
// (the plugin's result) is read — the whole relay: the server offers the
// call on the plugin's stream, the client runs the handler and posts the
// result cross-origin, the server answers the agent.
//
// Prints the median, p95 and maximum. Run with `make bench-plugin-client`;
// SWITCHBOARD_BIN and SITE_ROOT choose the build, ROUNDS (300) the number.
import { createServer } from 'node:http';
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

/** The plugin page: nothing but the client, a join and an echo tool. */
function page(server) {
  return `<!doctype html><meta charset="utf-8"><title>bench plugin</title><script type="module">
const { join } = await import(${JSON.stringify(`${server}/clients/switchboard.js`)});
window.joinWith = async (code) => {
  const plugin = await join(code, { baseUrl: ${JSON.stringify(server)} });
  plugin.onCall((call) => ({ echoed: call.arguments }));
  const answer = await plugin.registerTools([{
    name: 'echo',
    description: 'Answers with its arguments.',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  }]);
  return answer.registeredTools;
};
window.ready = true;
</script>`;
}

/** The median, p95 and maximum of `ms`, as a line. */
function summary(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.round((sorted.length - 1) * p))];
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms, max ${at(1).toFixed(2)} ms (${sorted.length} calls)`;
}

const { base: BASE, browser, stop } = await start('plugin-client', 3196);
const host = createServer((_, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(BASE));
});
await new Promise((resolve) => host.listen(PAGE_PORT, '127.0.0.1', resolve));

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
  const { code } = await made.json();

  const plugin = await context.newPage();
  await plugin.goto(PAGE_ORIGIN);
  await plugin.waitForFunction(() => window.ready === true);
  const registered = await plugin.evaluate((c) => window.joinWith(c), code);
  if (!registered.includes('echo')) throw new Error(`register: ${registered}`);

  const round = async (n) => {
    const started = performance.now();
    const res = await fetch(`${BASE}/api/sessions/${s.sessionId}/tool-calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.sessionToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'echo', arguments: { n } }),
    });
    const answer = await res.json();
    const ms = performance.now() - started;
    if (!res.ok || answer.allowed === false || answer.result?.echoed?.n !== n) {
      throw new Error(`call ${n}: ${res.status} ${JSON.stringify(answer)}`);
    }
    return ms;
  };
  const times = [];
  for (let i = 0; i < ROUNDS + WARM_UP; i++) {
    const ms = await round(i);
    if (i >= WARM_UP) times.push(ms);
  }
  console.log(`relayed call through the client on ${PAGE_ORIGIN}, agent round trip: ${summary(times)}`);
} finally {
  host.closeAllConnections();
  host.close();
  await stop();
}
