import { expect, test } from '@playwright/test';
import { TEACHER, failOnConsoleErrors, hydrated, keyIn, newLesson, signIn } from './helpers';

// A lesson run end to end: the teacher writes a review lesson with items,
// a scripted tutor backend runs it (turns, tool calls), a watcher sees the
// nudges arrive, and the teacher reviews the run and downloads it.

test('after a scripted lesson session the teacher sees its errors, tasks and summary', async ({ page, browser }) => {
  const noErrors = failOnConsoleErrors(page);
  const key = await keyIn(browser, 'Tutor backend');
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  const lessonId = await newLesson(page, `Past tense review ${Date.now()}`);

  // A review lesson: the review tools need items before they reach the prompt.
  await page.getByTestId('review-toggle').check();
  await expect(page.getByTestId('contradiction').first()).toContainText('the lesson has no review items');
  await page.getByTestId('new-review-item').fill('Ayer fui al mercado');
  await page.getByTestId('new-review-audio').fill('recordings/fui.webm');
  await page.getByTestId('new-review-item').press('Enter');
  await expect(page.getByTestId('contradiction')).toHaveCount(0);
  const preview = page.getByTestId('preview-prompt');
  await expect(preview).toContainText('## Review Items');
  await expect(preview).toContainText('- ayer-fui-al-mercado: Ayer fui al mercado (recording)');
  await page.getByTestId('new-task').fill('Say what you did last weekend');
  await page.getByTestId('new-task').press('Enter');
  await expect(page.getByTestId('enable-mark_task_complete')).toBeChecked();
  // Profile Learning fires on a topic.
  await page.getByTestId('trigger-update_user_profile').selectOption('keyword');
  const chipInput = page.getByTestId('keyword-input-update_user_profile');
  await chipInput.fill('football');
  await chipInput.press('Enter');
  await page.getByTestId('save-lesson').click();
  await expect(page.getByTestId('save-status')).toHaveText('Saved.');

  // The backend opens a tutor session for Ana.
  const api = page.request;
  const opened = await api.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { lessonId, student: 'Ana' },
  });
  expect(opened.status()).toBe(201);
  const s = (await opened.json()) as { sessionId: string; sessionToken: string };
  const auth = { Authorization: `Bearer ${s.sessionToken}` };
  const tools = await (await api.get(`/api/sessions/${s.sessionId}/tools?format=openai`, { headers: auth })).json();
  expect(tools.systemPrompt).toContain('ayer-fui-al-mercado');

  // A watcher sees turns and the nudge arrive.
  await page.goto(`/sessions/${s.sessionId}`);
  await hydrated(page);
  await expect(page.getByTestId('connection')).toHaveText('live');
  await expect(page.getByTestId('elapsed')).toHaveText(/^\d+:\d\d$/);
  await expect(page.getByTestId('remaining')).toContainText('left of 15 min');
  const turn = await api.post(`/api/sessions/${s.sessionId}/turns`, {
    headers: auth,
    data: { role: 'student', text: 'El sábado yo jugo al football con mis amigos' },
  });
  const answer = await turn.json();
  expect(answer.nudges.map((n: { tool: string }) => n.tool)).toEqual(['update_user_profile']);
  await expect(page.getByTestId('turns')).toHaveText('Turns: 1 student · 0 tutor');
  await expect(page.getByTestId('nudges')).toContainText(
    'The student mentioned football: call `update_user_profile` now.',
  );

  for (const [name, args] of [
    ['mark_for_review', { errorType: 'grammar', studentSaid: 'yo jugo', correctForm: 'yo jugué', severity: 4 }],
    ['update_user_profile', { category: 'interest', value: 'plays football' }],
    ['mark_task_complete', { taskId: 'say-what-you-did-last-weekend', evidence: 'jugué al fútbol' }],
    ['mark_item_mastered', { itemId: 'ayer-fui-al-mercado' }],
    ['show_session_summary', { summary: 'Ana talked about her weekend.', strengths: ['vocabulary'], areasToImprove: ['past tense endings'], stars: 4 }],
  ] as const) {
    const res = await api.post(`/api/sessions/${s.sessionId}/tool-calls`, { headers: auth, data: { name, arguments: args } });
    expect((await res.json()).allowed, name).toBe(true);
  }
  await expect(page.getByTestId('timeline').locator('li')).toHaveCount(5);
  expect((await api.post(`/api/sessions/${s.sessionId}/end`, { headers: auth })).status()).toBe(204);
  await expect(page.getByTestId('ended')).toBeVisible();
  // Ended early: nothing is "left" of the planned time any more.
  await expect(page.getByTestId('remaining')).toHaveText('of 15 min planned');

  // The teacher reviews the run from the lesson.
  await page.goto(`/lessons/${lessonId}`);
  await hydrated(page);
  await page.getByTestId('lesson-runs').click();
  await expect(page).toHaveURL(new RegExp(`/lessons/${lessonId}/sessions$`));
  const run = page.locator(`[data-session="${s.sessionId}"]`);
  await expect(run.getByRole('heading', { name: 'Ana' })).toBeVisible();
  await expect(run.getByTestId('run-errors')).toContainText('yo jugo → yo jugué');
  await expect(run.getByTestId('run-errors')).toContainText('grammar · severity 4');
  await expect(run.getByTestId('run-tasks')).toContainText('Tasks (1/1)');
  await expect(run.locator('[data-task="say-what-you-did-last-weekend"]')).toHaveClass(/task-done/);
  await expect(run.getByTestId('run-facts')).toContainText('interest: plays football');
  await expect(run.getByTestId('run-mastered')).toContainText('Ayer fui al mercado');
  await expect(run.getByTestId('run-summary')).toContainText('Ana talked about her weekend.');
  await expect(run.getByTestId('run-summary')).toContainText('4/5 stars');
  await expect(run.getByTestId('run-summary')).toContainText('Work on: past tense endings');

  const download = page.waitForEvent('download');
  await page.getByTestId('runs-csv').click();
  const file = await download;
  expect(file.suggestedFilename()).toBe(`lesson-${lessonId}-sessions.csv`);
  const csv = await (await api.get(`/lessons/${lessonId}/sessions.csv`)).text();
  expect(csv).toContain('Ana');
  expect(csv).toContain('yo jugo → yo jugué (grammar, severity 4)');
  noErrors();
});
