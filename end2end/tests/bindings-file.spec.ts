import { expect, test } from '@playwright/test';
import { ADMIN, failOnConsoleErrors, hydrated, signIn } from './helpers';

// Runs in its own project against a server seeded from
// SWITCHBOARD_BINDINGS_FILE=fixtures/tool-bindings.json (playwright.config.ts),
// so the bindings it changes are seen by no other spec.

const FILE = 'fixtures/tool-bindings.json';

test('labels are edited with the bindings; the file then differs, is reviewed and imported', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/bindings');
  await hydrated(page);
  await expect(page.getByTestId('matrix')).toBeVisible();
  await expect(page.getByTestId('history').locator('li').first()).toContainText(`Loaded from ${FILE}`);
  await expect(page.getByTestId('bindings-file')).toHaveCount(0);

  // Labels: a problem shows next to its field; good ones are a change.
  const labels = page.getByTestId('labels');
  const ended = labels.getByLabel('Description of step ended');
  await expect(ended).toHaveValue('Call ended');
  await ended.fill('Caller hung up');
  const found = labels.getByLabel('Label of check account_found');
  await found.fill('x'.repeat(81));
  await expect(labels.locator('[data-label-check="account_found"]')).toContainText('must be 1-80 characters');
  await found.fill('Account located');
  await expect(labels.locator('[data-label-check="account_found"] .field-error')).toHaveCount(0);
  await expect(page.getByTestId('change-summary')).toHaveText('+0 / −0 · 2 labels');
  await page.getByTestId('save-bindings').click();
  await expect(page.getByTestId('bindings-status')).toContainText('Saved as version 2.');

  // The file now differs from the bindings in force.
  const notice = page.getByTestId('bindings-file');
  await expect(notice).toHaveAttribute('data-state', 'differs');
  await expect(notice).toContainText(FILE);

  // Watchers read the new label.
  await page.goto('/sessions');
  await hydrated(page);
  await page.getByRole('button', { name: 'New demo session' }).click();
  await expect(page).toHaveURL(/\/sessions\/s[a-z0-9]+$/);
  await hydrated(page);
  await expect(page.locator('[data-check="account_found"] .check-label')).toHaveText('Account located');

  // Review what importing the file would change, then import it.
  await page.goto('/bindings');
  await hydrated(page);
  await notice.getByRole('button', { name: 'Review differences' }).click();
  const diff = page.getByTestId('file-diff');
  await expect(diff).toContainText('~ label of check account_found');
  await expect(diff).toContainText('~ label of step ended');
  await notice.getByTestId('import-bindings-file').click();
  await expect(page.getByTestId('bindings-version')).toHaveText('Version 3');
  await expect(notice).toHaveCount(0);
  await expect(page.getByTestId('history').locator('li').first()).toContainText(
    `Imported from ${FILE}: labels changed: check account_found, step ended`,
  );
  await expect(labels.getByLabel('Description of step ended')).toHaveValue('Call ended');
  noErrors();
});
