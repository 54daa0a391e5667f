import { expect, test } from '@playwright/test';
import { ADMIN, failOnConsoleErrors, hydrated, signIn } from './helpers';

// An agent backend that executes its own tools: the watcher sees the call
// wait for its result, then the step and check the result's effects set,
// then a step the backend sets itself.

test('a watcher sees a backend-reported result move the step and check', async ({ page }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);
  const panel = page.getByTestId('api-keys');
  await panel.getByLabel('Key name').fill('Own-tools backend');
  await panel.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('new-api-key').innerText()).trim();

  const request = page.request;
  const opened = await request.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { workflowId: 'idv', runBuiltins: false },
  });
  expect(opened.status()).toBe(201);
  const s = (await opened.json()) as { sessionId: string; sessionToken: string };
  const auth = { Authorization: `Bearer ${s.sessionToken}` };

  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveText('live');
  const identity = page.locator('[data-check="identity_verified"]');
  await expect(identity).toHaveClass(/check-unknown/);

  const called = await request.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: auth,
    data: {
      name: 'perform_idv_check',
      arguments: { accountNumber: '12345678', sortCode: '12-34-56', dateOfBirth: '1985-04-12' },
    },
  });
  const call = await called.json();
  expect(call.status).toBe('awaiting');
  const row = page.getByTestId('timeline').locator(`li[data-call="${call.callId}"]`);
  await expect(row.getByTestId('call-status')).toHaveText('awaiting result');
  await expect(page.getByTestId('step')).toHaveAttribute('data-step', 'started');

  const reported = await request.post(`/api/sessions/${s.sessionId}/tool-calls/${call.callId}/result`, {
    headers: auth,
    data: { ok: true, result: { verified: true, reference: 'KYC-77' } },
  });
  expect(reported.status()).toBe(200);
  await expect(row).toHaveAttribute('data-status', 'done');
  await expect(row).toContainText('KYC-77');
  await expect(identity).toHaveClass(/check-true/);
  await expect(page.getByTestId('step')).toHaveAttribute('data-step', 'identity_verified');

  const patched = await request.patch(`/api/sessions/${s.sessionId}/state`, {
    headers: auth,
    data: { activeStep: 'reading_terms', checks: { terms_read: true } },
  });
  expect(patched.status()).toBe(200);
  await expect(page.getByTestId('step')).toHaveAttribute('data-step', 'reading_terms');
  await expect(page.locator('[data-check="terms_read"]')).toHaveClass(/check-true/);
  check();
});
