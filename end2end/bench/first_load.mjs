// Browser benchmark: what a first and a second visit to a lesson editor
// cost over the wire, in real Chromium against the real (release) server.
//
// Starts the server on a fresh SQLite file with the demo lessons, signs in
// as the teacher in one browser context (that visit is not counted), then
// in a fresh context (empty cache) with the same sign-in cookie visits
// /lessons/{id} and sums every response's bytes on the wire (Chrome's
// `encodedDataLength`: headers and compressed bodies), listing each file
// with its raw, gzip and brotli sizes as built; then visits again in the
// same context and reports what the second visit transferred, the wasm in
// particular (it should come from the cache: 0 bytes). Also prints the
// time from navigation start to hydration (`body[data-hydrated]`).
// Run with `make bench-first-load`; SWITCHBOARD_BIN and SITE_ROOT choose
// the build.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PASSWORDS, start } from './server.mjs';

const { base: BASE, site: SITE, browser, stop } = await start('first-load', 3191);
const TEACHER = ['teacher@example.com', PASSWORDS.teacher];

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** Visits `url` in `page`, returning every response's wire bytes by URL. */
async function visit(page, url) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map();
  const bytes = new Map();
  const cached = new Set();
  cdp.on('Network.responseReceived', (e) => {
    urls.set(e.requestId, e.response.url);
    if (e.response.fromDiskCache || e.response.fromPrefetchCache) cached.add(e.requestId);
  });
  cdp.on('Network.requestServedFromCache', (e) => cached.add(e.requestId));
  cdp.on('Network.loadingFinished', (e) => bytes.set(e.requestId, e.encodedDataLength));
  const started = Date.now();
  await page.goto(url);
  await page.waitForSelector('body[data-hydrated="true"]');
  const hydrated = Date.now() - started;
  await page.waitForLoadState('networkidle');
  await cdp.detach();
  const rows = [...urls].map(([id, u]) => ({
    url: u.replace(BASE, ''),
    wire: cached.has(id) ? 0 : (bytes.get(id) ?? 0),
    cached: cached.has(id),
  }));
  return { rows, hydrated };
}

try {
  // Sign in (not counted) and find a lesson.
  const login = await browser.newContext();
  const res = await login.request.post(`${BASE}/rpc/login`, {
    form: { email: TEACHER[0], password: TEACHER[1] },
    headers: { Origin: BASE },
    maxRedirects: 0,
  });
  if (res.status() >= 400) throw new Error(`login: ${res.status()}`);
  const cookies = await login.cookies();
  const lessons = await login.request.get(`${BASE}/lessons`);
  const id = /href="\/lessons\/(\d+)"/.exec(await lessons.text())?.[1];
  if (!id) throw new Error('no lesson found');
  await login.close();

  const context = await browser.newContext();
  await context.addCookies(cookies);
  const page = await context.newPage();
  const url = `${BASE}/lessons/${id}`;
  const first = await visit(page, url);
  const total = first.rows.reduce((n, r) => n + r.wire, 0);
  console.log(`first visit to /lessons/${id}: ${kb(total)} over the wire in ${first.rows.length} responses, hydrated after ${first.hydrated} ms`);
  for (const r of first.rows) console.log(`  ${kb(r.wire).padStart(10)}  ${r.url}`);

  const pkg = join(SITE, 'pkg');
  console.log('bundle files as built (raw / gzip / brotli):');
  for (const f of readdirSync(pkg).filter((f) => !f.endsWith('.br') && !f.endsWith('.gz')).sort()) {
    const size = (name) => {
      try {
        return kb(statSync(join(pkg, name)).size);
      } catch {
        return '-';
      }
    };
    console.log(`  ${f}: ${size(f)} / ${size(`${f}.gz`)} / ${size(`${f}.br`)}`);
  }

  const second = await visit(page, url);
  const again = second.rows.reduce((n, r) => n + r.wire, 0);
  const wasm = second.rows.filter((r) => r.url.endsWith('.wasm'));
  console.log(`second visit: ${kb(again)} over the wire in ${second.rows.length} responses, hydrated after ${second.hydrated} ms; wasm: ${wasm.map((r) => `${r.wire} bytes${r.cached ? ' (cache)' : ''}`).join(', ') || 'not requested'}`);
  for (const r of second.rows) console.log(`  ${kb(r.wire).padStart(10)}  ${r.url}${r.cached ? ' (cache)' : ''}`);
} finally {
  await stop();
}
