import { expect, test } from '@playwright/test';
import { apiKey, callTool, failOnConsoleErrors, hydrated, openSession } from './helpers';

// What a watcher sees on the sessions pages: labels instead of keys.

const idv = { accountNumber: '12345678', sortCode: '12-34-56', dateOfBirth: '1985-04-12' };

test('checks and steps read as their labels', async ({ page, request }) => {
  const key = await apiKey(page, 'Labels agent');
  const s = await openSession(request, key, 'idv');
  await callTool(request, s, 'perform_idv_check', idv);
  const noErrors = failOnConsoleErrors(page);
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('step')).toHaveText("Caller's identity verified");
  const identity = page.locator('[data-check="identity_verified"]');
  await expect(identity).toHaveClass(/check-true/);
  await expect(identity.locator('.check-label')).toHaveText('Identity verified');
  await expect(identity).toContainText('banking tools need it');
  await expect(page.locator('[data-check="account_found"] .check-label')).toHaveText('Account found');
  noErrors();
});
