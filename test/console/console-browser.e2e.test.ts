/**
 * `retryproof console --local` in a real headless Chromium (Debian's `chromium`, driven by
 * puppeteer-core), against one local stack and one console for the whole file: the token and
 * origin rules over HTTP, then the screens and the actions as an operator clicks them. The stack
 * runs the repository's configuration and one route ordered per entity (demo-orders), for the line.
 * RETRYPROOF_CONSOLE_SHOTS=<dir> saves a screenshot of each screen there (docs/console/).
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/free-port.ts';
import { REPO, runScript, shutDown, stackEnv, startStack, until } from '../local/stack-process.ts';
import type { StackProcess } from '../local/stack-process.ts';
import { ROUTE_STATE_MAX_AGE_MS } from '../../lambdas/config/route-config.ts';

const TOKEN = 't0k3n';
/** The entity of the line the test skips: a route ordered by the body's currency, which `send --currency` sets. */
const LINE_ENTITY = 'XTS';
const ORDERED_CONFIG = `import { config as base } from '${REPO}retryproof.config.ts';
export const config = {
  ...base,
  routes: [...base.routes, { name: 'demo-orders', signature: { scheme: 'standard-webhooks' }, secretName: 'retryproof/orders', action: 'payout', actionTimeSeconds: 15, orderBy: '{body:/currency}' }],
};
`;
const SHOTS = process.env.RETRYPROOF_CONSOLE_SHOTS;

