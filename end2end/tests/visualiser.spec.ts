import { expect, test } from '@playwright/test';
import { apiKey, callTool, failOnConsoleErrors, hydrated, openSession } from './helpers';

// The visualiser draws the session's own definition: a tutor session shows
// its lesson's title and tasks as checks (never the banking demo's), and a
// task turns true while the teacher watches once the tutor records it.

test("a tutor session's page shows its lesson's tasks as checks, live, and no banking checks", async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  const key = await apiKey(page, 'Visualiser tutor');
  const title = `Café visit ${Date.now()}`;
  await page.goto('/lessons');
  await hydrated(page);
  await page.getByLabel('New lesson title').fill(title);
  await page.getByRole('button', { name: 'New lesson' }).click();
  await expect(page).toHaveURL(/\/lessons\/\d+$/);
  await hydrated(page);
  const lessonId = Number(page.url().match(/\/lessons\/(\d+)$/)![1]);
  for (const task of ['Greet the waiter', 'Order a drink']) {
    await page.getByTestId('new-task').fill(task);
    await page.getByTestId('new-task').press('Enter');
  }
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();
  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');

  const opened = await page.request.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { lessonId, student: 'Ana' },
  });
  expect(opened.status()).toBe(201);
  const s = (await opened.json()) as { sessionId: string; sessionToken: string };

  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByTestId('workflow-badge')).toHaveText(title);
  const checks = page.getByTestId('checks');
  const greet = checks.locator('[data-check="task:greet-the-waiter"]');
  const order = checks.locator('[data-check="task:order-a-drink"]');
  await expect(greet.locator('.check-label')).toHaveText('Greet the waiter');
  await expect(order.locator('.check-label')).toHaveText('Order a drink');
  await expect(greet).toHaveClass(/check-unknown/);
  await expect(checks.locator('li')).toHaveCount(2);
  await expect(checks).not.toContainText('Identity verified');
  await expect(checks).not.toContainText('Account found');
  await expect(page.getByTestId('lesson-progress')).toHaveText('Tasks done: 0 of 2 · Mistakes logged: 0');

  await callTool(page.request, s, 'mark_task_complete', { taskId: 'order-a-drink', evidence: 'Un café, por favor' });
  await expect(order).toHaveClass(/check-true/);
  await expect(order.locator('.visually-hidden')).toHaveText('done');
  await expect(greet).toHaveClass(/check-unknown/);
  await expect(page.getByTestId('lesson-progress')).toHaveText('Tasks done: 1 of 2 · Mistakes logged: 0');
  await callTool(page.request, s, 'mark_for_review', {
    errorType: 'grammar', studentSaid: 'yo soy ir', correctForm: 'yo voy', severity: 3,
  });
  await expect(page.getByTestId('lesson-progress')).toHaveText('Tasks done: 1 of 2 · Mistakes logged: 1');
  noErrors();
});

test('a workflow session whose tools declare no check says so, under its workflow’s name', async ({ page }) => {
  const key = await apiKey(page, 'Visualiser mortgages');
  const s = await openSession(page.request, key, 'mortgage');
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('workflow-badge')).toHaveText('Mortgages');
  await expect(page.getByTestId('checks-none')).toHaveText('No tool of this workflow requires or sets a check.');
  await expect(page.getByTestId('checks').locator('li')).toHaveCount(0);
});
