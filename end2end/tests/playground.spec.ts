import { expect, test } from '@playwright/test';
import { ADMIN, apiKey, callTool, failOnConsoleErrors, hydrated, openSession, signIn } from './helpers';

// The plugin loop by hand: the playground (a CODAP-like plugin in one
// browser) registers its tools with a new session; a watcher's session page
// (another browser) sees them appear; the watcher's console calls them,
// the playground runs each call on its table and answers; rows make
// createGraph appear, everywhere, without a reload. The page talks to the
// API through the JavaScript client Switchboard serves
// (/clients/switchboard.js), and can join a session by a join code.

test('the playground registers tools, runs relayed calls and re-registers as its data grows', async ({ page, browser }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  // The page acts with the session's plugin token (pt_…), never with the
  // agent's session token: every call it makes on the session says which.
  const credentials: string[] = [];
  page.on('request', async (request) => {
    if (!request.url().includes('/api/sessions/')) return;
    const query = new URL(request.url()).searchParams.get('token');
    const auth = (await request.allHeaders())['authorization'] ?? '';
    credentials.push(query ?? auth.replace(/^Bearer /, ''));
  });
  const client: string[] = [];
  page.on('response', (response) => {
    if (new URL(response.url()).pathname === '/clients/switchboard.js') client.push(response.headers()['content-type']);
  });
  await page.goto('/playground');
  await hydrated(page);
  expect(client[0]).toMatch(/^text\/javascript/);
  await page.getByTestId('playground-workflow').selectOption('idv');
  await page.getByTestId('playground-open').click();
  const playground = page.getByTestId('playground');
  await expect(playground).toBeVisible();
  const sessionId = await playground.getAttribute('data-session');
  await expect(page.getByTestId('plugin-connection')).toHaveText('live');
  await expect(page.getByTestId('registered-tools')).toContainText('createTable');

  // The watcher, in a browser of their own.
  const watcherContext = await browser.newContext();
  const watcher = await watcherContext.newPage();
  const watcherCheck = failOnConsoleErrors(watcher);
  await signIn(watcher, ADMIN);
  await expect(watcher.getByTestId('welcome')).toBeVisible();
  await watcher.goto(`/sessions/${sessionId}`);
  await hydrated(watcher);
  await expect(watcher.getByTestId('connection')).toHaveText('live');
  const available = watcher.getByTestId('available-tools');
  const panel = watcher.getByTestId('plugin-panel');
  await expect(panel.locator('[data-tool="createTable"]')).toHaveAttribute('data-status', 'active');
  await expect(available).toContainText('createTable');

  // The console plays the agent: createTable runs in the playground.
  const console = watcher.getByTestId('console');
  const callTool = async (tool: string, args: object) => {
    await console.getByTestId('console-tool').selectOption(tool);
    await console.getByTestId('console-raw').fill(JSON.stringify(args));
    await console.getByTestId('console-call').click();
  };
  await callTool('createTable', { title: 'Mammals' });
  await expect(console.getByTestId('console-result')).toContainText('"table": "Mammals"');
  await expect(page.getByTestId('data-table')).toContainText('Mammals');
  // The playground swapped createTable for addRow; the watcher sees it live.
  await expect(page.getByTestId('registered-tools')).toHaveText('Registered tools: addRow');
  await expect(available).toContainText('addRow');
  await expect(available).not.toContainText('createTable');
  await expect(available).not.toContainText('createGraph');

  // addRow: the row shows in the playground, the result in the timeline.
  await callTool('addRow', { label: 'Cats', value: 3 });
  await expect(console.getByTestId('console-result')).toContainText('"rows": 1');
  await expect(page.getByTestId('table-row')).toHaveCount(1);
  await expect(page.getByTestId('table-row').first()).toContainText('Cats');
  const timeline = watcher.getByTestId('timeline');
  await expect(timeline.locator('li').first()).toContainText('addRow');
  await expect(timeline.locator('li').first()).toContainText('{"rows":1}');

  // Rows make createGraph appear; calling it draws the graph.
  await expect(available).toContainText('createGraph');
  await expect(panel.locator('[data-tool="addRow"]')).toContainText('used 1×');
  await callTool('createGraph', { title: 'Counts' });
  await expect(page.getByTestId('bar-graph')).toContainText('Counts');

  // A bad argument is refused before it reaches the plugin.
  await callTool('addRow', { label: 'Dogs' });
  await expect(console.getByTestId('console-result')).toContainText('invalid arguments for `addRow`');
  await expect(page.getByTestId('table-row')).toHaveCount(1);

  expect(credentials.length).toBeGreaterThan(0);
  for (const credential of credentials) expect(credential).toMatch(/^pt_/);

  watcherCheck();
  await watcherContext.close();
  check();
});

test('the playground joins a session by a join code and answers its agent', async ({ page, request }) => {
  const check = failOnConsoleErrors(page);
  const key = await apiKey(page, `playground join ${Date.now()}`);
  const session = await openSession(request, key, 'idv');
  const made = await request.post(`/api/sessions/${session.sessionId}/join-codes`, {
    headers: { Authorization: `Bearer ${session.sessionToken}` },
  });
  expect(made.status()).toBe(201);
  const { code } = (await made.json()) as { code: string };

  await page.goto('/playground');
  await hydrated(page);
  await page.getByTestId('join-code').fill(code);
  await page.getByTestId('join-submit').click();
  const playground = page.getByTestId('playground');
  await expect(playground).toHaveAttribute('data-session', session.sessionId);
  await expect(page.getByTestId('plugin-connection')).toHaveText('live');
  await expect(page.getByTestId('registered-tools')).toContainText('createTable');

  // The agent's call is relayed to the page and its answer comes back.
  const reply = await callTool(request, session, 'createTable', { title: 'Birds' });
  expect(reply.allowed).toBe(true);
  expect(reply.result).toEqual({ table: 'Birds', columns: ['label', 'value'] });
  await expect(page.getByTestId('data-table')).toContainText('Birds');
  await expect(page.getByTestId('registered-tools')).toHaveText('Registered tools: addRow');

  check();

  // A used code does not join twice (its 404 is logged by the browser,
  // so the console is not checked past here).
  await page.goto('/playground');
  await hydrated(page);
  await page.getByTestId('join-code').fill(code);
  await page.getByTestId('join-submit').click();
  await expect(page.getByTestId('join-error')).toContainText('Joining failed');
});
