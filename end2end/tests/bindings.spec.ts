import { expect, test, type Page } from '@playwright/test';
import { ADMIN, failOnConsoleErrors, hydrated, signIn } from './helpers';

const cell = (page: Page, scope: string, tool: string) => page.locator(`[data-cell="${scope}/${tool}"]`);

async function openMatrix(page: Page) {
  await page.goto('/bindings');
  await hydrated(page);
  await expect(page.getByTestId('matrix')).toBeVisible();
}

// The tests share one server and database, so they run in this order and
// each starts from the version the previous one left.
test.describe.configure({ mode: 'serial' });

test('an admin moves check_balance from Banking Master to Disputes and it persists', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  await expect(page.getByTestId('change-summary')).toHaveText('No unsaved changes');
  await expect(cell(page, 'banking-master', 'check_balance')).toBeChecked();
  await expect(cell(page, 'disputes', 'check_balance')).not.toBeChecked();
  // Global tools show as implied in every workflow.
  await expect(cell(page, 'idv', 'get_server_time')).toBeChecked();
  await expect(cell(page, 'idv', 'get_server_time')).toBeDisabled();

  await cell(page, 'banking-master', 'check_balance').uncheck();
  await cell(page, 'disputes', 'check_balance').check();
  await expect(page.getByTestId('change-summary')).toHaveText('+1 / −1');
  await expect(page.locator('td.changed')).toHaveCount(2);
  await expect(page.locator('[data-workflow="disputes"]')).toContainText('check_balance');
  await expect(page.locator('[data-workflow="banking-master"]')).not.toContainText('check_balance');

  await page.getByTestId('save-bindings').click();
  await expect(page.getByTestId('bindings-status')).toContainText('Saved as version 2.');
  await expect(page.getByTestId('change-summary')).toHaveText('No unsaved changes');

  await page.reload();
  await hydrated(page);
  await expect(cell(page, 'banking-master', 'check_balance')).not.toBeChecked();
  await expect(cell(page, 'disputes', 'check_balance')).toBeChecked();
  await expect(page.getByTestId('bindings-version')).toHaveText('Version 2');
  await expect(page.getByTestId('history').locator('li').first()).toContainText(
    'added check_balance in disputes; removed check_balance in banking-master',
  );
  noErrors();
});

test('start_workflow cannot leave Global, and the page says why', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  const lockedCell = cell(page, 'global', 'start_workflow');
  await expect(lockedCell).toBeChecked();
  await expect(lockedCell).toBeDisabled();
  await expect(lockedCell).toHaveAttribute('title', /must stay global/);
  await expect(page.getByTestId('matrix').locator('..').locator('..')).toContainText('cannot leave Global');
});

test('two tabs: the second save is refused with the reload message', async ({ browser }) => {
  const context = await browser.newContext();
  const first = await context.newPage();
  await signIn(first, ADMIN);
  await expect(first.getByTestId('welcome')).toBeVisible();
  await openMatrix(first);
  const second = await context.newPage();
  await openMatrix(second);

  await cell(first, 'mortgage', 'mortgage_calculator').check();
  await first.getByTestId('save-bindings').click();
  await expect(first.getByTestId('bindings-status')).toContainText('Saved as version');

  await cell(second, 'idv', 'lookup_transaction').check();
  await second.getByTestId('save-bindings').click();
  await expect(second.getByTestId('bindings-status')).toContainText('The bindings were changed by Ada Admin at');
  await expect(second.getByTestId('bindings-status')).toContainText('— reload');
  await second.getByRole('link', { name: 'Reload' }).click();
  await hydrated(second);
  await expect(cell(second, 'mortgage', 'mortgage_calculator')).toBeChecked();
  await expect(cell(second, 'idv', 'lookup_transaction')).not.toBeChecked();
  await context.close();
});

test('an earlier version is restored from history as a new version', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  const history = page.getByTestId('history');
  const first = history.locator('li[data-version="1"]');
  await first.getByRole('button', { name: 'View diff' }).click();
  await expect(page.getByTestId('diff')).toContainText('+ check_balance in banking-master');
  await first.getByRole('button', { name: 'Restore' }).click();
  await expect(history.locator('li').first()).toContainText('Restored version 1');
  await expect(cell(page, 'banking-master', 'check_balance')).toBeChecked();
  await expect(cell(page, 'disputes', 'check_balance')).not.toBeChecked();
  await expect(cell(page, 'mortgage', 'mortgage_calculator')).not.toBeChecked();
});

