import { expect, type APIRequestContext, type Browser, type Page } from '@playwright/test';

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

/** Creates an API key through `who`'s start page (the admin's unless
 * said) and returns it; the sessions it opens are `who`'s. */
export async function apiKey(page: Page, name: string, who = ADMIN) {
  await signIn(page, who);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);
  const panel = page.getByTestId('api-keys');
  await panel.getByLabel('Key name').fill(name);
  await panel.getByRole('button', { name: 'Create key' }).click();
  return (await page.getByTestId('new-api-key').innerText()).trim();
}

/** Opens a session in `workflowId` as an agent backend would. */
export async function openSession(request: APIRequestContext, key: string, workflowId: string) {
  const res = await request.post('/api/sessions', { headers: { Authorization: `Bearer ${key}` }, data: { workflowId } });
  expect(res.status()).toBe(201);
  return (await res.json()) as { sessionId: string; sessionToken: string };
}

/** Calls a tool in session `s` as its agent would; expects 200. */
export async function callTool(
  request: APIRequestContext,
  s: { sessionId: string; sessionToken: string },
  name: string,
  args: object,
) {
  const res = await request.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: { Authorization: `Bearer ${s.sessionToken}` },
    data: { name, arguments: args },
  });
  expect(res.status()).toBe(200);
  return res.json();
}

/** Creates a lesson called `title` from the lessons page, as a teacher
 * would; returns its id once its editor has hydrated. */
export async function newLesson(page: Page, title: string) {
  await page.goto('/lessons');
  await hydrated(page);
  await page.getByLabel('New lesson title').fill(title);
  await page.getByRole('button', { name: 'New lesson' }).click();
  await expect(page).toHaveURL(/\/lessons\/\d+$/);
  await hydrated(page);
  return Number(page.url().match(/\/lessons\/(\d+)$/)![1]);
}

/** An API key `who` makes in a browser context of their own (so the
 * calling page stays signed in as it was); the sessions it opens are
 * `who`'s. */
export async function keyIn(browser: Browser, name: string, who = ADMIN) {
  const context = await browser.newContext();
  const key = await apiKey(await context.newPage(), name, who);
  await context.close();
  return key;
}
