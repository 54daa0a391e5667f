import { expect, test } from '@playwright/test';
import { ADMIN, TEACHER, failOnConsoleErrors, hydrated, signIn } from './helpers';

// Every page runs under a Content-Security-Policy that allows only the app's
// own files, the WebAssembly bundle and inline scripts carrying the
// response's nonce. A page that needed anything else would log a violation
// as a console error and (usually) fail to hydrate.

test('every admin page hydrates under the security policy without a violation', async ({ page }) => {
  const check = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);

  // A live session, so the session page has a stream to open.
  await page.getByTestId('api-keys').getByLabel('Key name').fill('csp check');
  await page.getByTestId('api-keys').getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('new-api-key').innerText()).trim();
  const opened = await page.request.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { workflowId: 'idv' },
  });
  expect(opened.status()).toBe(201);
  const { sessionId } = await opened.json();

  await page.goto('/lessons');
  await hydrated(page);
  const firstLesson = page.locator('a[href^="/lessons/"]').first();
  const lessonHref = await firstLesson.getAttribute('href');
  expect(lessonHref).toBeTruthy();

  for (const path of ['/', '/lessons', lessonHref!, '/bindings', '/agents', '/agents?vibe=todos', '/agents?vibe=todos&agent=Oliver', '/sessions', `/sessions/${sessionId}`]) {
    const response = await page.goto(path);
    const policy = response!.headers()['content-security-policy'];
    expect(policy, path).toContain("script-src 'self' 'nonce-");
    expect(policy, path).not.toContain('unsafe-inline');
    await hydrated(page);
  }
  // The session page's live stream connected under `connect-src 'self'`.
  await expect(page.getByTestId('connection')).toHaveText('live');
  check();
});

test("a script injected into a page does not run, and the browser says why", async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);
  const outcome = await page.evaluate(
    () =>
      new Promise<{ ran: boolean; directive: string }>((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) =>
          resolve({ ran: (window as any).injected === true, directive: e.effectiveDirective }),
        );
        const s = document.createElement('script');
        s.textContent = 'window.injected = true;';
        document.body.appendChild(s);
      }),
  );
  expect(outcome).toEqual({ ran: false, directive: 'script-src-elem' });
});
