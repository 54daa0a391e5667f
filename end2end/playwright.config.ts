import { defineConfig } from '@playwright/test';

// The server under test: the debug binary `make test` builds, on its own port,
// over a brand-new SQLite file, with known demo passwords.
const port = Number(process.env.E2E_PORT ?? 3100);
const bin = process.env.SWITCHBOARD_BIN ?? '../target/debug/switchboard';
const siteRoot = process.env.SITE_ROOT ?? '../target/site-debug';
export const baseURL = `http://127.0.0.1:${port}`;
// A second server, seeded from a SWITCHBOARD_BINDINGS_FILE, for the spec
// about that file: it changes the bindings, which no other spec should see.
const filePort = port + 1;
const fileURL = `http://127.0.0.1:${filePort}`;
const fileSpec = /bindings-file\.spec\.ts$/;
// The scripted OpenAI-compatible model (bin `scripted-model`, script
// scripts/model-script.json) the workflow agent talks to: no hosted model.
const modelPort = port + 2;
const modelBin = process.env.SCRIPTED_MODEL_BIN ?? '../target/debug/scripted-model';
const model = {
  SWITCHBOARD_LLM_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
  SWITCHBOARD_LLM_API_KEY: 'scripted',
  SWITCHBOARD_LLM_MODEL: 'scripted',
};

// The example plugin page (examples/plugin/), served on its own origin by
// cross-origin-plugin.spec.ts: the main server allows that origin
// (API_ORIGINS), as a plugin author's Switchboard would.
export const pluginPort = port + 10;
export const pluginOrigin = `http://127.0.0.1:${pluginPort}`;

// @modelcontextprotocol/server-everything in its streamableHttp mode, the
// real MCP server mcp-servers.spec.ts starts and connects as an upstream.
export const everythingPort = port + 11;

/** A server on `p` over a brand-new database in `dir`, with `env` added. */
function server(p: number, dir: string, env: Record<string, string> = {}) {
  return {
    command: `rm -rf ${dir} && mkdir -p ${dir} && exec ${bin}`,
    url: `http://127.0.0.1:${p}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe' as const,
    stderr: 'pipe' as const,
    env: {
      PORT: String(p),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite://${dir}/e2e.db`,
      SITE_ROOT: siteRoot,
      SWITCHBOARD_TEACHER_PASSWORD: 'teacher-e2e-pass',
      SWITCHBOARD_ADMIN_PASSWORD: 'admin-e2e-pass',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
      ...env,
    },
  };
}

/** How specs launch Chromium (a spec that needs its own browser uses it too). */
export const chromium = {
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
    { name: 'hydrated', testIgnore: [/\.nojs\.spec\.ts$/, fileSpec], use: { javaScriptEnabled: true } },
    { name: 'no-js', testMatch: /\.nojs\.spec\.ts$/, use: { javaScriptEnabled: false } },
    { name: 'bindings-file', testMatch: fileSpec, use: { javaScriptEnabled: true, baseURL: fileURL } },
  ],
  webServer: [
    {
      command: `exec ${modelBin} --port ${modelPort}`,
      url: `http://127.0.0.1:${modelPort}/v1/requests`,
      reuseExistingServer: false,
      timeout: 30_000,
      stdout: 'pipe' as const,
      stderr: 'pipe' as const,
    },
    server(port, '.data', { ...model, API_ORIGINS: pluginOrigin }),
    server(filePort, '.data-file', { SWITCHBOARD_BINDINGS_FILE: 'fixtures/tool-bindings.json' }),
  ],
});
