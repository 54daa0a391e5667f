import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { TEACHER, failOnConsoleErrors, hydrated, keyIn, newLesson, signIn } from './helpers';

// A teacher and one student's record (issue #38): a tutor backend opens a
// lesson for the student by name and logs an error; the teacher finds the
// student on the students page, sees the error queued for review, downloads
// everything kept about them, and deletes the student with all their data.

test('a logged error reaches the student page, whose data the teacher downloads and deletes', async ({
  page,
  browser,
}) => {
  const noErrors = failOnConsoleErrors(page);
  const stamp = Date.now();
  const name = `Lena ${stamp}`;
  const key = await keyIn(browser, `Tutor backend ${stamp}`, TEACHER);
  await signIn(page, TEACHER);
  await expect(page.getByTestId('welcome')).toBeVisible();
  const lessonId = await newLesson(page, `Weather talk ${stamp}`);

  // The backend opens the lesson for the student by name and logs an error.
  const api = page.request;
  const opened = await api.post('/api/sessions', {
    headers: { Authorization: `Bearer ${key}` },
    data: { lessonId, student: name },
  });
  expect(opened.status()).toBe(201);
  const s = (await opened.json()) as { sessionId: string; sessionToken: string };
  const logged = await api.post(`/api/sessions/${s.sessionId}/tool-calls`, {
    headers: { Authorization: `Bearer ${s.sessionToken}` },
    data: {
      name: 'mark_for_review',
      arguments: { errorType: 'grammar', studentSaid: 'yo tiene frío', correctForm: 'tengo frío', severity: 3 },
    },
  });
  const answer = await logged.json();
  expect(answer.allowed).toBe(true);
  // The model is told where the error went: the student's review queue.
  expect(JSON.stringify(answer.result)).toContain('queue');

  // The teacher finds the student and their queued error.
  await page.goto('/students');
  await hydrated(page);
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page).toHaveURL(/\/students\/\d+$/);
  await hydrated(page);
  await expect(page.getByTestId('student-name')).toHaveText(name);
  await expect(page.getByTestId('student-queue')).toContainText('yo tiene frío');
  await expect(page.getByTestId('student-queue')).toContainText('tengo frío');
  await expect(page.getByTestId('student-runs')).toContainText(`Weather talk ${stamp}`);

  // Everything kept about them, as one file.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('student-export').click()]);
  const exported = JSON.parse(readFileSync((await file.path())!, 'utf8'));
  expect(exported.student.name).toBe(name);
  expect(exported.sessions.map((x: { id: string }) => x.id)).toEqual([s.sessionId]);
  expect(exported.reviewQueue[0].studentSaid).toBe('yo tiene frío');

  // Deleted with all their data, after a second click.
  await page.getByTestId('student-delete').click();
  await page.getByTestId('student-delete-confirm').click();
  await expect(page.getByTestId('student-deleted')).toBeVisible();
  await page.goto('/students');
  await hydrated(page);
  await expect(page.getByRole('link', { name, exact: true })).toHaveCount(0);
  const gone = await api.get(`/api/sessions/${s.sessionId}/calls`);
  expect(gone.status()).toBe(404);
  noErrors();
});
