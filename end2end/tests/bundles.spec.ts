import { expect, test, type Browser, type BrowserContext } from '@playwright/test';
import { baseURL } from '../playwright.config';
import { ADMIN, apiKey, hydrated, openSession } from './helpers';

// One browser bundle per group of pages (`app::bundle_for`): each page
// downloads its own group's bundle and no other, and that bundle holds every
// island the page shows. An island missing from it would stay inert, and
// Leptos' island script says so in the console ("Could not find WASM
// function for the island …"), which is what this listens for. Each page is
// opened in a fresh context (the admin's cookies, no cache), so every visit
// fetches its bundle.

const HASHED_WASM = (bundle: string) => new RegExp(`^/pkg/${bundle}\\.[0-9a-f]{16}\\.wasm$`);

async function visit(browser: Browser, signedIn: BrowserContext | null, path: string) {
  const context = await browser.newContext({
    baseURL,
    storageState: signedIn ? await signedIn.storageState() : undefined,
  });
  try {
    const page = await context.newPage();
    const wasm: string[] = [];
    const missing: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.endsWith('.wasm')) wasm.push(url.pathname);
    });
    page.on('console', (msg) => {
      if (msg.text().includes('Could not find WASM function')) missing.push(msg.text());
    });
    await page.goto(path);
    await hydrated(page);
    const islands = await page.locator('leptos-island').count();
    return { wasm: [...new Set(wasm)], missing, islands };
  } finally {
    await context.close();
  }
}

test('every page loads only its own group’s bundle, and it hydrates all of the page’s islands', async ({
  browser,
  page,
  request,
}) => {
  // Fifteen visits, each in a fresh context with an empty cache, so each
  // downloads and compiles its bundle (20-30 MB unoptimised in the test
  // build): more than the default 30 s on two busy cores.
  test.setTimeout(120_000);
  const anonymous = await visit(browser, null, '/login');
  expect(anonymous.wasm).toEqual([expect.stringMatching(HASHED_WASM('start'))]);
  expect(anonymous.missing).toEqual([]);
  expect(anonymous.islands).toBeGreaterThan(0);

  // The admin sees every page, each with its islands.
  const key = await apiKey(page, `bundles ${Date.now()}`);
  const session = await openSession(request, key, 'idv');
  await page.goto('/lessons');
  const lesson = await page.locator('a[href^="/lessons/"]').first().getAttribute('href');
  expect(lesson).toMatch(/^\/lessons\/\d+$/);

  const pages: [string, string][] = [
    ['/', 'start'],
    ['/lessons', 'start'],
    [`${lesson}/sessions`, 'start'],
    [lesson!, 'editor'],
    ['/sessions', 'sessions'],
    [`/sessions/${session.sessionId}`, 'sessions'],
    ['/agents', 'admin'],
    ['/bindings', 'admin'],
    ['/mcp-servers', 'admin'],
    ['/playground', 'workflows'],
    ['/workflows', 'workflows'],
    ['/workflows/idv', 'workflows'],
    ['/accounts', 'start'],
    ['/profile', 'start'],
  ];
  const seen: Record<string, { wasm: string[]; missing: string[]; islands: number }> = {};
  for (const [path] of pages) seen[path] = await visit(browser, page.context(), path);
  for (const [path, bundle] of pages) {
    expect(seen[path].wasm, path).toEqual([expect.stringMatching(HASHED_WASM(bundle))]);
    expect(seen[path].missing, path).toEqual([]);
    expect(seen[path].islands, path).toBeGreaterThan(0);
  }
});
