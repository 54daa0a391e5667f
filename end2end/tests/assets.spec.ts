import { chromium as browserType, expect, test } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseURL, chromium } from '../playwright.config';
import { hydrated } from './helpers';

// The browser bundle as a visitor's browser gets it: content-hashed names,
// sent compressed, and cached for good, so a second visit fetches no
// bundle file at all. The browser keeps a profile on disk, as a visitor's
// does: a throwaway context caches in memory only, too little for the
// debug bundle.

test('a first visit gets the bundle compressed; a second loads it from the cache', async () => {
  const profile = mkdtempSync(join(tmpdir(), 'switchboard-cache-'));
  const context = await browserType.launchPersistentContext(profile, { ...chromium, baseURL });
  try {
    await visitTwice(await context.newPage());
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});

async function visitTwice(page: import('@playwright/test').Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const responses = new Map<string, { url: string; headers: Record<string, string>; cached: boolean }>();
  // The memory cache says so before the response event, the disk cache in it.
  const fromCache = new Set<string>();
  cdp.on('Network.requestServedFromCache', (e) => fromCache.add(e.requestId));
  cdp.on('Network.responseReceived', (e) => {
    const headers = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
    const cached = fromCache.has(e.requestId) || !!e.response.fromDiskCache || !!e.response.fromPrefetchCache;
    responses.set(e.requestId, { url: e.response.url, headers, cached });
  });
  const wasm = () => [...responses.values()].filter((r) => r.url.endsWith('.wasm'));

  await page.goto('/login');
  await hydrated(page);
  const first = wasm();
  expect(first).toHaveLength(1);
  expect(first[0].url).toMatch(/\/pkg\/start\.[0-9a-f]{16}\.wasm$/);
  expect(first[0].cached).toBe(false);
  expect(['br', 'gzip']).toContain(first[0].headers['content-encoding']);
  expect(first[0].headers['cache-control']).toBe('public, max-age=31536000, immutable');

  responses.clear();
  // Another page (the same address again would be a reload).
  await page.goto('/login?next=%2Flessons');
  await hydrated(page);
  // Either the browser did not ask at all, or it was answered from its cache.
  for (const again of wasm()) expect(again.cached).toBe(true);
  const html = [...responses.values()].find((r) => r.url.includes('/login'));
  expect(html?.headers['cache-control']).toBe('no-store');
}
