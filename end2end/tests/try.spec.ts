import { expect, test } from '@playwright/test';
import { TEACHER, failOnConsoleErrors, hydrated, newLesson, signIn } from './helpers';

// "Try this lesson": the teacher goes from the lesson editor to the lesson's
// trial page (/lessons/{id}/try), opens a trial, types
// as the student, and the tutor (the scripted model, scripts/model-script.json
// "try: please review fractions") answers with a mark_for_review call that
// appears live in the visualiser beside the chat. The trial is then listed
// apart from real runs on the lesson's sessions page.

const SAY = 'Try: please review fractions — I ate two quarter of the pizza';

test('a teacher tries a lesson beside the live visualiser, and the trial is listed apart', async ({ page }) => {
  const noErrors = failOnConsoleErrors(page);
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  const lessonId = await newLesson(page, `Fractions trial ${Date.now()}`);

  // The editor links to the lesson's trial page (its own bundle, with the
  // visualiser).
  await page.getByTestId('try-lesson-link').click();
  await expect(page).toHaveURL(new RegExp(`/lessons/${lessonId}/try$`));
  await hydrated(page);
  const tryIt = page.getByTestId('try-it');
  await tryIt.getByTestId('try-student').fill('Test pupil');
  await tryIt.getByRole('button', { name: 'Try this lesson' }).click();
  const trial = tryIt.getByTestId('trial');
  await expect(trial).toHaveAttribute('data-session', /.+/);
  const sessionId = await trial.getAttribute('data-session');
  // The visualiser is live before anything is said.
  await expect(trial.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 15_000 });

  await trial.getByTestId('chat-input').fill(SAY);
  await trial.getByTestId('chat-input').press('Enter');
  await expect(trial.getByTestId('chat-user')).toHaveText(SAY);

  // The tutor's call shows in the chat and, live, in the visualiser's timeline.
  const call = trial.getByTestId('chat-log').getByTestId('tool-call');
  await expect(call).toHaveAttribute('data-tool', 'mark_for_review');
  const timeline = trial.getByTestId('timeline');
  await expect(timeline.locator('li', { hasText: 'mark_for_review' })).toBeVisible();
  await expect(timeline.locator('li', { hasText: 'mark_for_review' })).toHaveClass(/allowed/);
  await expect(trial.getByTestId('chat-assistant').last()).toContainText('two quarters');
  await expect(trial.getByTestId('chat-working')).toBeHidden({ timeout: 15_000 });
  await call.locator('summary').click();
  await expect(call.getByTestId('tool-call-args')).toContainText('"correctForm": "two quarters"');

  // The sessions page lists it as a trial, apart from real runs.
  await page.goto(`/lessons/${lessonId}/sessions`);
  await hydrated(page);
  await expect(page.getByTestId('runs').locator(`[data-session="${sessionId}"]`)).toHaveCount(0);
  const listed = page.getByTestId('trials').locator(`[data-session="${sessionId}"]`);
  await expect(listed.getByTestId('trial-badge')).toHaveText('Trial');
  await expect(listed.getByRole('heading', { name: 'Test pupil' })).toBeVisible();
  await expect(listed.getByTestId('run-errors')).toContainText('two quarter → two quarters');
  noErrors();
});
