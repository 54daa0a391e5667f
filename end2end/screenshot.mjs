// Dev helper: screenshots of a page, signed in or not. node shot.mjs URL OUT [email pass]
import { chromium } from '@playwright/test';
const [url, out, email, pass] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.on('console', m => console.log('console:', m.type(), m.text()));
if (email) {
  const base = new URL(url).origin;
  await page.goto(base + '/login');
  await page.waitForSelector('body[data-hydrated="true"]');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', pass);
  await page.click('button[type=submit]');
  await page.waitForURL(base + '/');
}
await page.goto(url);
await page.waitForTimeout(1500);
await page.screenshot({ path: out, fullPage: true });
await browser.close();
