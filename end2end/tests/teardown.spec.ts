import { expect, test, type Page, type Route } from '@playwright/test';
import { ADMIN, TEACHER, failOnConsoleErrors, hydrated, signIn } from './helpers';

/**
 * People leave pages before they have arrived: they sign out, or click the
 * next link. These specs hold a page's request and the request that takes the
 * user elsewhere, then answer both at once, so the page lands in the same
 * instant it is given up. (When pages were rendered in the browser, that
 * instant once panicked the client with "tried to access a reactive value …
 * already disposed" and left the tab dead.) A user must see only the page
 * they went to, with no error.
 */

/** Holds every request (a page, a form post, a call) whose path is one of `paths` until `release` is called. */
function hold(page: Page, paths: string[]) {
  const held = new Map<string, Route>();
  let arrived: () => void;
  const all = new Promise<void>((resolve) => (arrived = resolve));
  const handler = async (route: Route) => {
    const path = new URL(route.request().url()).pathname;
    if (!paths.includes(path) || held.has(path)) return route.continue();
    held.set(path, route);
    if (held.size === paths.length) arrived();
  };
  return {
    async start() {
      await page.route('**/*', handler);
    },
    /** Waits until every held request was made, then delivers the real answers together. */
    async release() {
      await all;
      // Asked of the server in the order given (the data before the sign-out
      // that would make it a 401), answered to the page all at once.
      // `route.fetch` does not send the browser's cookies by itself.
      const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const answers = [];
      for (const path of paths) {
        const route = held.get(path)!;
        // A redirect (signing out leads to the login page) goes to the
        // browser as it is, so it follows it itself.
        answers.push([route, await route.fetch({ headers: { ...route.request().headers(), cookie }, maxRedirects: 0 })] as const);
      }
      // A request the page already gave up on (it was torn down first) is
      // aborted by the browser; that is a legitimate outcome, not a failure.
      await Promise.all(answers.map(([route, response]) => route.fulfill({ response }).catch(() => undefined)));
      // Only now: unrouting continues whatever is still held, sending it again.
      await page.unroute('**/*', handler);
    },
  };
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

/**
 * Clicks `first`, then `second` once the request `first` starts is on its
 * way, as a person's two quick clicks: with the mouse, since Playwright's
 * element actions wait for a navigation under way to finish, and these specs
 * hold it on purpose.
 */
async function clickTwice(page: Page, first: string, second: string, path: string) {
  const at = async (selector: string) => {
    const box = (await page.locator(selector).boundingBox())!;
    return [box.x + box.width / 2, box.y + box.height / 2] as const;
  };
  const [a, b] = [await at(first), await at(second)];
  const asked = page.waitForRequest((r) => new URL(r.url()).pathname === path);
  await page.mouse.click(...a);
  await asked;
  await page.mouse.click(...b);
}

for (const { area, path, who } of [
  { area: 'Lessons', path: '/lessons', who: TEACHER },
  { area: 'Live sessions', path: '/sessions', who: TEACHER },
  { area: 'Tool bindings', path: '/bindings', who: ADMIN },
]) {
  test(`signing out while ${area} is still loading goes to the login page without errors`, async ({ page }) => {
    const noErrors = failOnConsoleErrors(page);
    await signIn(page, who);
    await expect(page.getByTestId('welcome')).toBeVisible();
    await hydrated(page);
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        await signIn(page, who);
        await expect(page.getByTestId('welcome')).toBeVisible();
      }
      const gate = hold(page, [path, '/rpc/logout']);
      await gate.start();
      await clickTwice(page, `nav a[href="${path}"]`, 'form[action="/rpc/logout"] button[type=submit]', path);
      await gate.release();
      await expect(page).toHaveURL(/\/login$/);
      await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
    }
    noErrors();
  });

  test(`moving on while ${area} is still loading shows the next page without errors`, async ({ page }) => {
    const noErrors = failOnConsoleErrors(page);
    await signIn(page, who);
    await expect(page.getByTestId('welcome')).toBeVisible();
    await hydrated(page);
    for (let round = 0; round < 3; round++) {
      const gate = hold(page, [path]);
      await gate.start();
      // The next page is another one: a link to the page already shown
      // while another is on its way is not followed by the browser.
      await clickTwice(page, `nav a[href="${path}"]`, 'nav a[href="/playground"]', path);
      await gate.release();
      await expect(page).toHaveURL(/\/playground$/);
      await expect(page.getByRole('heading', { name: 'Plugin playground' })).toBeVisible();
    }
    // The page still works afterwards: it navigates and renders its data.
    await nav(page).getByRole('link', { name: area }).click();
    await expect(page.getByRole('heading', { name: area, exact: true })).toBeVisible();
    noErrors();
  });
}

test('leaving the lesson editor before its exact token count is due raises no errors', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/lessons');
  await hydrated(page);
  const title = `Left in a hurry ${Date.now()}`;
  await page.getByLabel('New lesson title').fill(title);
  await page.getByRole('button', { name: 'New lesson' }).click();
  await expect(page).toHaveURL(/\/lessons\/\d+$/);
  for (let round = 0; round < 3; round++) {
    // The editor asks the server for an exact count 600 ms after the prompt
    // last changed; leave well before that, then wait past it.
    await expect(page.getByTestId('preview')).toBeVisible();
    await page.getByRole('link', { name: '← Lessons' }).click();
    await expect(page.getByTestId('lesson-list')).toBeVisible();
    await page.waitForTimeout(900);
    await page.getByTestId('lesson-list').getByRole('link', { name: title }).click();
  }
  await expect(page.getByTestId('exact-tokens')).toHaveText(/^\d+$/, { timeout: 10_000 });
  noErrors();
});
