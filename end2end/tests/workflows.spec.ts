import { readFileSync } from 'node:fs';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { ADMIN, apiKey, failOnConsoleErrors, hydrated, openSession, signIn } from './helpers';

// The workflow settings page and its chat, as admins use them; the
// workflow agent's model is the scripted one the config starts.

const ASK = 'Add a custom_agent step called Verify identity with perform_idv_check';
const soon = { timeout: 10_000 };

/** An admin on `/workflows/{id}` in a browser of their own, its live feed open. */
async function settingsPage(browser: Browser, id: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, ADMIN);
  await expect(page.getByTestId('current-user')).toBeVisible();
  await page.goto(`/workflows/${id}`);
  await hydrated(page);
  await expect(page.getByTestId('workflow-connection')).toHaveAttribute('data-state', 'live', soon);
  return page;
}

function stepCard(page: Page, name: string) {
  return page.locator(`[data-testid="workflow-step"][data-name="${name}"]`);
}

async function version(page: Page) {
  return Number((await page.getByTestId('workflow-version').innerText()).replace(/\D/g, ''));
}

/** Runs `edit` and waits until the page shows the version it stored: a
 * box is ticked, and a Save button disabled, before the server has it. */
async function stored(page: Page, edit: () => Promise<void>) {
  const before = await version(page);
  await edit();
  await expect.poll(() => version(page), soon).toBeGreaterThan(before);
}

test('an admin asks the workflow agent for a step and both open pages show it as it happens', async ({ browser }) => {
  const page = await settingsPage(browser, 'banking-master');
  const other = await settingsPage(browser, 'banking-master');
  const check = failOnConsoleErrors(page);
  const before = await version(other);
  await expect(page.getByTestId('chat-panel')).toHaveAttribute('data-conversation', /^[0-9a-f-]{36}$/);

  // Shift+Enter is a new line; Enter sends.
  const input = page.getByTestId('chat-input');
  await input.fill('first line');
  await input.press('Shift+Enter');
  await expect(input).toHaveValue('first line\n');
  await input.fill(ASK);
  await input.press('Enter');
  await expect(input).toHaveValue('');

  const log = page.getByTestId('chat-log');
  await expect(log.getByTestId('chat-user')).toHaveText(ASK);
  // The step appears beside the chat while the agent is still working.
  await expect(stepCard(page, 'Verify identity')).toBeVisible(soon);
  await expect(page.getByTestId('chat-working')).toBeVisible();
  await expect(page.getByTestId('chat-working')).toBeHidden(soon);

  const calls = log.getByTestId('tool-call');
  await expect(calls).toHaveCount(2);
  await expect(calls.nth(0)).toHaveAttribute('data-tool', 'add_step');
  await expect(calls.nth(1)).toHaveAttribute('data-tool', 'update_step_mcp_tools');
  await expect(calls.nth(0)).toHaveAttribute('data-state', 'done');
  await expect(calls.nth(1)).toHaveAttribute('data-state', 'done');
  await expect(log.getByTestId('chat-assistant').last()).toContainText('gave it perform_idv_check');
  // A call opens to its arguments and result.
  await expect(calls.nth(0).getByTestId('tool-call-args')).toBeHidden();
  await calls.nth(0).locator('summary').click();
  await expect(calls.nth(0).getByTestId('tool-call-args')).toContainText('"step_type": "custom_agent"');
  await expect(calls.nth(0).getByTestId('tool-call-result')).toContainText('Verify identity');

  const card = stepCard(page, 'Verify identity');
  await expect(card.getByTestId('step-type')).toHaveText('custom_agent');
  await expect(card.getByTestId('step-tool-perform_idv_check')).toBeChecked(soon);
  // The second admin's page followed without a reload.
  const seen = stepCard(other, 'Verify identity');
  await expect(seen.getByTestId('step-tool-perform_idv_check')).toBeChecked(soon);
  await expect(other.getByTestId('workflow-version')).toHaveText(`version ${before + 2}`);
  check();

  // Removing it by hand is seen by the other page too.
  await card.getByTestId('step-remove').click();
  await expect(stepCard(page, 'Verify identity')).toHaveCount(0, soon);
  await expect(stepCard(other, 'Verify identity')).toHaveCount(0, soon);
  await page.context().close();
  await other.context().close();
});

