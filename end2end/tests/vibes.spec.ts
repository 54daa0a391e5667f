import { expect, test } from '@playwright/test';
import { ADMIN, failOnConsoleErrors, hydrated, signIn } from './helpers';

// A vibe session as a watcher sees it: the current agent (name,
// personality, voice), its tools now, and each switchAgent arriving live;
// the session list shows vibe and agent.

test('a watcher sees the agent and its tools change as the backend switches agents', async ({ page }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);
  const panel = page.getByTestId('api-keys');
  await panel.getByLabel('Key name').fill('Ultravox backend');
  await panel.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('new-api-key').innerText()).trim();

  const api = page.request;
  const opened = await api.post('/api/sessions', { headers: { Authorization: `Bearer ${key}` }, data: { vibeId: 'todos' } });
  expect(opened.status()).toBe(201);
  const s = (await opened.json()) as { sessionId: string; sessionToken: string };
  const auth = { Authorization: `Bearer ${s.sessionToken}` };

  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveText('live');
  const agent = page.getByTestId('agent-panel');
  await expect(agent.getByTestId('agent-name')).toHaveText('Hominio');
  await expect(agent).toContainText('Voice: Mark');
  const tools = page.getByTestId('available-tools');
  await expect(tools.locator('.chip')).toHaveText(['hangUp', 'switchAgent']);

  const refused = await (await api.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: auth,
    data: { name: 'createTodo', arguments: { todoText: 'Buy milk' } },
  })).json();
  expect(refused.reason).toBe('`createTodo` is not available to agent `Hominio`; available: hangUp, switchAgent');

  await api.post(`/api/sessions/${s.sessionId}/tool-calls`, { headers: auth, data: { name: 'switchAgent', arguments: { agentName: 'Oliver' } } });
  await expect(agent.getByTestId('agent-name')).toHaveText('Oliver');
  await expect(agent).toContainText('Voice: Oliver-English');
  await expect(tools.locator('.chip')).toContainText(['createTodo']);
  const created = await (await api.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: auth,
    data: { name: 'createTodo', arguments: { todoText: 'Buy milk' } },
  })).json();
  expect(created.allowed).toBe(true);
  const timeline = page.getByTestId('timeline');
  await expect(timeline.locator('li')).toHaveCount(3);
  await expect(timeline.locator('li').first()).toContainText('createTodo');
  await expect(timeline.locator('li').nth(1)).toContainText('switchAgent');

  await page.goto('/sessions');
  await hydrated(page);
  await expect(page.locator(`tr[data-session="${s.sessionId}"]`).getByTestId('session-context')).toHaveText('todos · Oliver');
  check();
});
