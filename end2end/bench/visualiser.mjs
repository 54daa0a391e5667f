// Browser benchmark: how long after an agent's tool call a watcher sees it,
// in real Chromium against the real (release) server (issue #15's
// no-regression target: p95 ≤ 50 ms).
//
// Signs in as the admin, makes an API key, opens an ID&V session and
// watches /sessions/{id}. Then, from inside the page (so one clock times
// both ends), sends tool calls as the session's agent would
// (`fetch` with the session token) and times from just before the request
// until a MutationObserver sees the change in the DOM:
//   - a timeline entry: `perform_idv_check` until `li[data-call=ID]` is drawn;
//   - a workflow switch: `start_workflow` to Banking Master and back, until
//     the workflow badge reads the new name.
// Prints the median, p95 and maximum of each, beside the page's own HTTP
// round trip for the same calls (from just before the request until its
// answer was read) and the ratio of the two (issue #40: within 1.5×), and
// beside the page's plainest round trip, `GET /healthz` (no session, no
// database write), timed the same way in between, in case "the page's own
// round trip" means that. Run with `make bench-visualiser`;
// SWITCHBOARD_BIN and SITE_ROOT choose the build, ROUNDS (200) the number
// of each.
import { PASSWORDS, start } from './server.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const WARM_UP = 20;
const { base: BASE, browser, stop } = await start('visualiser', 3192);

/** The median, p95 and maximum of `ms`, as a line. */
function summary(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.round((sorted.length - 1) * p))];
  return `median ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${at(1).toFixed(1)} ms (${sorted.length} calls)`;
}

/** The p-th quantile of `ms`. */
function quantile(ms, p) {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.round((sorted.length - 1) * p))];
}

/** Prints what was drawn, the same calls' HTTP round trip, and the ratio
 * of what was drawn to it and to a plain `GET /healthz`'s round trip. */
function report(what, drawn, answered, plain) {
  console.log(`${what}: ${summary(drawn)}`);
  console.log(`  the page's own HTTP round trip for the same calls: ${summary(answered)}`);
  const ratio = (base, p) => (quantile(drawn, p) / quantile(base, p)).toFixed(2);
  console.log(`  drawn / round trip: median ${ratio(answered, 0.5)}×, p95 ${ratio(answered, 0.95)}× (target ≤ 1.5×)`);
  console.log(`  the page's GET /healthz in between: ${summary(plain)}`);
  console.log(`  drawn / GET /healthz: median ${ratio(plain, 0.5)}×, p95 ${ratio(plain, 0.95)}×`);
}

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
    form: { name: 'visualiser bench', 'scopes[0]': 'sessions' },
    headers: { Origin: BASE },
  });
  if (!created.ok()) throw new Error(`create_api_key: ${created.status()} ${await created.text()}`);
  const key = (await created.json()).secret;
  const opened = await api.post(`${BASE}/api/sessions`, {
    headers: { Authorization: `Bearer ${key}` },
    data: { workflowId: 'idv' },
  });
  if (opened.status() !== 201) throw new Error(`open: ${opened.status()}`);
  const s = await opened.json();

  const page = await context.newPage();
  await page.goto(`${BASE}/sessions/${s.sessionId}`);
  await page.waitForSelector('body[data-hydrated="true"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="connection"]')?.textContent === 'live');

  // The page notes when each call's timeline entry and each badge text
  // first appear (from the mutation records, so a long timeline costs the
  // page nothing extra), whether the event beats the call's answer or not.
  await page.evaluate(() => {
    window.drawnAt = new Map();
    const badge = () => document.querySelector('[data-testid="workflow-badge"]')?.textContent;
    window.badgeNow = { text: badge(), at: 0 };
    new MutationObserver((records) => {
      const now = performance.now();
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (!(n instanceof Element)) continue;
          const items = n.matches('li[data-call]') ? [n] : n.querySelectorAll('li[data-call]');
          for (const li of items) {
            const id = li.getAttribute('data-call');
            if (!window.drawnAt.has(id)) window.drawnAt.set(id, now);
          }
        }
      }
      const text = badge();
      if (text !== window.badgeNow.text) window.badgeNow = { text, at: now };
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });

  // One round in the page: the call sent as the agent would, then the
  // time from just before it until its change was drawn.
  const round = (call) =>
    page.evaluate(async ({ id, token, name, args, badge }) => {
      const started = performance.now();
      const res = await fetch(`/api/sessions/${id}/tool-calls`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, arguments: args }),
      });
      const answer = await res.json();
      const answered = performance.now() - started;
      if (!res.ok || answer.allowed === false) throw new Error(`${name}: ${JSON.stringify(answer)}`);
      const drawn = () =>
        badge ? (window.badgeNow.text === badge ? window.badgeNow.at : null) : (window.drawnAt.get(String(answer.callId)) ?? null);
      for (let waited = 0; drawn() === null; waited++) {
        if (waited > 500) throw new Error(`${name}: not drawn within 5 s`);
        await new Promise((r) => setTimeout(r, 10));
      }
      // The plainest round trip the page can make, timed the same way.
      const plainStarted = performance.now();
      const health = await fetch('/healthz');
      await health.json();
      return { drawn: drawn() - started, answered, plain: performance.now() - plainStarted };
    }, { id: s.sessionId, token: s.sessionToken, ...call });

  const timeline = [];
  const timelineRtt = [];
  const timelinePlain = [];
  for (let i = 0; i < ROUNDS + WARM_UP; i++) {
    const ms = await round({
      name: 'perform_idv_check',
      args: { accountNumber: '12345678', sortCode: '12-34-56', dateOfBirth: '1985-04-12' },
      badge: null,
    });
    if (i >= WARM_UP) {
      timeline.push(ms.drawn);
      timelineRtt.push(ms.answered);
      timelinePlain.push(ms.plain);
    }
  }
  report('tool call → timeline entry drawn', timeline, timelineRtt, timelinePlain);

  const switches = [];
  const switchRtt = [];
  const switchPlain = [];
  for (let i = 0; i < ROUNDS + WARM_UP; i++) {
    const [workflowId, badge] = i % 2 === 0 ? ['banking-master', 'Banking Master'] : ['idv', 'ID&V'];
    const ms = await round({ name: 'start_workflow', args: { workflowId }, badge });
    if (i >= WARM_UP) {
      switches.push(ms.drawn);
      switchRtt.push(ms.answered);
      switchPlain.push(ms.plain);
    }
  }
  report('tool call → workflow switch drawn', switches, switchRtt, switchPlain);
} finally {
  await stop();
}
