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

// The vibe's agent × tool matrix is edited in place and saved with the
// vibe as one change; a renamed agent shows in the lists at once; a
// manifest archive is imported from the page. Shared demo data: every
// change is put back.
test('the matrix edits agents with the vibe; a rename shows in the lists; an archive imports', async ({ page }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  // What the server has now: the matrix as a fresh page load renders it.
  const savedMatrix = async () => {
    await page.reload();
    await hydrated(page);
  };

  await page.goto('/agents?vibe=todos');
  await hydrated(page);
  const matrix = page.getByTestId('agent-matrix');
  const rajeshFilter = page.getByTestId('matrix-Rajesh-filterTodos');
  await expect(rajeshFilter).not.toBeChecked();
  await expect(page.getByTestId('matrix-Rajesh-switchAgent')).toBeDisabled();
  await expect(page.getByTestId('matrix-Rajesh-switchAgent')).toBeChecked();
  await expect(page.getByTestId('save-vibe')).toBeDisabled();

  // Tick and untick: the cell is marked as changed; back to saved, not.
  await rajeshFilter.check();
  const cell = matrix.locator('tr[data-agent="Rajesh"] td[data-tool="filterTodos"]');
  await expect(cell).toHaveClass(/changed/);
  await rajeshFilter.uncheck();
  await expect(cell).not.toHaveClass(/changed/);
  await expect(page.getByTestId('save-vibe')).toBeDisabled();

  // Give Rajesh filterTodos, save: the agent is saved with the vibe.
  await rajeshFilter.check();
  await page.getByTestId('save-vibe').click();
  await expect(page.getByTestId('vibe-status')).toContainText('Rajesh version');
  await expect(cell).not.toHaveClass(/changed/);
  await savedMatrix();
  await expect(rajeshFilter).toBeChecked();

  // A tool only this vibe offers, then removed from the vibe's app tools
  // while Rajesh still has it: the rule is named before saving.
  await page.getByTestId('app-tool-filterTodos').uncheck();
  await expect(page.getByTestId('other-problems')).toContainText('agents.Rajesh.tools');
  await page.getByRole('button', { name: 'Discard' }).click();
  await expect(page.getByTestId('other-problems')).toBeEmpty();

  // Put it back.
  await rajeshFilter.uncheck();
  await page.getByTestId('save-vibe').click();
  await expect(page.getByTestId('vibe-status')).toContainText('Rajesh version');
  await savedMatrix();
  await expect(rajeshFilter).not.toBeChecked();

  // A rename in the agent editor shows in the agent list without a reload.
  await page.goto('/agents?agent=Rajesh');
  await hydrated(page);
  const editor = page.getByTestId('agent-editor');
  const list = page.getByTestId('agent-list');
  await editor.getByLabel('Name').fill('Rajesh the Fixer');
  await page.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-status')).toContainText('Saved');
  await expect(list.getByRole('link', { name: 'Rajesh the Fixer' })).toBeVisible();
  await editor.getByLabel('Name').fill('Rajesh');
  await page.getByTestId('save-agent').click();
  await expect(page.getByTestId('agent-status')).toContainText('Saved');
  await expect(list.getByRole('link', { name: 'Rajesh', exact: true })).toBeVisible();

  // Import: this set as downloaded comes back in force; a broken file is
  // refused naming what is wrong.
  const zip = await page.request.get('/agents/manifests.zip');
  expect(zip.status()).toBe(200);
  const input = page.getByTestId('import-manifests');
  await input.setInputFiles({ name: 'set.zip', mimeType: 'application/zip', buffer: await zip.body() });
  await expect(page.getByTestId('import-status')).toHaveText(/Imported 1 vibes, 3 agents and \d+ tools/);
  // The same set with its tools in the seed's Ultravox form imports too.
  await expect(page.getByTestId('manifest-download-ultravox')).toHaveAttribute('href', '/agents/manifests.zip?form=ultravox');
  const seedForm = await page.request.get('/agents/manifests.zip?form=ultravox');
  expect(seedForm.status()).toBe(200);
  const imported = await page.request.post('/agents/manifests', {
    headers: { Origin: new URL(page.url()).origin },
    data: await seedForm.body(),
  });
  expect(imported.status()).toBe(200);
  expect(await imported.json()).toMatchObject({ vibes: 1, agents: 3 });
  // No console error up to here; the refusal below logs its 422 there.
  check();
  await input.setInputFiles({ name: 'broken.zip', mimeType: 'application/zip', buffer: Buffer.from('not an archive') });
  await expect(page.getByTestId('import-status')).toContainText('archive');
  await expect(page.getByTestId('import-status')).toHaveAttribute('role', 'alert');
  await page.goto('/agents?vibe=todos');
  await expect(page.getByTestId('matrix-Oliver-updateTodo')).toBeChecked();
});
