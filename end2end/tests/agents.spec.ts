import { expect, test } from '@playwright/test';
import { ADMIN, apiKey, failOnConsoleErrors, hydrated, signIn } from './helpers';

// The admin's agents page: the preview follows every keystroke, and a saved
// change to an agent's tools reaches a watcher's open session at once.
// Oliver's tools are shared demo data: the test puts updateTodo back.

test('removing a tool from Oliver reaches a watcher at once; the preview follows edits', async ({ page, browser }) => {
  const check = failOnConsoleErrors(page);
  const key = await apiKey(page, 'Agents page watcher');
  const opened = await page.request.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { vibeId: 'todos', agentId: 'Oliver' },
  });
  expect(opened.status()).toBe(201);
  const { sessionId } = (await opened.json()) as { sessionId: string };

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
  await expect(available).toContainText('updateTodo');

  // The admin opens the vibe, then Oliver from its matrix.
  await page.goto('/agents');
  await hydrated(page);
  await page.getByTestId('vibe-list').getByRole('link', { name: 'Todo Assistant' }).click();
  await expect(page.getByTestId('vibe-editor')).toHaveAttribute('data-vibe', 'todos');
  await expect(page.getByTestId('agent-matrix').locator('tr[data-agent="Oliver"] td[data-tool="updateTodo"] input')).toBeChecked();
  await page.getByTestId('agent-matrix').getByRole('link', { name: 'Oliver' }).click();
  const editor = page.getByTestId('agent-editor');
  await expect(editor).toHaveAttribute('data-agent', 'Oliver');
  const prompt = page.getByTestId('agent-preview-prompt');
  await expect(prompt).toContainText('You are Oliver');
  await expect(page.getByTestId('agent-exact-tokens')).toHaveText(/^\d+$/);

  // Typing updates the rendered prompt and the stage change at once.
  await editor.getByLabel('Personality').fill('Brisk and cheerful, says Righto often.');
  await expect(prompt).toContainText('Brisk and cheerful, says Righto often.');
  await expect(page.getByTestId('stage-change')).toContainText('Righto often');

  // An unknown placeholder is marked and named beside the template.
  const template = editor.getByLabel('System prompt template');
  await template.fill(`${await template.inputValue()} {{mood}}`);
  await expect(page.getByTestId('placeholders').locator('[data-known="false"]')).toHaveText('{{mood}}');
  await expect(editor.locator('[data-field="systemPromptTemplate"] .field-error')).toContainText('unknown placeholder {{mood}}');
  await editor.getByRole('button', { name: 'Discard' }).click();
  await expect(prompt).not.toContainText('Righto');

  // Remove updateTodo and save: the watcher's list loses it without a reload.
  await page.getByTestId('agent-tool-updateTodo').uncheck();
  await expect(page.getByTestId('selected-tools')).not.toContainText('updateTodo');
  await page.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-status')).toContainText('Saved');
  await expect(available).not.toContainText('updateTodo');
  await expect(available).toContainText('createTodo');

  // Put it back (shared demo data), and the watcher sees it return.
  await page.getByTestId('agent-tool-updateTodo').check();
  await page.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-status')).toContainText('Saved');
  await expect(available).toContainText('updateTodo');

  watcherCheck();
  await watcherContext.close();
  check();
});
