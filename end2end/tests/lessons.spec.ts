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
  // A new lesson has no tasks, so no Task Completion.
  await expect(footer(page)).toContainText('Tools enabled: 3/6');
  await expect(page.getByTestId('preset')).toHaveValue('standard_lesson');

  // Preset: the review tools are on, though this is not (yet) a review lesson.
  await page.getByTestId('preset').selectOption('review_lesson');
  await expect(page.getByTestId('contradiction')).toHaveCount(2);
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
  // Pasted with a comma: two topics, as if typed one by one.
  await chipInput.fill('hobby, family');
  await chipInput.press('Enter');
  const chips = page.getByTestId('chips-update_user_profile');
  await expect(chips.locator('.chip')).toHaveText(['hobby×', 'family×']);
  await expect(page.getByTestId('error-update_user_profile')).toHaveCount(0);
  await page.getByTestId('enable-update_user_profile').check();
  await expect(page.getByTestId('preview-prompt')).toContainText(
    '**update_user_profile**: Call when the student mentions these topics: hobby, family.',
  );

  // The preset was an explicit choice: a task only suggests Task Completion.
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  const before = await estimate(page);
  await page.getByTestId('new-task').fill('Order a drink');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('auto-notice')).toHaveCount(0);
  const suggestion = page.getByTestId('suggestion');
  await expect(suggestion).toContainText('This lesson has tasks, but Task Completion is off.');
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  await suggestion.getByRole('button', { name: 'Turn on' }).click();
  await expect(page.getByTestId('suggestion')).toHaveCount(0);
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
  // Saved and unchanged: nothing to save, so no empty version either.
  await expect(page.getByTestId('save-lesson')).toBeDisabled();

  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('save-lesson')).toBeDisabled();
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
  // A new lesson starts with it off; switching it on and off again is the teacher's choice.
  await page.getByTestId('enable-mark_task_complete').check();
  await page.getByTestId('enable-mark_task_complete').uncheck();
  await page.getByTestId('new-task').fill('Say hello');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByLabel('Task 1', { exact: true })).toHaveValue('Say hello');
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  await expect(page.getByTestId('auto-notice')).toHaveCount(0);
});

test('without a preset chosen, a task switches Task Completion on by itself and says so', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Smart defaults');
  await page.getByTestId('new-task').fill('Say hello');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('auto-notice')).toHaveText('Task tracking enabled automatically');
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();
  await expect(page.getByTestId('preset')).toHaveValue('standard_lesson');
});

test('a teacher picks “No tracking” on a lesson with tasks and it stays “No tracking” after reload', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'No tracking please');
  await page.getByTestId('new-task').fill('Order a drink');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();

  await page.getByTestId('preset').selectOption('no_tracking');
  await expect(page.getByTestId('preset')).toHaveValue('no_tracking');
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  await expect(footer(page)).toContainText('Tools enabled: 0/6');
  await expect(page.getByTestId('suggestion')).toContainText('This lesson has tasks, but Task Completion is off.');
  // Further edits do not bring the tools back.
  await page.getByLabel('Title').fill('No tracking, really');
  await page.getByTestId('new-task').fill('Pay');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('preset')).toHaveValue('no_tracking');
  await expect(footer(page)).toContainText('Tools enabled: 0/6');
  await expect(page.getByTestId('preview-prompt')).not.toContainText('## Available Functions');

  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('preset')).toHaveValue('no_tracking');
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();
  await page.getByLabel('Title').fill('No tracking, after reload');
  await expect(page.getByTestId('preset')).toHaveValue('no_tracking');
  await expect(footer(page)).toContainText('Tools enabled: 0/6');
  noErrors();
});

test('a preset switch keeps instructions, and asks before it would drop keywords', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Keep my words');
  await page.getByTestId('instructions-mark_for_review').fill('Focus on verb endings.');
  await page.getByTestId('trigger-update_user_profile').selectOption('keyword');
  const chipInput = page.getByTestId('keyword-input-update_user_profile');
  await chipInput.fill('hobby');
  await chipInput.press('Enter');
  const chips = page.getByTestId('chips-update_user_profile').locator('.chip');

  // Conversation only leaves Profile Learning off: nothing is lost, no question.
  let asked = '';
  page.on('dialog', (dialog) => {
    asked = dialog.message();
    void dialog.dismiss();
  });
  await page.getByTestId('preset').selectOption('conversation_only');
  await expect(page.getByTestId('preset')).toHaveValue('conversation_only');
  expect(asked).toBe('');
  await expect(page.getByTestId('instructions-mark_for_review')).toHaveValue('Focus on verb endings.');
  await expect(chips).toHaveText(['hobby×']);

  // Standard turns it on with "always": the keywords would go, so it asks; declined, nothing changes.
  await page.getByTestId('preset').selectOption('standard_lesson');
  await expect.poll(() => asked).toContain('Profile Learning: keywords hobby');
  await expect(page.getByTestId('preset')).toHaveValue('conversation_only');
  await expect(chips).toHaveText(['hobby×']);
  await expect(page.getByTestId('instructions-mark_for_review')).toHaveValue('Focus on verb endings.');
});

test('a setting that contradicts the lesson is flagged and left out of the prompt', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Contradictions');
  const preview = page.getByTestId('preview-prompt');
  await page.getByTestId('enable-mark_task_complete').check();
  const warning = page.getByTestId('contradiction');
  await expect(warning).toHaveText(/Task Completion is on, but the lesson has no tasks: it is left out of the prompt\./);
  await expect(preview).toContainText('**mark_for_review**');
  await expect(preview).not.toContainText('mark_task_complete');
  await expect(page.getByTestId('cost-mark_task_complete')).toHaveText('left out of the prompt');
  await warning.getByRole('button', { name: 'Turn off' }).click();
  await expect(page.getByTestId('contradiction')).toHaveCount(0);
  await expect(page.getByTestId('enable-mark_task_complete')).not.toBeChecked();

  await page.getByTestId('preset').selectOption('no_tracking');
  await page.getByLabel('Instructions for all tools (optional)').fill('Never mention the functions.');
  await expect(page.getByTestId('contradiction')).toContainText('no tool is enabled');
  await expect(preview).not.toContainText('Never mention the functions.');
});

