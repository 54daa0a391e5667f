import { expect, type Page } from '@playwright/test';

export const TEACHER = { email: 'teacher@example.com', password: 'teacher-e2e-pass' };
export const ADMIN = { email: 'admin@example.com', password: 'admin-e2e-pass' };

/** Waits until the client has hydrated: clicks made before that are lost. */
export async function hydrated(page: Page) {
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1, { timeout: 15_000 });
}

/** Signs in through the login form, as a person would. */
export async function signIn(page: Page, who: { email: string; password: string }, path = '/login') {
  await page.goto(path);
  await hydrated(page);
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Fails the test on any console error or uncaught page error. */
export function failOnConsoleErrors(page: Page) {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  return () => expect(problems.map((p) => p.split('\n')[0]), 'console errors').toEqual([]);
}
