import { expect, test, type Page } from '@playwright/test';
import { TEACHER, failOnConsoleErrors, hydrated, signIn } from './helpers';

async function newLesson(page: Page, title: string) {
  await page.goto('/lessons');
  await hydrated(page);
  await page.getByLabel('New lesson title').fill(title);
  await page.getByRole('button', { name: 'New lesson' }).click();
  await expect(page).toHaveURL(/\/lessons\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: title })).toBeVisible();
  await hydrated(page);
}

const footer = (page: Page) => page.getByTestId('tool-footer');
const estimate = async (page: Page) => Number((await footer(page).innerText()).match(/~(\d+)/)![1]);

test('a teacher configures a lesson’s tools and it all persists', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Playwright café');
  await expect(footer(page)).toContainText('Tools enabled: 4/6');

  // Preset.
  await page.getByTestId('preset').selectOption('review_lesson');
  for (const id of ['mark_for_review', 'mark_item_mastered', 'play_student_audio', 'show_session_summary']) {
    await expect(page.getByTestId(`enable-${id}`)).toBeChecked();
  }
  await expect(page.getByTestId('enable-update_user_profile')).not.toBeChecked();
  await expect(page.getByTestId('tool-update_user_profile')).toHaveClass(/disabled/);

  // Profile Learning: keyword with chips (still editable while disabled), then enabled.
  await page.getByTestId('trigger-update_user_profile').selectOption('keyword');
  await expect(page.getByTestId('error-update_user_profile')).toContainText('needs at least one keyword');
  await expect(page.getByTestId('save-lesson')).toBeDisabled();
  const chipInput = page.getByTestId('keyword-input-update_user_profile');
  await chipInput.fill('hobby');
  await chipInput.press('Enter');
  await chipInput.fill('family');
  await chipInput.press('Enter');
  const chips = page.getByTestId('chips-update_user_profile');
  await expect(chips.locator('.chip')).toHaveText(['hobby×', 'family×']);
  await expect(page.getByTestId('error-update_user_profile')).toHaveCount(0);
  await page.getByTestId('enable-update_user_profile').check();
  await expect(page.getByTestId('preview-prompt')).toContainText(
    '**update_user_profile**: Call when the student mentions these topics: hobby, family.',
  );

  // A task switches Task Completion on automatically, with a notice.
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  const before = await estimate(page);
  await page.getByTestId('new-task').fill('Order a drink');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('auto-notice')).toHaveText('Task tracking enabled automatically');
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();
  await expect(footer(page)).toContainText('Tools enabled: 6/6');
  expect(await estimate(page)).toBeGreaterThan(before);
  const preview = page.getByTestId('preview-prompt');
  await expect(preview).toContainText('## Lesson Objectives');
  await expect(preview).toContainText('- order-a-drink: Order a drink');
  await expect(preview).toContainText('**mark_task_complete**');
  await expect(page.getByTestId('exact-tokens')).toHaveText(/^\d+$/, { timeout: 10_000 });

  // Declarations follow the chosen provider format.
  await page.getByTestId('declaration-format').selectOption('anthropic');
  await expect(page.getByTestId('preview-declarations')).toContainText('"input_schema"');
  await page.getByTestId('declaration-format').selectOption('openai');
  await expect(page.getByTestId('preview-declarations')).toContainText('"type": "function"');

  // Custom instructions show up in the tool's line as they are typed.
  await page.getByTestId('instructions-mark_for_review').fill('Focus on verb endings.');
  await expect(preview).toContainText('Do not interrupt the conversation or mention the call. Focus on verb endings.');

  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');
  await expect(page.getByTestId('version')).toHaveText('Version 2');

  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('enable-update_user_profile')).toBeChecked();
  await expect(page.getByTestId('trigger-update_user_profile')).toHaveValue('keyword');
  await expect(page.getByTestId('chips-update_user_profile').locator('.chip')).toHaveText(['hobby×', 'family×']);
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();
  await expect(page.getByTestId('enable-mark_item_mastered')).toBeChecked();
  await expect(page.getByTestId('instructions-mark_for_review')).toHaveValue('Focus on verb endings.');
  await expect(page.getByLabel('Task 1', { exact: true })).toHaveValue('Order a drink');
  await expect(footer(page)).toContainText('Tools enabled: 6/6');
  noErrors();
});

test('turning a tool off by hand is respected when tasks change', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Manual choice');
  await page.getByTestId('enable-mark_task_complete').uncheck();
  await page.getByTestId('new-task').fill('Say hello');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByLabel('Task 1', { exact: true })).toHaveValue('Say hello');
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  await expect(page.getByTestId('auto-notice')).toHaveCount(0);
});

test('two tabs editing the same lesson: the second save is refused with the reload message', async ({ browser }) => {
  const context = await browser.newContext();
  const first = await context.newPage();
  await signIn(first, TEACHER);
  await expect(first.getByTestId('welcome')).toBeVisible();
  await newLesson(first, 'Shared lesson');
  const url = first.url();
  const second = await context.newPage();
  await second.goto(url);
  await hydrated(second);

  await first.getByLabel('Title').fill('Edited in the first tab');
  await first.getByTestId('save-lesson').click();
  await expect(first.getByTestId('save-status')).toHaveText('Saved.');

  await second.getByLabel('Title').fill('Edited in the second tab');
  await second.getByTestId('save-lesson').click();
  await expect(second.getByTestId('save-status')).toContainText('This lesson was changed elsewhere');
  await expect(second.getByTestId('save-status')).toContainText('reload');

  await second.getByRole('link', { name: 'Reload' }).click();
  await expect(second.getByLabel('Title')).toHaveValue('Edited in the first tab');
  await context.close();
});

test('a lesson is deleted only after confirmation', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Short-lived lesson');
  await page.goto('/lessons');
  await hydrated(page);
  const row = page.getByRole('row', { name: /Short-lived lesson/ });
  await row.getByRole('button', { name: 'Delete' }).click();
  await expect(row.getByRole('alertdialog')).toContainText('Delete “Short-lived lesson”?');
  await row.getByRole('button', { name: 'Cancel' }).click();
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(page.getByRole('row', { name: /Short-lived lesson/ })).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('lesson-list')).not.toContainText('Short-lived lesson');
});

test('the demo lessons are listed and open with their configuration', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/lessons');
  await page.getByRole('link', { name: 'Spanish café role-play' }).click();
  await expect(page.getByTestId('preview-prompt')).toContainText('You are Lucía');
  await expect(page.getByTestId('preview-prompt')).toContainText('- greet-waiter: Greet the waiter and ask for a table');
  await expect(page.getByTestId('tool-footer')).toContainText('Tools enabled: 4/6');
});