test('leaving the editor with unsaved edits asks first', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Unsaved edits');
  const url = page.url();
  // Nothing changed: leaving does not ask.
  await page.getByRole('link', { name: '← Lessons' }).click();
  await expect(page).toHaveURL(/\/lessons$/);
  await page.goto(url);
  await hydrated(page);

  await page.getByLabel('Title').fill('Unsaved edits, changed');
  // Every way out is a page load, so the browser asks (its own wording).
  let asked = '';
  page.once('dialog', (dialog) => {
    asked = dialog.type();
    void dialog.dismiss();
  });
  await page.getByRole('link', { name: '← Lessons' }).click();
  await expect(page).toHaveURL(url);
  expect(asked).toBe('beforeunload');
  await expect(page.getByLabel('Title')).toHaveValue('Unsaved edits, changed');

  const nav = page.getByRole('navigation', { name: 'Main' });
  asked = '';
  page.once('dialog', (dialog) => {
    asked = dialog.type();
    void dialog.dismiss();
  });
  await nav.getByRole('link', { name: 'Sessions' }).click();
  await expect(page).toHaveURL(url);
  expect(asked).toBe('beforeunload');

  // Reloading or closing the tab asks through the browser.
  const kind = new Promise<string>((resolve) => {
    page.once('dialog', (dialog) => {
      resolve(dialog.type());
      void dialog.accept();
    });
  });
  await page.reload();
  expect(await kind).toBe('beforeunload');
  await hydrated(page);
  await expect(page.getByLabel('Title')).toHaveValue('Unsaved edits');

  // Saved: leaving does not ask any more.
  await page.getByLabel('Title').fill('Unsaved edits, saved');
  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');
  await nav.getByRole('link', { name: 'Lessons' }).click();
  await expect(page).toHaveURL(/\/lessons$/);
});

test('a teacher restores a previous version from the history', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Versioned lesson');
  const history = page.getByTestId('lesson-history');
  await expect(history.locator('li')).toHaveCount(1);
  await expect(history.locator('li[data-version="1"]')).toContainText('Created');

  await page.getByLabel('Title').fill('Versioned lesson, rewritten');
  await page.getByLabel('Conversation prompt').fill('A different prompt.');
  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('version')).toHaveText('Version 2');
  await expect(history.locator('li[data-version="2"]')).toContainText('Changed title and conversation prompt');
  await expect(history.locator('li[data-version="2"]')).toContainText('Tess Teacher');
  await expect(page.getByTestId('restore-2')).toBeDisabled();

  await page.getByTestId('restore-1').click();
  await expect(page.getByTestId('version')).toHaveText('Version 3');
  await expect(page.getByLabel('Title')).toHaveValue('Versioned lesson');
  await expect(page.getByLabel('Conversation prompt')).toHaveValue('');
  await expect(history.locator('li[data-version="3"]')).toContainText('Restored version 1');
  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel('Title')).toHaveValue('Versioned lesson');
  await expect(page.getByTestId('version')).toHaveText('Version 3');
});

test('a teacher duplicates a saved lesson and the copy opens', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await newLesson(page, 'Lesson to copy');
  const original = page.url();
  await page.getByTestId('new-task').fill('Say hello');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('duplicate-lesson')).toBeDisabled();
  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');
  await page.getByTestId('duplicate-lesson').click();
  await expect(page.getByRole('heading', { level: 1, name: 'Copy of Lesson to copy' })).toBeVisible();
  expect(page.url()).not.toBe(original);
  await expect(page.getByLabel('Task 1', { exact: true })).toHaveValue('Say hello');
});

test('the token figures cover the same text, and each tool card shows its cost', async ({ page }) => {
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await page.goto('/lessons');
  await page.getByRole('link', { name: 'Spanish café role-play', exact: true }).click();
  await hydrated(page);
  await expect(page.getByTestId('exact-tokens')).toHaveText(/^\d+$/, { timeout: 10_000 });
  const exact = Number(await page.getByTestId('exact-tokens').innerText());
  const approx = Number((await page.getByTestId('estimate').innerText()).replace('~', ''));
  // Same text, two ways of counting: within a factor of 1.5 of each other.
  expect(exact).toBeGreaterThan(approx / 1.5);
  expect(exact).toBeLessThan(approx * 1.5);
  await expect(page.getByTestId('token-stats')).toContainText('Prompt + declarations, exact (o200k_base)');
  for (const id of ['mark_for_review', 'update_user_profile', 'show_session_summary', 'mark_task_complete']) {
    await expect(page.getByTestId(`cost-${id}`)).toHaveText(/^~\d+ tokens \(declaration ~\d+ \+ instruction ~\d+\)$/);
  }
  await expect(page.getByTestId('cost-mark_item_mastered')).toHaveText('off: 0 tokens');
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
  await page.getByRole('link', { name: 'Spanish café role-play', exact: true }).click();
  await expect(page.getByTestId('preview-prompt')).toContainText('You are Lucía');
  await expect(page.getByTestId('preview-prompt')).toContainText('- greet-waiter: Greet the waiter and ask for a table');
  await expect(page.getByTestId('tool-footer')).toContainText('Tools enabled: 4/6');
});