/** Starts the console and resolves with its URL: the last line of its stdout. */
function startConsole(env: NodeJS.ProcessEnv, port: number): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${REPO}cli/retryproof.ts`, 'console', '--local', '--port', String(port), '--token', TOKEN], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const last = out.trimEnd().split('\n').at(-1) ?? '';
      if (out.endsWith('\n') && last.startsWith('http://')) resolve({ child, url: last });
    });
    child.on('exit', (code) => {
      reject(new Error(`the console exited with ${String(code)}\n${out}\n${err}`));
    });
  });
}

async function send(env: NodeJS.ProcessEnv, simulate?: object, more: readonly string[] = []): Promise<string> {
  const sent = await runScript('scripts/send.ts', [...(simulate === undefined ? [] : ['--simulate', JSON.stringify(simulate)]), ...more, '--json'], env);
  expect(sent.code, sent.stderr).toBe(0);
  return (JSON.parse(sent.stdout) as { key: string }).key;
}

describe('retryproof console in a browser', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  let consoleProcess: ChildProcess | undefined;
  let url = '';
  let origin = '';
  let browser: Browser | undefined;
  let page: Page;
  let doneKey = '';
  let failedKey = '';

  // Expressions run in the page, as text: this project's TypeScript has no DOM types.
  const inPage = async (expression: string): Promise<unknown> => page.evaluate(expression);
  const textOf = async (selector: string): Promise<string> => String(await inPage(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`));
  /** The status of each row of the shown delivery's ledger table. */
  const ledgerRows = async (): Promise<string[]> =>
    (await inPage(`[...document.querySelectorAll('[data-testid=ledger] tbody tr')].map((r) => r.children[2]?.textContent ?? '')`)) as string[];
  const main = (): Promise<string> => textOf('main');
  const goto = async (path: string): Promise<void> => {
    await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  };
  const clickAndWait = async (selector: string): Promise<void> => {
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(selector)]);
  };
  /** Reloads `path` until its <main> holds `text`. */
  const shows = (path: string, text: string | RegExp, waitMs = 30_000): Promise<string> =>
    until(`${path} to show ${String(text)}`, async () => {
      await goto(path);
      const seen = await main();
      return (typeof text === 'string' ? seen.includes(text) : text.test(seen)) ? seen : undefined;
    }, waitMs);
  const shot = async (name: string): Promise<void> => {
    if (SHOTS !== undefined) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-console-'));
    env = await stackEnv(dir);
    // The repository's configuration and one route ordered per entity: the line screen's.
    const configFile = join(dir, 'console.config.ts');
    await writeFile(configFile, ORDERED_CONFIG);
    stack = await startStack(env, { args: ['--config', configFile] });
    // The done one with a copy: the overview counts it as a duplicate.
    [doneKey, failedKey] = await Promise.all([send(env, undefined, ['--dup', '1']), send(env, { permanentErrorRuns: 1 })]);
    ({ child: consoleProcess, url } = await startConsole(env, await freePort()));
    origin = new URL(url).origin;
    const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
    browser = await puppeteer.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    consoleProcess?.kill('SIGINT');
    await shutDown(stack, dir);
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('answers 401 to every page and call without the token', async () => {
    const paths = ['/', '/deliveries', `/delivery?route=demo&key=${doneKey}`, '/dlq', '/line', '/confirm/pause?route=demo', '/api/overview', '/api/deliveries', '/assets/console.js'];
    for (const path of paths) expect((await fetch(`${origin}${path}`)).status, path).toBe(401);
    expect((await fetch(`${origin}/?token=wrong`)).status).toBe(401);
    const post = await fetch(`${origin}/action/pause`, { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'route=demo' });
    expect(post.status).toBe(401);
  });

  it('refuses a cross-origin POST, with the token, and changes nothing', async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' };
    const foreign = await fetch(`${origin}/action/pause`, { method: 'POST', headers: { ...auth, origin: 'http://evil.example' }, body: 'route=demo' });
    const crossSite = await fetch(`${origin}/action/pause`, { method: 'POST', headers: { ...auth, 'sec-fetch-site': 'cross-site' }, body: 'route=demo' });
    expect([foreign.status, crossSite.status]).toEqual([403, 403]);
    const overview = (await (await fetch(`${origin}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { routes: { state: { route: string; state: string } }[] };
    expect(overview.routes.find((r) => r.state.route === 'demo')?.state.state).toBe('active');
  });

  it('listens on 127.0.0.1 only', async () => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
    const port = Number(new URL(url).port);
    const others = Object.values(networkInterfaces()).flatMap((list) => list ?? []).filter((a) => !a.internal && a.family === 'IPv4');
    for (const a of others) {
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect({ host: a.address, port }, () => {
          socket.destroy();
          resolve(false);
        });
        socket.on('error', () => {
          resolve(true);
        });
      });
      expect(refused, a.address).toBe(true);
    }
  });

  it('opens on the printed URL, moves the token into a cookie, and shows each route on the overview', async () => {
    await page.goto(url, { waitUntil: 'load' });
    expect(new URL(page.url()).search).toBe('');
    expect(await textOf('h1')).toBe('Overview');
    const seen = await main();
    expect(seen).toContain('demo');
    expect(seen).toMatch(/last hour\s*\d+/);
    await shot('overview');
  });

  it('lists the deliveries sent a moment before, newest first, and filters one route\'s FAILED ones', async () => {
    const all = await shows('/deliveries', failedKey);
    expect(all).toContain(doneKey);
    await shows('/deliveries?route=demo&status=FAILED', failedKey);
    await shot('deliveries');
    const filtered = await main();
    expect(filtered).toContain(failedKey);
    expect(filtered).not.toContain(doneKey);
  });

  it("opens a FAILED delivery: its attempts, its DLQ reason, and no body until asked for", async () => {
    await clickAndWait(`a[href*="${encodeURIComponent(failedKey)}"]`);
    // The dead-letter copy reaches the local DLQ after its visibility timeouts: 22 s in a fresh-clone CI run.
    const seen = await shows(`/delivery?route=demo&key=${failedKey}`, 'DLQ reason', 90_000);
    expect(seen).toContain('simulated permanent');
    expect(await inPage(`document.querySelectorAll('main table tbody tr').length`)).toBeGreaterThanOrEqual(1);
    expect(await page.content()).not.toContain('payout.requested');
    await shot('delivery');
    await clickAndWait('a[href*="body=1"]');
    expect(await page.content()).toContain('payout.requested');
  });

  it('redrives it after a confirmation, and sees it COMPLETED with one ledger entry', async () => {
    await goto(`/delivery?route=demo&key=${failedKey}`);
    await clickAndWait('a[href^="/confirm/redrive?"]');
    expect(await main()).toContain('runs once more');
    await clickAndWait('form[action="/action/redrive"] button[type=submit]');
    expect(await main()).toContain('Redriven: it runs once more.');
    await shows(`/delivery?route=demo&key=${failedKey}`, /status\s*COMPLETED/);
    expect(await ledgerRows()).toEqual(['posted']);
  });

  it('pauses a route, parks what is sent to it, resumes it, and the parked work runs', async () => {
    await goto('/');
    await clickAndWait('a[href="/confirm/pause?route=demo"]');
    await clickAndWait('form[action="/action/pause"] button[type=submit]');
    expect(await main()).toContain('Route demo paused.');
    await shows('/', /demo\s*paused/);
    // A worker may act on the route's state it read up to ROUTE_STATE_MAX_AGE_MS before the pause (docs/architecture.md#a-pause-reaches-the-workers-late).
    await new Promise((resolve) => setTimeout(resolve, ROUTE_STATE_MAX_AGE_MS + 500));
    const parked = await send(env);
    await shows(`/delivery?route=demo&key=${parked}`, /status\s*PARKED/);
    await goto('/');
    await clickAndWait('a[href="/confirm/resume?route=demo"]');
    await clickAndWait('form[action="/action/resume"] button[type=submit]');
    expect(await main()).toMatch(/Route demo resumed; [1-9]\d* parked deliver/);
    await shows(`/delivery?route=demo&key=${parked}`, /status\s*COMPLETED/);
  });

  it('redrives a time band by filter after the dry run, one ledger effect per delivery', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const keys = await Promise.all([send(env, { permanentErrorRuns: 1 }), send(env, { permanentErrorRuns: 1 })]);
    const band = `/deliveries?route=demo&status=FAILED&since=${encodeURIComponent(since)}`;
    await until('both FAILED', async () => {
      await goto(band);
      const seen = await main();
      return keys.every((k) => seen.includes(k)) ? true : undefined;
    }, 30_000);
    await clickAndWait('a[href^="/confirm/redrive-filter?"]');
    expect(await textOf('[data-testid=dry-run-count]')).toBe('2');
    await shot('redrive-preview');
    await clickAndWait('form[action="/action/redrive-filter"] button[type=submit]');
    expect(await textOf('[data-testid=redriven]')).toBe('2');
    for (const key of keys) {
      await shows(`/delivery?route=demo&key=${key}`, /status\s*COMPLETED/);
      expect(await ledgerRows(), key).toEqual(['posted']);
    }
  });

  it('shows an ordered line held by its FAILED head, skips the head after a confirmation, and the delivery behind it runs', async () => {
    await page.goto(url, { waitUntil: 'load' });
    const line = ['--route', 'demo-orders', '--currency', LINE_ENTITY];
    const head = await send(env, { permanentErrorRuns: 1 }, line);
    await shows(`/delivery?route=demo-orders&key=${head}`, /status\s*FAILED/);
    const next = await send(env, undefined, line);
    await shows(`/delivery?route=demo-orders&key=${next}`, 'waiting in its line');
    await shows(`/line?route=demo-orders&entity=${LINE_ENTITY}`, head);
    await shot('line');
    await clickAndWait('a[href^="/confirm/skip?"]');
    await clickAndWait('form[action="/action/skip"] button[type=submit]');
    expect(await main()).toContain(`Skipped ${head}`);
    await shows(`/delivery?route=demo-orders&key=${next}`, 'done: completed');
  });

  it("shows each route's duplicates of the hour and the day, and what the reconciler's last run found", async () => {
    await goto('/');
    expect(Number(await textOf('#route-demo ~ dl [data-testid=duplicates-hour]'))).toBeGreaterThanOrEqual(1);
    expect(Number(await textOf('#route-demo ~ dl [data-testid=duplicates-day]'))).toBeGreaterThanOrEqual(1);
    expect(await textOf('#route-demo ~ dl [data-testid=trips-day]')).toMatch(/^\d+$/);
    const ran = await runScript('cli/retryproof.ts', ['reconcile', '--local'], env);
    expect(ran.code, ran.stderr).toBe(0);
    const seen = await shows('/', /it found\s*\d+ records looked at/);
    expect(seen).toMatch(/\d+ stuck re-enqueued; \d+ duplicate effects reversed/);
  });

  it('fits 390 px: no page-wide horizontal scroll, and the keyboard reaches the skip link first', async () => {
    await page.setViewport({ width: 390, height: 844 });
    for (const path of ['/', '/deliveries', `/delivery?route=demo&key=${failedKey}`, '/dlq']) {
      await goto(path);
      expect(await inPage('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(390);
    }
    await goto('/dlq');
    await shot('dlq-390');
    await page.keyboard.press('Tab');
    expect(await inPage('document.activeElement?.textContent')).toBe('Skip to content');
    const unlabelled = await inPage(`[...document.querySelectorAll('main input:not([type=hidden]), main select')].filter((e) => e.closest('label') === null).length`);
    expect(unlabelled).toBe(0);
  });
});
