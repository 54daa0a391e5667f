import { expect, test } from '@playwright/test';
import { ADMIN, TEACHER, apiKey, callTool, failOnConsoleErrors, hydrated, openSession, signIn } from './helpers';

// What a watcher and an operator see on the sessions pages: labels instead
// of keys, icons that need no emoji font, local times, less motion when
// asked, the admin's End session, and the list's filter.

const idv = { accountNumber: '12345678', sortCode: '12-34-56', dateOfBirth: '1985-04-12' };

test('checks and steps read as their labels, with drawn icons and no emoji', async ({ page, request }) => {
  const key = await apiKey(page, 'Labels agent');
  const s = await openSession(request, key, 'idv');
  await callTool(request, s, 'perform_idv_check', idv);
  const noErrors = failOnConsoleErrors(page);
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('step')).toHaveText("Caller's identity verified");
  const identity = page.locator('[data-check="identity_verified"]');
  await expect(identity).toHaveClass(/check-true/);
  await expect(identity.locator('.check-label')).toHaveText('Identity verified');
  await expect(identity).toContainText('banking tools need it');
  await expect(identity.locator('.status-icon.passed svg')).toBeVisible();
  await expect(identity.locator('.visually-hidden')).toHaveText('passed');
  const account = page.locator('[data-check="account_found"]');
  await expect(account.locator('.status-icon.unknown svg')).toBeVisible();
  await expect(account.locator('.visually-hidden')).toHaveText('not yet known');
  await expect(page.getByTestId('timeline').locator('.badge.ok .status-icon.passed')).toHaveCount(1);
  const text = await page.locator('body').innerText();
  expect(text).not.toMatch(/\p{Emoji_Presentation}/u);
  noErrors();
});

test.describe('a watcher in Kolkata (UTC+05:30)', () => {
  test.use({ timezoneId: 'Asia/Kolkata' });

  test('sees times in local time once hydrated, and UTC from the server', async ({ page, request }) => {
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (['error', 'warning'].includes(msg.type())) problems.push(msg.text());
    });
    const key = await apiKey(page, 'Clock agent');
    const s = await openSession(request, key, 'idv');
    await callTool(request, s, 'get_server_time', {});

    // The server cannot know the zone: it renders UTC, and says so.
    const html = await (await page.request.get(`/sessions/${s.sessionId}`)).text();
    expect(html).toMatch(/<time[^>]*data-zone="utc"[^>]*>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

    const local = (iso: string, seconds: boolean) =>
      new Date(new Date(iso).getTime() + 330 * 60_000)
        .toISOString()
        .replace('T', ' ')
        .slice(0, seconds ? 19 : 16);
    await page.goto(`/sessions/${s.sessionId}`);
    await hydrated(page);
    const call = page.getByTestId('timeline').locator('time').first();
    await expect(call).toHaveAttribute('data-zone', 'local');
    await expect(call).toHaveText(local((await call.getAttribute('datetime'))!, true));

    await page.goto('/sessions');
    await hydrated(page);
    const row = page.locator(`[data-session="${s.sessionId}"] time`);
    await expect(row).toHaveAttribute('data-zone', 'local');
    await expect(row).toHaveText(local((await row.getAttribute('datetime'))!, false));
    expect(problems.filter((p) => /hydrat|mismatch/i.test(p))).toEqual([]);
  });
});

test('a watcher who asked for less motion gets no pulse', async ({ page, request }) => {
  const key = await apiKey(page, 'Motion agent');
  for (const reduce of [false, true]) {
    await page.emulateMedia({ reducedMotion: reduce ? 'reduce' : 'no-preference' });
    const s = await openSession(request, key, 'idv');
    await page.goto(`/sessions/${s.sessionId}`);
    await hydrated(page);
    await expect(page.getByTestId('connection')).toHaveText('live');
    await callTool(request, s, 'perform_idv_check', idv);
    const identity = page.locator('[data-check="identity_verified"]');
    await expect(identity).toHaveClass(/pulse/);
    const animation = await identity.evaluate((el) => getComputedStyle(el).animationName);
    expect(animation, `reduced motion ${reduce}`).toBe(reduce ? 'none' : 'pulse');
  }
});

