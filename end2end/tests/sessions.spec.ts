import { expect, test } from '@playwright/test';
import * as net from 'node:net';
import { ADMIN, TEACHER, apiKey, callTool, hydrated, openSession, signIn } from './helpers';

/**
 * A TCP proxy in front of the server, so a test can cut the browser's live
 * connections for real (browser "offline" emulation leaves open streams
 * alone) and hold reconnects until it lets them through.
 */
async function cuttableProxy(target: URL) {
  const open = new Set<net.Socket>();
  let held: net.Socket[] = [];
  let cut = false;
  const forward = (client: net.Socket) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  };
  const server = net.createServer((client) => (cut ? held.push(client) : forward(client)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    cut() {
      cut = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      cut = false;
      const waiting = held;
      held = [];
      waiting.forEach(forward);
    },
    close() {
      server.close();
      held.forEach((socket) => socket.destroy());
      for (const socket of open) socket.destroy();
    },
  };
}

const idv = { accountNumber: '12345678', sortCode: '12-34-56', dateOfBirth: '1985-04-12' };
const soon = { timeout: 1000 };

test('a watcher sees each change arrive, refusals with reasons, and catches up after a drop', async ({ page, request, baseURL }) => {
  const key = await apiKey(page, 'Voice agent');
  const s = await openSession(request, key, 'idv');
  const proxy = await cuttableProxy(new URL(baseURL!));

  // Watch through the proxy (same host, so the sign-in cookie applies).
  await page.goto(`${proxy.origin}/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByTestId('workflow-badge')).toHaveText('ID&V');
  await expect(page.getByTestId('step')).toHaveText('Conversation started');
  await expect(page.getByTestId('step')).toHaveAttribute('data-step', 'started');
  const identity = page.locator('[data-check="identity_verified"]');
  await expect(identity).toHaveClass(/check-unknown/);

  await callTool(request, s, 'check_balance', { accountNumber: '12345678' });
  const newest = page.getByTestId('timeline').locator('li').first();
  await expect(newest).toContainText('check_balance', soon);
  await expect(newest).toContainText('refused');
  await expect(newest).toContainText('`check_balance` is not available in workflow `idv`');

  await callTool(request, s, 'perform_idv_check', idv);
  await expect(identity).toHaveClass(/check-true/, soon);
  await expect(identity).toHaveClass(/pulse/);
  await expect(page.getByTestId('step')).toHaveText("Caller's identity verified", soon);

  await callTool(request, s, 'start_workflow', { workflowId: 'banking-master' });
  await expect(page.getByTestId('workflow-badge')).toHaveText('Banking Master', soon);
  await expect(page.getByTestId('available-tools')).toContainText('check_balance', soon);

  // Cut the event stream; what happens meanwhile arrives after reconnecting.
  proxy.cut();
  await expect(page.getByTestId('connection')).toHaveText('reconnecting…', { timeout: 5_000 });
  await callTool(request, s, 'check_balance', { accountNumber: '12345678' });
  await callTool(request, s, 'lookup_transaction', { transactionId: 'tx-1002' });
  await expect(page.getByTestId('timeline').locator('li')).toHaveCount(3);
  proxy.restore();
  await expect(page.getByTestId('connection')).toHaveText('live', { timeout: 15_000 });
  const timeline = page.getByTestId('timeline').locator('li');
  await expect(timeline).toHaveCount(5);
  await expect(timeline.nth(0)).toContainText('lookup_transaction');
  await expect(timeline.nth(0)).toContainText('not available in workflow `banking-master`');
  await expect(timeline.nth(1)).toContainText('check_balance');
  await expect(timeline.nth(1)).toContainText('allowed');
  await expect(timeline.nth(1)).toContainText('£2543.99');
  // The workflow_update sent while cut was caught up too.
  await expect(page.getByTestId('step')).toHaveAttribute('data-step', 'balance_given');
  proxy.close();
});

test('the session list updates without a reload and a teacher can watch', async ({ request, browser }) => {
  // The teacher's own key: its sessions are the teacher's to watch.
  const watcher = await browser.newPage();
  const key = await apiKey(watcher, 'List watcher', TEACHER);
  await watcher.goto('/sessions');
  await hydrated(watcher);
  await expect(watcher.getByTestId('list-connection')).toHaveText('live');
  const s = await openSession(request, key, 'disputes');
  await expect(watcher.locator(`[data-session="${s.sessionId}"]`)).toContainText('Disputes', { timeout: 2000 });
  await request.post(`/api/sessions/${s.sessionId}/end`, { headers: { Authorization: `Bearer ${s.sessionToken}` } });
  await expect(watcher.locator(`[data-session="${s.sessionId}"]`)).toContainText('ended', { timeout: 2000 });
  await watcher.close();
});

test('an admin tries the rules from the console of a new demo session', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/sessions');
  await hydrated(page);
  await page.getByRole('button', { name: 'New demo session' }).click();
  await expect(page).toHaveURL(/\/sessions\/s[a-z0-9]+$/);
  await hydrated(page);
  await expect(page.getByTestId('workflow-badge')).toHaveText('ID&V');
  const console = page.getByTestId('console');
  await console.getByTestId('console-tool').selectOption('mortgage_calculator');
  await console.locator('[data-field="principal"]').fill('200000');
  await console.locator('[data-field="annualRatePercent"]').fill('4');
  await console.locator('[data-field="years"]').fill('25');
  await console.getByTestId('console-call').click();
  await expect(console.getByTestId('console-result')).toContainText('"allowed": false');
  await expect(page.getByTestId('timeline').locator('li').first()).toContainText('not available in workflow `idv`');

  await console.getByTestId('console-raw').fill('{"principal": 1}');
  await console.getByTestId('console-tool').selectOption('perform_idv_check');
  // Another tool starts blank: no raw arguments, no answer of the last one.
  await expect(console.getByTestId('console-raw')).toHaveValue('');
  await expect(console.getByTestId('console-result')).toHaveCount(0);
  await console.locator('[data-field="accountNumber"]').fill('12345678');
  await console.locator('[data-field="sortCode"]').fill('12-34-56');
  await console.locator('[data-field="dateOfBirth"]').fill('1985-04-12');
  await console.getByTestId('console-call').click();
  await expect(console.getByTestId('console-result')).toContainText('"allowed": true');
  await expect(page.locator('[data-check="identity_verified"]')).toHaveClass(/check-true/);
});