test('Stop ends the turn after the step in flight', async ({ browser }) => {
  const page = await settingsPage(browser, 'idv');
  const check = failOnConsoleErrors(page);
  await page.getByTestId('chat-input').fill('Keep looking at the workflow');
  await page.getByTestId('chat-send').click();
  const calls = page.getByTestId('tool-call');
  await expect(calls.first()).toBeVisible(soon);
  await page.getByTestId('chat-stop').click();
  await expect(page.getByTestId('chat-working')).toBeHidden(soon);
  const made = await calls.count();
  expect(made).toBeLessThan(8);
  await page.waitForTimeout(500);
  await expect(calls).toHaveCount(made);
  await expect(page.getByTestId('chat-log')).not.toContainText('I stopped after');
  // A new conversation starts empty, with a new id.
  const id = await page.getByTestId('chat-panel').getAttribute('data-conversation');
  await page.getByTestId('chat-new').click();
  await expect(page.getByTestId('chat-log').locator('li')).toHaveCount(0);
  await expect(page.getByTestId('chat-panel')).not.toHaveAttribute('data-conversation', id ?? '');
  check();
  await page.context().close();
});

test('an admin edits trigger and steps by hand, and the visualiser lights the session’s step', async ({
  browser,
  request,
}) => {
  const page = await settingsPage(browser, 'disputes');
  const check = failOnConsoleErrors(page);

  // Start trigger and its filter rules.
  await page.getByTestId('trigger-type').selectOption('inbound_call');
  await expect(page.getByTestId('trigger-description')).toContainText('phone call', soon);
  const rules = page.getByTestId('filter-rules');
  await rules.fill('{"calledNumbers": ["+441234567890"]}');
  await stored(page, () => page.getByTestId('save-filter-rules').click());
  await expect(page.getByTestId('save-filter-rules')).toBeDisabled();
  await expect(page.getByTestId('workflow-problem')).toHaveCount(0);
  await rules.fill('{not json');
  await page.getByTestId('save-filter-rules').click();
  await expect(page.getByTestId('workflow-problem')).toContainText('filter_rules');

  // Two steps, the second moved first, a prompt and a tool.
  for (const [kind, name] of [
    ['custom_llm', 'Greet'],
    ['custom_agent', 'Resolve'],
  ]) {
    await page.getByTestId('new-step-type').selectOption(kind);
    await page.getByTestId('new-step-name').fill(name);
    await page.getByTestId('add-step').click();
    await expect(stepCard(page, name)).toBeVisible(soon);
  }
  await expect(stepCard(page, 'Greet')).toContainText('has no tools');
  await stepCard(page, 'Resolve').getByTestId('step-up').click();
  const names = page.getByTestId('workflow-step').getByTestId('step-name');
  await expect(names).toHaveText(['Resolve', 'Greet'], soon);
  const resolve = stepCard(page, 'Resolve');
  await resolve.getByTestId('step-prompt').fill('Open a dispute case for the transaction.');
  await stored(page, () => resolve.getByTestId('save-step-prompt').click());
  await expect(resolve.getByTestId('save-step-prompt')).toBeDisabled();
  await stored(page, () => resolve.getByTestId('step-tool-create_dispute_case').check());
  await expect(resolve.getByTestId('step-tool-create_dispute_case')).toBeChecked();

  // A prompt saved elsewhere while another admin types is shown to them,
  // not hidden under their text to be overwritten unseen.
  const other = await settingsPage(browser, 'disputes');
  const theirBox = stepCard(other, 'Resolve').getByTestId('step-prompt');
  await theirBox.fill('Half-typed by the second admin');
  await resolve.getByTestId('step-prompt').fill('Ask for the transaction first.');
  await stored(page, () => resolve.getByTestId('save-step-prompt').click());
  const notice = stepCard(other, 'Resolve').getByTestId('step-prompt-theirs');
  await expect(notice).toContainText('Ask for the transaction first.', soon);
  await expect(theirBox).toHaveValue('Half-typed by the second admin');
  await notice.getByRole('button', { name: 'Use theirs' }).click();
  await expect(theirBox).toHaveValue('Ask for the transaction first.');
  await expect(notice).toHaveCount(0);
  await expect(stepCard(other, 'Resolve').getByTestId('save-step-prompt')).toBeDisabled();
  await other.context().close();

  // A page whose live feed is down saves on a stale version: refused, and
  // what was typed stays, beside what was saved meanwhile, until the admin
  // saves theirs over it knowingly.
  const staleContext = await browser.newContext();
  await staleContext.route(/\/api\/workflows\/disputes\/events/, (route) => route.abort());
  const stale = await staleContext.newPage();
  await signIn(stale, ADMIN);
  await expect(stale.getByTestId('current-user')).toBeVisible();
  await stale.goto('/workflows/disputes');
  await hydrated(stale);
  const staleBox = stepCard(stale, 'Resolve').getByTestId('step-prompt');
  await expect(staleBox).toHaveValue('Ask for the transaction first.', soon);
  await resolve.getByTestId('step-prompt').fill('Ask for the date first.');
  await stored(page, () => resolve.getByTestId('save-step-prompt').click());
  await staleBox.fill('Typed on a stale page');
  await stepCard(stale, 'Resolve').getByTestId('save-step-prompt').click();
  await expect(stale.getByTestId('workflow-problem')).toBeVisible(soon);
  const staleNotice = stepCard(stale, 'Resolve').getByTestId('step-prompt-theirs');
  await expect(staleNotice).toContainText('Ask for the date first.', soon);
  await expect(staleBox).toHaveValue('Typed on a stale page');
  await stepCard(stale, 'Resolve').getByTestId('save-step-prompt').click();
  await expect(resolve.getByTestId('step-prompt')).toHaveValue('Typed on a stale page', soon);
  await expect(staleNotice).toHaveCount(0, soon);
  await expect(stepCard(stale, 'Resolve').getByTestId('save-step-prompt')).toBeDisabled();
  await staleContext.close();

  await resolve.getByTestId('step-prompt').fill('Open a dispute case for the transaction.');
  await stored(page, () => resolve.getByTestId('save-step-prompt').click());

  // All of it is stored.
  await page.reload();
  await hydrated(page);
  await expect(names).toHaveText(['Resolve', 'Greet']);
  await expect(page.getByTestId('filter-rules')).toHaveValue(/\+441234567890/);
  await expect(stepCard(page, 'Resolve').getByTestId('step-prompt')).toHaveValue(
    'Open a dispute case for the transaction.',
  );
  await expect(stepCard(page, 'Resolve').getByTestId('step-tool-create_dispute_case')).toBeChecked();
  check();

  // A session in the workflow starts in its first step, lit on the
  // visualiser; moving it to the next step moves the light.
  const greetUuid = await stepCard(page, 'Greet').getAttribute('data-uuid');
  const keyPage = await browser.newPage();
  const key = await apiKey(keyPage, 'workflow-steps-e2e');
  await keyPage.close();
  const s = await openSession(request, key, 'disputes');
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  const lit = page.locator('[data-testid="vis-step"][data-current="true"]');
  await expect(page.getByTestId('vis-step')).toHaveText([/Resolve/, /Greet/]);
  await expect(lit).toHaveText(/Resolve/);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', soon);
  const moved = await request.patch(`/api/sessions/${s.sessionId}/state`, {
    headers: { Authorization: `Bearer ${s.sessionToken}` },
    data: { workflowStep: greetUuid },
  });
  expect(moved.status()).toBe(200);
  await expect(lit).toHaveText(/Greet/, soon);

  // Leave the workflow without steps for other specs.
  await page.goto('/workflows/disputes');
  await hydrated(page);
  for (const name of ['Resolve', 'Greet']) {
    await stepCard(page, name).getByTestId('step-remove').click();
    await expect(stepCard(page, name)).toHaveCount(0, soon);
  }
  await page.context().close();
});

