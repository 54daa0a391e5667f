// What every browser benchmark starts with: the real server on a fresh
// SQLite file with known passwords, waited for on /healthz, and Chromium
// launched the way these machines need it (Debian's, no sandbox).
// SWITCHBOARD_BIN and SITE_ROOT choose the build.
import { chromium } from '@playwright/test';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The passwords the bench server's accounts get. */
export const PASSWORDS = { teacher: 'teacher-bench-pass', admin: 'admin-bench-pass' };

/**
 * Starts the server on `port` (BENCH_PORT overrides) over a new database,
 * waits until it answers and launches Chromium; `stop()` closes both and
 * removes the database.
 */
export async function start(name, port) {
  const bin = process.env.SWITCHBOARD_BIN;
  const site = process.env.SITE_ROOT;
  if (!bin || !site) {
    console.error('set SWITCHBOARD_BIN and SITE_ROOT');
    process.exit(2);
  }
  port = Number(process.env.BENCH_PORT ?? port);
  const base = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), `switchboard-${name}-`));
  const server = spawn(bin, [], {
    env: {
      ...process.env,
      DATABASE_URL: `sqlite://${dir}/bench.db`,
      SITE_ROOT: site,
      PORT: String(port),
      RUST_LOG: 'error',
      SWITCHBOARD_TEACHER_PASSWORD: PASSWORDS.teacher,
      SWITCHBOARD_ADMIN_PASSWORD: PASSWORDS.admin,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let browser;
  const stop = async () => {
    await browser?.close();
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(base);
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { base, site, browser, stop };
}

async function waitFor(base) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}
