import { defineConfig } from '@playwright/test';

// The server under test: the debug binary `make test` builds, on its own port,
// over a brand-new SQLite file, with known demo passwords.
const port = Number(process.env.E2E_PORT ?? 3100);
const bin = process.env.SWITCHBOARD_BIN ?? '../target/debug/switchboard';
const siteRoot = process.env.SITE_ROOT ?? '../target/site-debug';
export const baseURL = `http://127.0.0.1:${port}`;

const chromium = {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 5_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL,
    headless: true,
    launchOptions: chromium,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    { name: 'hydrated', testIgnore: /\.nojs\.spec\.ts$/, use: { javaScriptEnabled: true } },
    { name: 'no-js', testMatch: /\.nojs\.spec\.ts$/, use: { javaScriptEnabled: false } },
  ],
  webServer: {
    command: `rm -rf .data && mkdir -p .data && exec ${bin}`,
    url: `${baseURL}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite://.data/e2e.db',
      SITE_ROOT: siteRoot,
      SWITCHBOARD_TEACHER_PASSWORD: 'teacher-e2e-pass',
      SWITCHBOARD_ADMIN_PASSWORD: 'admin-e2e-pass',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
    },
  },
});