test('an admin exports a definition as a file and imports it back, and a broken file is refused by place', async ({
  browser,
}) => {
  const page = await settingsPage(browser, 'mortgage');
  const check = failOnConsoleErrors(page);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('workflow-export').click(),
  ]);
  expect(download.suggestedFilename()).toBe('mortgage-workflow.json');
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(exported.workflowId).toBe('mortgage');
  const original = JSON.stringify(exported);

  // A step added in the file arrives with its uuid, as a saved version.
  const changed = structuredClone(exported);
  changed.definition.steps.push({ uuid: 'e2e-imported', stepType: 'custom_llm', name: 'Imported step', systemPrompt: 'From a file.' });
  const file = (name: string, text: string) => ({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
  await stored(page, () => page.getByTestId('workflow-import').setInputFiles(file('m.json', JSON.stringify(changed))));
  await expect(stepCard(page, 'Imported step')).toBeVisible(soon);
  await expect(stepCard(page, 'Imported step')).toHaveAttribute('data-uuid', 'e2e-imported');
  await expect(stepCard(page, 'Imported step').getByTestId('step-prompt')).toHaveValue('From a file.');
  check();

  // A broken one is refused whole, naming the place in the file.
  changed.definition.steps[changed.definition.steps.length - 1].name = ' ';
  await page.getByTestId('workflow-import').setInputFiles(file('bad.json', JSON.stringify(changed)));
  await expect(page.getByTestId('workflow-problem')).toContainText('is required', soon);
  await page.getByTestId('workflow-import').setInputFiles(file('bad.json', '{not json'));
  await expect(page.getByTestId('workflow-problem')).toContainText('is not JSON', soon);
  await expect(stepCard(page, 'Imported step')).toBeVisible();

  // The first export puts it back as it was.
  await stored(page, () => page.getByTestId('workflow-import').setInputFiles(file('orig.json', original)));
  await expect(stepCard(page, 'Imported step')).toHaveCount(0, soon);
  await expect(page.getByTestId('workflow-problem')).toHaveCount(0);
  await page.context().close();
});
