// Browser benchmark: click latency of the bindings matrix at 30 workflows x
// 100 tools, in real Chromium against the real (release) server.
//
// Starts the server on a fresh SQLite file, signs in as the admin, grows the
// catalogue to 100 tools and 30 workflows through the app's own server
// functions, opens /bindings and toggles 60 distinct cells. For each click it
// reports two times from the page's own clock:
//   update - click until the DOM shows it (cell marked changed, "+N / −M"),
//   frame  - click until the next frame after that update has run.
// Run with `make bench-matrix`; SWITCHBOARD_BIN and SITE_ROOT choose the build.
import { PASSWORDS, start } from './server.mjs';

const { base: BASE, browser, stop } = await start('matrix', 3190);
const ADMIN = ['admin@example.com', PASSWORDS.admin];
const TOOLS = 100;
const WORKFLOWS = 30;
const CLICKS = 60;

const percentile = (sorted, p) => sorted[Math.round((sorted.length - 1) * p)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${BASE}/login`);
  await page.waitForSelector('body[data-hydrated="true"]');
  await page.fill('input[name=email]', ADMIN[0]);
  await page.fill('input[name=password]', ADMIN[1]);
  await page.click('button[type=submit]');
  await page.waitForURL(`${BASE}/`);

  // Grow the catalogue with the page's own cookie, as the catalogue editor would.
  const rpc = async (name, body) => {
    const res = await page.request.post(`${BASE}/rpc/${name}`, { data: body, headers: { Origin: BASE } });
    if (!res.ok()) throw new Error(`${name}: ${res.status()} ${await res.text()}`);
  };
  await page.goto(`${BASE}/bindings`);
  await page.waitForSelector('body[data-hydrated="true"]');
  const haveTools = await page.locator('[data-cell^="global/"]').count();
  const haveWorkflows = (await page.locator('[data-cell$="/start_workflow"]').count()) - 1;
  for (let i = haveTools; i < TOOLS; i++) {
    const id = `bench_tool_${String(i).padStart(3, '0')}`;
    await rpc('save_tool', {
      tool: { id, name: `Bench tool ${i}`, description: 'A tool for the benchmark.', category: `group-${i % 6}`, parameters: { type: 'object', properties: {} } },
      create: true,
    });
  }
  for (let i = haveWorkflows; i < WORKFLOWS; i++) {
    await rpc('save_workflow', {
      workflow: { id: `bench-flow-${String(i).padStart(2, '0')}`, name: `Bench flow ${i}`, description: 'A workflow for the benchmark.' },
      create: true,
    });
  }

  await page.goto(`${BASE}/bindings`);
  await page.waitForSelector('body[data-hydrated="true"]');
  const cells = await page.locator('[data-cell]').count();
  // Distinct, enabled cells spread over the grid, all in bench workflows.
  const targets = [];
  for (let i = 0; targets.length < CLICKS; i++) {
    const wf = `bench-flow-${String(i % WORKFLOWS).padStart(2, '0')}`;
    const tool = `bench_tool_${String((i * 7) % TOOLS).padStart(3, '0')}`;
    const selector = `[data-cell="${wf}/${tool}"]`;
    if ((await page.locator(selector).count()) === 1 && !targets.includes(selector)) targets.push(selector);
  }

  // BENCH_PROFILE=file: a CPU profile of the clicks, top self times printed.
  const profiling = process.env.BENCH_PROFILE;
  const cdp = profiling ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  }
  const samples = await page.evaluate(async (selectors) => {
    const summary = document.querySelector('[data-testid="change-summary"]');
    const out = [];
    for (const selector of selectors) {
      const input = document.querySelector(selector);
      const td = input.closest('td');
      const before = summary.textContent;
      const t0 = performance.now();
      const updated = new Promise((resolve) => {
        const check = () => td.classList.contains('changed') && summary.textContent !== before;
        const observer = new MutationObserver(() => {
          if (check()) {
            observer.disconnect();
            resolve(performance.now());
          }
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      });
      input.click();
      const update = (await updated) - t0;
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      out.push({ update, frame: performance.now() - t0 });
      // Let the page settle between clicks, as a person's clicks would.
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    return out;
  }, targets);

  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(profiling, JSON.stringify(profile));
    const self = new Map();
    const dt = new Map();
    profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    for (const node of profile.nodes) {
      const name = node.callFrame.functionName || `(${node.callFrame.url.split('/').pop()})`;
      self.set(name, (self.get(name) ?? 0) + (dt.get(node.id) ?? 0));
    }
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 40)
      .forEach(([name, us]) => console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${name.slice(0, 150)}`));
  }
  const summary = await page.getByTestId('change-summary').textContent();
  if (summary !== `+${CLICKS} / −0`) throw new Error(`unexpected summary after the clicks: ${summary}`);
  const update = samples.map((s) => s.update).sort((a, b) => a - b);
  const frame = samples.map((s) => s.frame).sort((a, b) => a - b);
  console.log(
    `bindings matrix, ${cells} cells (${WORKFLOWS} workflows + global x ${TOOLS} tools), ${CLICKS} clicks: ` +
      `update median ${fmt(percentile(update, 0.5))}, p95 ${fmt(percentile(update, 0.95))}; ` +
      `next frame median ${fmt(percentile(frame, 0.5))}, p95 ${fmt(percentile(frame, 0.95))}`,
  );
} finally {
  await stop();
}