test('an admin ends a session after confirming; a teacher gets no button', async ({ page, request, browser }) => {
  // The teacher's own key: the session is the teacher's to watch.
  const teacher = await browser.newPage();
  const key = await apiKey(teacher, 'End agent', TEACHER);
  const s = await openSession(request, key, 'idv');
  await teacher.goto(`/sessions/${s.sessionId}`);
  await hydrated(teacher);
  await expect(teacher.getByTestId('connection')).toHaveText('live');
  await expect(teacher.getByTestId('end-session')).toHaveCount(0);

  const noErrors = failOnConsoleErrors(page);
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await page.getByTestId('end-session').click();
  const confirm = page.getByTestId('end-session-confirm');
  await expect(confirm).toContainText('End this session?');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(confirm).toHaveCount(0);
  await expect(page.getByTestId('ended')).toHaveCount(0);

  await page.getByTestId('end-session').click();
  await confirm.getByRole('button', { name: 'Yes, end it' }).click();
  await expect(page.getByTestId('ended')).toBeVisible();
  await expect(page.getByTestId('end-reason')).toHaveText('ended by admin');
  await expect(page.getByTestId('end-session')).toHaveCount(0);
  // The teacher watching is told by the stream, which then has nothing
  // more to say: closed, and not retried, then or after a reload.
  await expect(teacher.getByTestId('ended')).toBeVisible();
  await expect(teacher.getByTestId('connection')).toHaveText('closed');
  await expect(teacher.getByTestId('end-reason')).toHaveText('ended by admin');
  await teacher.reload();
  await hydrated(teacher);
  await expect(teacher.getByTestId('connection')).toHaveText('closed');
  // Why, from the snapshot this time.
  await expect(teacher.getByTestId('end-reason')).toHaveText('ended by admin');
  const reopened: string[] = [];
  teacher.on('request', (r) => { if (r.url().includes('/events')) reopened.push(r.url()); });
  await teacher.waitForTimeout(3_000);
  expect(reopened).toEqual([]);
  await expect(teacher.getByTestId('connection')).toHaveText('closed');
  const res = await request.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: { Authorization: `Bearer ${s.sessionToken}` },
    data: { name: 'get_server_time', arguments: {} },
  });
  expect(res.status()).toBe(409);
  await teacher.close();
  noErrors();
});

test('the sessions list filters by words and status, and keeps updating live', async ({ page, request }) => {
  const key = await apiKey(page, 'Filter agent');
  const disputes = await openSession(request, key, 'disputes');
  const mortgage = await openSession(request, key, 'mortgage');
  const ended = await openSession(request, key, 'idv');
  await request.post(`/api/sessions/${ended.sessionId}/end`, {
    headers: { Authorization: `Bearer ${ended.sessionToken}` },
  });
  await page.goto('/sessions');
  await hydrated(page);
  await expect(page.getByTestId('list-connection')).toHaveText('live');
  const row = (s: { sessionId: string }) => page.locator(`[data-session="${s.sessionId}"]`);
  const rows = page.getByTestId('session-list').locator('tbody tr');
  const search = page.getByRole('searchbox', { name: 'Search' });
  const status = page.getByRole('combobox', { name: 'Status' });

  // By id, by workflow name, by step description.
  await search.fill(mortgage.sessionId.toUpperCase());
  await expect(rows).toHaveCount(1);
  await expect(row(mortgage)).toContainText('Mortgages');
  await search.fill('mortgages conversation started');
  await expect(row(mortgage)).toBeVisible();
  await expect(row(disputes)).toHaveCount(0);
  await search.fill('no session is called this');
  await expect(rows).toHaveCount(0);
  await expect(page.getByTestId('no-match')).toBeVisible();

  // By status.
  await search.fill('');
  await status.selectOption('ended');
  await expect(row(ended)).toBeVisible();
  await expect(row(disputes)).toHaveCount(0);
  await expect(page.locator('[data-ended="false"]')).toHaveCount(0);
  await status.selectOption('open');
  await expect(row(disputes)).toBeVisible();
  await expect(row(ended)).toHaveCount(0);

  // Live: a new session that passes shows up, one that does not stays out,
  // and the filter is left as typed.
  await search.fill('disputes');
  const count = page.getByTestId('session-count');
  const before = await count.innerText();
  const other = await openSession(request, key, 'idv');
  await expect(count).not.toHaveText(before);
  await expect(row(other)).toHaveCount(0);
  const fresh = await openSession(request, key, 'disputes');
  await expect(row(fresh)).toBeVisible();
  await expect(search).toHaveValue('disputes');
  await expect(status).toHaveValue('open');
});

test('a stream refused outright (a proxy answering 503 while an instance restarts) is opened again and the page catches up', async ({ page, request }) => {
  const key = await apiKey(page, 'Refused agent');
  const s = await openSession(request, key, 'idv');
  // The browser's EventSource gives up for good on an answer that is not
  // an event stream; the page must open it again by itself.
  let refused = 0;
  await page.route(`**/api/sessions/${s.sessionId}/events`, async (route) => {
    if (refused < 2) {
      refused += 1;
      await route.fulfill({ status: 503, contentType: 'text/plain', body: 'no server is available' });
    } else {
      await route.fallback();
    }
  });
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  // A call made while the page had no stream is in what it reads on reconnecting.
  await callTool(request, s, 'perform_idv_check', idv);
  await expect(page.getByTestId('connection')).toHaveText('live', { timeout: 15_000 });
  expect(refused).toBe(2);
  await expect(page.locator('[data-check="identity_verified"]')).toHaveClass(/check-true/);
  // And the stream it opened is the live one.
  await callTool(request, s, 'get_server_time', {});
  await expect(page.getByTestId('timeline').locator(':scope > li')).toHaveCount(2);
});
