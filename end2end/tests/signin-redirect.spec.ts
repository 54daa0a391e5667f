import { expect, test } from '@playwright/test';
import { ADMIN, TEACHER, signIn } from './helpers';

// Signed out, every page that needs a sign-in lands on the sign-in page
// and, once signed in, comes back to where the visitor was going. The list
// is the page table (`src/domain/pages.rs`, `PAGES`): every page but
// `/login`, with an address for each route parameter, and who may see it
// (a teacher any page needing only a sign-in, the admin the admin pages).
// The HTTP test `pages::every_page_of_the_table_is_guarded_by_its_role`
// walks the table itself; this checks the round trip in a browser.
//
// Each test starts in a fresh context (signed out) and changes nothing, so
// it does not depend on other specs or their order.
const GUARDED: { path: string; who: { email: string; password: string } }[] = [
  { path: '/', who: TEACHER },
  { path: '/lessons', who: TEACHER },
  { path: '/lessons/1', who: TEACHER },
  { path: '/lessons/1/sessions', who: TEACHER },
  { path: '/sessions', who: TEACHER },
  { path: '/sessions/no-such-session', who: TEACHER },
  { path: '/playground', who: TEACHER },
  { path: '/agents', who: ADMIN },
  { path: '/bindings', who: ADMIN },
  { path: '/mcp-servers', who: ADMIN },
  { path: '/workflows', who: ADMIN },
  { path: '/workflows/idv', who: ADMIN },
];

/** `text` with the characters a regular expression treats specially escaped. */
function literal(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

for (const { path, who } of GUARDED) {
  test(`signed out, ${path} goes to sign in and comes back after it`, async ({ page }) => {
    const response = await page.goto(path);
    expect(response?.status()).toBe(200);
    await expect(page).toHaveURL(new RegExp(`/login\\?next=${literal(path)}$`));
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();

    await signIn(page, who, page.url());
    await expect(page).toHaveURL(new RegExp(`^[^?]*${literal(path)}$`));
    await expect(page.getByRole('button', { name: 'Sign in' })).toHaveCount(0);
    await expect(page.getByTestId('forbidden')).toHaveCount(0);
  });
}
