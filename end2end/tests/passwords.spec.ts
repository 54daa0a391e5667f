import { expect, test, type Page } from '@playwright/test';
import { ADMIN, TEACHER, failOnConsoleErrors, hydrated, signIn } from './helpers';

/** As the signed-in admin, sets the teacher's password on the start page. */
async function setTeacherPassword(page: Page, password: string) {
  const panel = page.getByTestId('accounts-panel');
  await panel.getByLabel('Account').selectOption({ label: TEACHER.email });
  await panel.getByLabel('New password').fill(password);
  await panel.getByRole('button', { name: 'Set password' }).click();
  await expect(panel.getByTestId('password-status')).toHaveText(
    "Password set. That account's other sign-ins have ended.",
  );
}

test("an admin sets a teacher's password on the start page; the teacher signs in with it", async ({ browser }) => {
  const admin = await browser.newPage();
  const clean = failOnConsoleErrors(admin);
  await signIn(admin, ADMIN);
  await expect(admin.getByTestId('welcome')).toBeVisible();
  await hydrated(admin);
  try {
    await setTeacherPassword(admin, 'a fresh e2e password');

    const teacher = await browser.newPage();
    await signIn(teacher, { email: TEACHER.email, password: TEACHER.password });
    await expect(teacher.getByTestId('login-error')).toHaveText('The e-mail or password is incorrect.');
    await signIn(teacher, { email: TEACHER.email, password: 'a fresh e2e password' });
    await expect(teacher.getByTestId('welcome')).toHaveText('Welcome, Tess Teacher');
    await teacher.close();

    // Too short: the browser's own check stops the form; the server's rule
    // is the same (HTTP tests cover its message).
    const panel = admin.getByTestId('accounts-panel');
    await expect(panel.getByLabel('New password')).toHaveAttribute('minlength', '10');
  } finally {
    // Other specs sign in as the teacher with the usual password.
    await setTeacherPassword(admin, TEACHER.password);
  }
  clean();
});
