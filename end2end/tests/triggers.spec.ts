import { expect, test } from '@playwright/test';
import { ADMIN, callTool, failOnConsoleErrors, hydrated, signIn } from './helpers';

// Start triggers as an admin sees them: "Start now" on a workflow's
// settings page opens a session, started by the admin, and the session
// page shows what started it and the session as it happens.

const soon = { timeout: 10_000 };

test('an admin starts a workflow by hand and watches the session it opened', async ({ page, request }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('current-user')).toBeVisible();
  await page.goto('/workflows/idv');
  await hydrated(page);
  await expect(page.getByTestId('workflow-connection')).toHaveAttribute('data-state', 'live', soon);

  await page.getByTestId('start-workflow').click();
  await page.waitForURL(/\/sessions\/s[0-9a-z]+$/, soon);
  const id = page.url().split('/').pop()!;
  await hydrated(page);
  await expect(page.getByTestId('started-by')).toHaveText(/^Started by: manual — by /);
  await expect(page.getByTestId('started-by')).toHaveAttribute('data-trigger', 'manual');
  await expect(page.getByTestId('workflow-badge')).toBeVisible();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', soon);

  // The session is a real one: its agent's call reaches the page live.
  const started = await page.request.post('/api/workflows/idv/start', {
    headers: { Origin: new URL(page.url()).origin },
  });
  expect(started.status()).toBe(201);
  const body = await started.json();
  expect(body.sessionId).not.toBe(id);
  await page.goto(`/sessions/${body.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', soon);
  await callTool(request, body, 'get_server_time', {});
  await expect(page.getByTestId('timeline').locator('li').first()).toContainText('get_server_time', soon);
  check();
});
