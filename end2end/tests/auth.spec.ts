import { expect, test } from '@playwright/test';
import { ADMIN, TEACHER, failOnConsoleErrors, hydrated, signIn } from './helpers';

test('a teacher signs in, sees their areas but not the admin ones, and signs out', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, TEACHER);
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId('welcome')).toHaveText('Welcome, Tess Teacher');
  await expect(page.getByTestId('current-user')).toContainText('teacher');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Lessons' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Live sessions' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Tool bindings' })).toHaveCount(0);

  // Client-side navigation marks the active area.
  await nav.getByRole('link', { name: 'Lessons' }).click();
  await expect(page).toHaveURL(/\/lessons$/);
  await expect(page.getByRole('heading', { name: 'Lessons' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Lessons' })).toHaveAttribute('aria-current', 'page');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto('/');
  await expect(page).toHaveURL(/\/login\?next=/);
  noErrors();
});

test('an admin signs in and sees tool bindings and the accounts list', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toHaveText('Welcome, Ada Admin');
  await expect(page.getByTestId('current-user')).toContainText('admin');
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tool bindings' })).toBeVisible();
  const accounts = page.getByTestId('accounts');
  await expect(accounts).toContainText('teacher@example.com');
  await expect(accounts).toContainText('admin@example.com');
  await page.getByRole('link', { name: 'Tool bindings' }).first().click();
  await expect(page.getByRole('heading', { name: 'Tool bindings' })).toBeVisible();
  noErrors();
});

test('a wrong password shows an error and starts no session', async ({ page, context }) => {
  await signIn(page, { email: TEACHER.email, password: 'not-the-password' });
  await expect(page.getByTestId('login-error')).toHaveText('The e-mail or password is incorrect.');
  await expect(page).toHaveURL(/\/login$/);
  const cookies = await context.cookies();
  expect(cookies.find((c) => c.name === 'sb_session')).toBeUndefined();
  await page.goto('/');
  await expect(page).toHaveURL(/\/login\?next=/);
});

test('the password can be revealed once the page is interactive', async ({ page }) => {
  await page.goto('/login');
  await hydrated(page);
  const password = page.getByLabel('Password', { exact: true });
  await password.fill('secret');
  await expect(password).toHaveAttribute('type', 'password');
  await page.getByTestId('reveal-password').click();
  await expect(password).toHaveAttribute('type', 'text');
  await expect(page.getByTestId('reveal-password')).toHaveText('Hide');
  await page.getByTestId('reveal-password').click();
  await expect(password).toHaveAttribute('type', 'password');
});

test('a visitor sent to login lands where they were going', async ({ page }) => {
  await page.goto('/sessions');
  await expect(page).toHaveURL(/\/login\?next=\/sessions$/);
  await signIn(page, TEACHER, page.url());
  await expect(page).toHaveURL(/\/sessions$/);
  await expect(page.getByRole('heading', { name: 'Live sessions' })).toBeVisible();
});

test('a teacher who opens the bindings address is told it is not for them', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  const response = await page.goto('/bindings');
  expect(response?.status()).toBe(403);
  await expect(page.getByTestId('forbidden')).toContainText('admin');
});
