import { expect, test } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { baseURL, pluginOrigin, pluginPort } from '../playwright.config';
import { apiKey, failOnConsoleErrors, hydrated, openSession } from './helpers';

// The example plugin page (examples/plugin/) on another origin, as a
// plugin author would host it: it imports the client from Switchboard's
// /clients/switchboard.js, joins a session with a join code, registers
// addNote, and answers the agent's call relayed to it. The server under
// test allows that origin (API_ORIGINS in playwright.config.ts).

const root = join(__dirname, '..', '..', 'examples', 'plugin');
const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

let server: Server;

test.beforeAll(async () => {
  server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', pluginOrigin).pathname;
    const file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(pluginPort, '127.0.0.1', resolve));
});

test.afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a plugin page on another origin joins, registers and answers the agent through the client', async ({
  page,
  request,
}) => {
  const key = await apiKey(page, `cross-origin plugin ${Date.now()}`);
  const session = await openSession(request, key, 'idv');
  const made = await request.post(`/api/sessions/${session.sessionId}/join-codes`, {
    headers: { Authorization: `Bearer ${session.sessionToken}` },
  });
  expect(made.status()).toBe(201);
  const { code } = (await made.json()) as { code: string };

  const check = failOnConsoleErrors(page);
  // The page's requests to Switchboard: the token only ever in a header.
  const toSwitchboard: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(baseURL)) toSwitchboard.push(r.url());
  });
  await page.goto(`${pluginOrigin}/?server=${encodeURIComponent(baseURL)}`);
  await page.getByTestId('code').fill(code);
  await page.getByTestId('join').click();
  await expect(page.getByTestId('status')).toHaveText('live');
  await expect(page.getByTestId('session')).toContainText(session.sessionId);
  await expect(page.getByTestId('tools')).toHaveText('Registered tools: addNote');
  await expect(page.getByTestId('changes')).toContainText('tools-registered');

  // The agent's call is relayed to the page; the page's answer is the
  // call's result.
  const res = await request.post(`/api/sessions/${session.sessionId}/tool-calls`, {
    headers: { Authorization: `Bearer ${session.sessionToken}` },
    data: { name: 'addNote', arguments: { text: 'Bring the field notebook' } },
  });
  expect(res.status()).toBe(200);
  const reply = await res.json();
  expect(reply.allowed).toBe(true);
  expect(reply.result).toEqual({ notes: 1, added: 'Bring the field notebook' });
  await expect(page.getByTestId('notes')).toContainText('Bring the field notebook');
  await expect(page.getByTestId('calls')).toContainText('addNote({"text":"Bring the field notebook"})');

  expect(toSwitchboard.some((u) => u.endsWith('/clients/switchboard.js'))).toBe(true);
  expect(toSwitchboard.some((u) => u.includes('/plugin-events'))).toBe(true);
  for (const url of toSwitchboard) expect(url).not.toContain('token=');
  await expect(page.getByTestId('error')).toHaveText('');
  check();
});

test('an admin makes a join code on the session page; a plugin page on another origin joins with it, and the watcher sees its tool', async ({
  page,
  context,
  request,
}) => {
  const key = await apiKey(page, `join from the page ${Date.now()}`);
  const session = await openSession(request, key, 'idv');
  const check = failOnConsoleErrors(page);
  await page.goto(`/sessions/${session.sessionId}`);
  await hydrated(page);
  await page.getByTestId('join-code-button').click();
  const code = (await page.getByTestId('join-code').innerText()).trim();
  expect(code).toMatch(/^[2-9A-HJKMNP-Z]{8}$/);

  // A person types the code into the plugin, on its own origin.
  const plugin = await context.newPage();
  await plugin.goto(`${pluginOrigin}/?server=${encodeURIComponent(baseURL)}`);
  await plugin.getByTestId('code').fill(code.toLowerCase());
  await plugin.getByTestId('join').click();
  await expect(plugin.getByTestId('status')).toHaveText('live');
  await expect(plugin.getByTestId('tools')).toHaveText('Registered tools: addNote');

  // The watcher's page shows the plugin's tool without a reload.
  await expect(page.locator('[data-testid="plugin-tool"][data-tool="addNote"]')).toBeVisible();
  // The code worked once.
  const again = await request.post('/api/plugins/join', { data: { code } });
  expect(again.status()).toBe(404);
  check();
});
