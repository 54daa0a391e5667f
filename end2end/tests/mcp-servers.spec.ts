import { expect, test, type Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { everythingPort } from '../playwright.config';
import { ADMIN, apiKey, callTool, failOnConsoleErrors, hydrated, openSession, signIn } from './helpers';

// A real MCP server no one here wrote, @modelcontextprotocol/server-everything
// in its streamableHttp mode, started by this spec on its own port: an admin
// adds it on /mcp-servers, sees it connected with its tools, binds its echo
// to a workflow in the bindings matrix, and watches a session's call of it
// arrive in the server's figures without a reload. The spec then unbinds
// the tool and removes the server, so no other spec sees them (the imported
// tools stay in the catalogue, unavailable, as after any removal).

const NAME = 'everything';
const ECHO = `${NAME}__echo`;
const WORKFLOW = 'idv';
const upstreamURL = `http://127.0.0.1:${everythingPort}/mcp`;
const entry = join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const cell = (page: Page, scope: string, tool: string) => page.locator(`[data-cell="${scope}/${tool}"]`);

let upstream: ChildProcess;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  upstream = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(everythingPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // It says on stderr when it listens.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start in 15 s')), 15_000);
    upstream.stderr!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    upstream.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}`));
    });
  });
});

test.afterAll(async () => {
  if (upstream && upstream.exitCode === null) {
    const exited = new Promise((resolve) => upstream.once('exit', resolve));
    upstream.kill();
    await exited;
  }
});

/** Opens /mcp-servers, hydrated and following the live list. */
async function openServers(page: Page) {
  await page.goto('/mcp-servers');
  await hydrated(page);
  await expect(page.getByTestId('servers-connection')).toHaveAttribute('data-state', 'live');
}

/** Saves the bindings matrix as it is now. */
async function saveBindings(page: Page) {
  await page.getByTestId('save-bindings').click();
  await expect(page.getByTestId('bindings-status')).toContainText('Saved as version');
}

test('an admin adds server-everything, binds its echo in the matrix, and sees a call of it live', async ({
  page,
  request,
}) => {
  test.setTimeout(60_000);
  const noErrors = failOnConsoleErrors(page);
  const key = await apiKey(page, `mcp servers ${Date.now()}`);
  // A slow network for any read of the list the page makes: its answer is
  // held until the stream has shown the server connected, so it is older
  // than the page, and must not be put over it (the server stays
  // connected: no later frame would mend it).
  const card = page.getByTestId(`mcp-server-${NAME}`);
  let reads = 0;
  let answered = 0;
  await page.route('**/rpc/mcp_servers_list', async (route) => {
    reads += 1;
    const response = await route.fetch();
    await expect(card.getByTestId('server-status')).toHaveAttribute('data-state', 'connected', { timeout: 15_000 });
    await route.fulfill({ response });
    answered += 1;
  });
  await openServers(page);
  await expect(page.getByTestId('no-servers')).toBeVisible();

  const form = page.getByTestId('add-mcp-server');
  await form.getByLabel('Name').fill(NAME);
  await form.getByLabel('URL').fill(upstreamURL);
  await form.getByLabel('Headers').fill('X-Upstream-Key: e2e-secret-value');
  const added = page.waitForResponse('**/rpc/add_mcp_server');
  await form.getByRole('button', { name: 'Add server' }).click();
  await added;

  await expect(card.getByTestId('server-status')).toHaveAttribute('data-state', 'connected', { timeout: 15_000 });
  await expect.poll(() => answered).toBe(reads);
  await expect(card.locator(`tr[data-tool="${ECHO}"]`)).toHaveAttribute('data-available', 'true', { timeout: 15_000 });
  await expect(card.locator(`tr[data-tool="${NAME}__get-sum"]`)).toContainText('get-sum');
  await expect(card.getByTestId('server-tool-count')).not.toHaveText('0');
  await expect(card.getByTestId('server-calls')).toHaveText('0');
  await expect(card.getByTestId('server-median')).toHaveText('–');
  // The headers went into the form and are never shown back.
  await expect(form.getByLabel('Headers')).toHaveValue('');
  expect(await page.content()).not.toContain('e2e-secret-value');

  // The tools are bound in the matrix, like any catalogue tool.
  await card.getByTestId('bind-tools').click();
  await expect(page).toHaveURL(/\/bindings$/);
  await hydrated(page);
  await cell(page, WORKFLOW, ECHO).check();
  await saveBindings(page);

  // A session in that workflow calls it; the page follows without a reload.
  await openServers(page);
  const session = await openSession(request, key, WORKFLOW);
  const reply = await callTool(request, session, ECHO, { message: 'hello from e2e' });
  expect(reply.allowed).toBe(true);
  expect(reply.result.text).toBe('Echo: hello from e2e');
  await expect(card.getByTestId('server-calls')).toHaveText('1');
  await expect(card.getByTestId('server-median')).toHaveText(/^\d+\.\d ms$/);

  // Clean up: unbind, then remove the server after confirming.
  await page.goto('/bindings');
  await hydrated(page);
  await cell(page, WORKFLOW, ECHO).uncheck();
  await saveBindings(page);
  await openServers(page);
  await card.getByRole('button', { name: 'Remove', exact: true }).click();
  await expect(card.getByTestId('confirm-remove')).toContainText(`Remove ${NAME}?`);
  await card.getByRole('button', { name: 'Yes, remove' }).click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId('no-servers')).toBeVisible();
  noErrors();
});

test('a refused field is named beside it, and nothing is added', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openServers(page);
  const form = page.getByTestId('add-mcp-server');
  await form.getByLabel('Name').fill('Not a slug');
  await form.getByLabel('URL').fill(upstreamURL);
  await form.getByRole('button', { name: 'Add server' }).click();
  await expect(form.getByTestId('add-error-name')).toContainText('name:');

  await form.getByLabel('Name').fill(NAME);
  await form.getByLabel('Headers').fill('no colon here');
  await form.getByRole('button', { name: 'Add server' }).click();
  await expect(form.getByTestId('add-error-headers')).toContainText('headers: line 1');
  await expect(form.getByTestId('add-error-name')).toHaveCount(0);
  await expect(page.getByTestId('no-servers')).toBeVisible();
});
