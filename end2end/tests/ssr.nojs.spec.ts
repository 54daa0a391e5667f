import { expect, test } from '@playwright/test';
import { ADMIN, TEACHER } from './helpers';

// The same pages with JavaScript disabled: everything must arrive rendered.

test('the login form works as a plain HTML form', async ({ page }) => {
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await page.getByLabel('E-mail').fill(TEACHER.email);
  await page.getByLabel('Password', { exact: true }).fill(TEACHER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId('welcome')).toHaveText('Welcome, Tess Teacher');
  await expect(page.getByTestId('current-user')).toContainText('teacher');
});

test('signed-in pages render their content on the server', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('E-mail').fill(ADMIN.email);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('accounts')).toContainText('teacher@example.com');
  for (const [path, heading] of [
    ['/lessons', 'Lessons'],
    ['/bindings', 'Tool bindings'],
    ['/agents', 'Agents and vibes'],
    ['/sessions', 'Live sessions'],
  ]) {
    await page.goto(path);
    await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
  }
  await page.goto('/agents?vibe=todos');
  await expect(page.getByTestId('agent-matrix')).toContainText('Oliver');
  await page.goto('/agents?vibe=todos&agent=Oliver');
  await expect(page.getByTestId('agent-preview-prompt')).toContainText('You are Oliver');
  await expect(page.getByTestId('agent-tool-createTodo')).toBeChecked();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login$/);
});

test('the lesson list and editor arrive rendered, preview included', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('E-mail').fill(TEACHER.email);
  await page.getByLabel('Password', { exact: true }).fill(TEACHER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/lessons');
  await expect(page.getByTestId('lesson-list')).toContainText('Spanish café role-play');
  await page.getByRole('link', { name: 'Spanish café role-play' }).click();
  await expect(page.getByTestId('preview-prompt')).toContainText('You are Lucía');
  await expect(page.getByTestId('preview-prompt')).toContainText('## Available Functions');
  await expect(page.getByTestId('tool-footer')).toContainText('Tools enabled: 4/6');
  await expect(page.getByTestId('enable-mark_for_review')).toBeChecked();
  await expect(page.getByTestId('enable-mark_item_mastered')).not.toBeChecked();
});
