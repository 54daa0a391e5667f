import { expect, test } from '@playwright/test';
import { ADMIN, hydrated, signIn } from './helpers';

test('an admin creates an API key that a backend then uses for a lesson prompt', async ({ page, request }) => {
  await signIn(page, ADMIN);
  await expect(page.getByTestId('welcome')).toBeVisible();
  await hydrated(page);
  const panel = page.getByTestId('api-keys');
  await panel.getByLabel('Key name').fill('Gemini Live tutor');
  await panel.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('new-api-key').innerText()).trim();
  expect(secret).toMatch(/^sb_[A-Za-z0-9]{43}$/);
  await expect(panel.getByRole('row', { name: /Gemini Live tutor/ })).toBeVisible();

  const ok = await request.get('/api/lessons/3/prompt?format=openai', {
    headers: { Authorization: `Bearer ${secret}` },
  });
  expect(ok.status()).toBe(200);
  const body = await ok.json();
  expect(body.systemPrompt).toContain('You are Lucía');
  expect(body.tools.tools[0].type).toBe('function');
  expect(body.tokenCount).toBeGreaterThan(100);

  const bad = await request.get('/api/lessons/3/prompt', { headers: { Authorization: 'Bearer sb_nope' } });
  expect(bad.status()).toBe(401);

  await panel.getByRole('row', { name: /Gemini Live tutor/ }).getByRole('button', { name: 'Revoke' }).click();
  await expect(panel.getByRole('row', { name: /Gemini Live tutor/ })).toContainText('revoked');
  const revoked = await request.get('/api/lessons/3/prompt', { headers: { Authorization: `Bearer ${secret}` } });
  expect(revoked.status()).toBe(401);
});