test('a catalogue tool with a broken schema is refused next to the field', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  const catalogue = page.getByTestId('catalogue');
  await catalogue.getByLabel('Id (function name)').fill('loan quote');
  await catalogue.getByRole('button', { name: 'Save tool' }).click();
  await expect(catalogue).toContainText('must be 1-64 characters');
  await catalogue.getByLabel('Id (function name)').fill('loan_quote');
  await catalogue.locator('#tool-name').fill('Loan quote');
  await catalogue.getByLabel('Description (the model reads it)').fill('Quotes a personal loan.');
  await catalogue.locator('#tool-category').fill('lending');
  await catalogue.getByLabel('Parameters (JSON Schema)').fill('{"type": "object", "properties": {"amount": {"type": "money"}}}');
  await catalogue.getByRole('button', { name: 'Save tool' }).click();
  await expect(catalogue).toContainText('is not a valid JSON Schema');
  await catalogue.getByLabel('Parameters (JSON Schema)').fill('{"type": "object", "properties": {"amount": {"type": "number"}}}');
  await catalogue.getByRole('button', { name: 'Save tool' }).click();
  await expect(cell(page, 'global', 'loan_quote')).toBeVisible();
  await expect(page.getByTestId('matrix')).toContainText('lending');
});

test('leaving with unsaved changes asks first', async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  // No changes: no question.
  await nav.getByRole('link', { name: 'Lessons' }).click();
  await expect(page).toHaveURL(/\/lessons$/);
  await openMatrix(page);

  await cell(page, 'mortgage', 'mortgage_calculator').check();
  // Leaving is a page load, so the browser asks (its own wording).
  let asked = '';
  page.once('dialog', (dialog) => {
    asked = dialog.type();
    void dialog.dismiss();
  });
  await nav.getByRole('link', { name: 'Lessons' }).click();
  await expect(page).toHaveURL(/\/bindings$/);
  expect(asked).toBe('beforeunload');
  await expect(cell(page, 'mortgage', 'mortgage_calculator')).toBeChecked();

  page.once('dialog', (dialog) => void dialog.accept());
  await nav.getByRole('link', { name: 'Lessons' }).click();
  await expect(page).toHaveURL(/\/lessons$/);
});

test('a downloaded tool-bindings.json, edited and loaded back, is reviewed and saved', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await openMatrix(page);
  const version = Number((await page.getByTestId('bindings-version').textContent())?.replace('Version ', ''));

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download current version' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('tool-bindings.json');
  const stream = await download.createReadStream();
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  expect(doc.global).toContain('start_workflow');
  expect(doc.workflows.idv).not.toContain('lookup_transaction');

  // A file that is not a bindings document is refused with the reason,
  // and the matrix is left alone.
  const upload = page.getByTestId('upload-bindings');
  await upload.setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"global": 1}') });
  await expect(page.getByText(/Not a tool-bindings document/)).toBeVisible();
  await expect(page.getByTestId('change-summary')).toHaveText('No unsaved changes');

  // A bindings document naming a tool the catalogue lacks is flagged as
  // loaded, and Save stays off: the server would refuse it.
  const foreign = { ...doc, workflows: { ...doc.workflows, idv: [...doc.workflows.idv, 'nope_tool'] } };
  await upload.setInputFiles({
    name: 'foreign.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(foreign)),
  });
  await expect(page.getByTestId('bindings-problems')).toContainText('unknown tool "nope_tool" in workflows.idv');
  await expect(page.getByTestId('save-bindings')).toBeDisabled();

  // A file without labels (one from before them, or binding tools only)
  // leaves the labels as they are: the only change is the binding.
  doc.workflows.idv.push('lookup_transaction');
  const { labels: _labels, ...bare } = doc;
  await upload.setInputFiles({
    name: 'tool-bindings.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(bare)),
  });
  await expect(page.getByText(/Not a tool-bindings document/)).toHaveCount(0);
  await expect(page.getByTestId('bindings-problems')).toHaveCount(0);
  await expect(page.getByTestId('labels-kept')).toBeVisible();
  await expect(page.getByTestId('change-summary')).toHaveText('+1 / −0');
  await expect(cell(page, 'idv', 'lookup_transaction')).toBeChecked();
  await expect(page.locator('td.changed')).toHaveCount(1);

  await page.getByTestId('save-bindings').click();
  await expect(page.getByTestId('bindings-status')).toContainText(`Saved as version ${version + 1}.`);
  await page.reload();
  await hydrated(page);
  await expect(cell(page, 'idv', 'lookup_transaction')).toBeChecked();
  noErrors();
});
