/** `npm start` refuses what it cannot run with one line and exit code 2, never a stack trace. */
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoJvmsOf, runScript } from './stack-process.ts';

/** A fresh .local folder and a port some other program holds, for one describe block. */
function startScene(prefix: string): { readonly dir: string; readonly busyPort: number } {
  const scene = { dir: '', busyPort: 0 };
  let busy: Server | undefined;
  beforeAll(async () => {
    scene.dir = await mkdtemp(join(tmpdir(), prefix));
    // A busy port whose neighbour below is free (a test starts two Regions from it): the
    // neighbour is checked by binding it, then released; a busy neighbour draws another port.
    for (;;) {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => { resolve(); }));
      const port = (server.address() as AddressInfo).port;
      const below = createServer();
      const free = await new Promise<boolean>((resolve) => {
        below.once('error', () => { resolve(false); });
        below.listen(port - 1, '127.0.0.1', () => { resolve(true); });
      });
      if (free) await new Promise<void>((resolve) => below.close(() => { resolve(); }));
      if (free) {
        busy = server;
        scene.busyPort = port;
        break;
      }
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    }
  });
  afterAll(async () => {
    const server = busy;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    await rm(scene.dir, { recursive: true, force: true });
  });
  return scene;
}

describe('npm start on a bad setting, a taken port, or no Java', () => {
  const scene = startScene('retryproof-start-');

  it('says which variable is wrong', async () => {
    const out = await runScript('scripts/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: scene.dir, RETRYPROOF_VISIBILITY_TIMEOUT_S: 'fast' });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('retryproof local: RETRYPROOF_VISIBILITY_TIMEOUT_S must be a whole number from 1 to 43200, got "fast"\n');
  });

  it('says which port is taken, before starting anything', async () => {
    const out = await runScript('scripts/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: scene.dir, PORT: String(scene.busyPort) });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`retryproof local: port ${scene.busyPort} is already in use`);
    expect(out.stderr).not.toMatch(/\n\s+at /);
    // The refusal alone: no banner above it.
    expect(out.stdout).toBe('');
  });

  it('refuses a second stack in the same folder with its one line, no banner above it', async () => {
    // Prepare: the folder's endpoints.json names a live process (this test's) as its stack.
    const dir = join(scene.dir, 'second');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'endpoints.json'), JSON.stringify({ version: 1, pid: process.pid, httpUrl: 'http://127.0.0.1:1', eventsTable: 't' }));
    // Act
    const out = await runScript('scripts/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: dir, PORT: String(scene.busyPort + 1) });
    // Assess
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(`retryproof local: a local stack already runs in ${dir} (pid ${process.pid}): stop it, or set RETRYPROOF_LOCAL_DIR to another folder\n`);
  });

  it('says Java is missing and what to install', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => { resolve(p); });
      });
    });
    // Only Node on the PATH: the `java` that DynamoDB Local needs is not found.
    const out = await runScript('scripts/start.ts', [], { ...process.env, RETRYPROOF_LOCAL_DIR: scene.dir, PORT: String(port), PATH: dirname(process.execPath) });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('java was not found: install Java 17 or newer');
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('npm start -- --regions on a value it cannot run', () => {
  const scene = startScene('retryproof-regions-bad-');
  const start = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
    runScript('scripts/start.ts', args, { ...process.env, RETRYPROOF_LOCAL_DIR: scene.dir, ...env });

  it.each([
    [['--regions', '0'], 'retryproof local: --regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got "0"\n'],
    [
      ['--regions', '9'],
      'retryproof local: --regions must be a count from 1 to 8 or a list of names such as us-east-1,us-east-2, got "9" ' +
        '(at most 8 run locally: each is a gateway, a queue pair and an executor on this machine)\n',
    ],
    [['--regions', 'us-east-1,us-east-1'], 'retryproof local: --regions names the region us-east-1 twice (us-east-1,us-east-1)\n'],
    [
      ['--regions', 'Virginia'],
      'retryproof local: --regions: "Virginia" is not a region name: lowercase letters, digits and hyphens, from a letter to a letter or digit, at most 32 characters (such as us-east-1)\n',
    ],
    [['--regions'], 'retryproof local: --regions needs a value (npm start -- --help)\n'],
  ])('refuses %j with one line and exit code 2, before anything starts', async (args, message) => {
    // Act
    const out = await start(args);
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(message);
    expect(out.stdout).toBe('');
  });

  it('names the Region whose port is taken, and the ports the Regions need', async () => {
    // Act: the second Region's port is the busy one.
    const out = await start(['--regions', 'us-east-1,us-east-2'], { PORT: String(scene.busyPort - 1) });
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `retryproof local: port ${scene.busyPort} (region us-east-2) is already in use: stop what listens there, or start with another PORT; ` +
        `the 2 regions take the ports from PORT up (for example PORT=${scene.busyPort + 1} for ${scene.busyPort + 1} to ${scene.busyPort + 2})\n`,
    );
    expect(dynamoJvmsOf(scene.dir)).toEqual([]);
  });
});

/** A route of a team's own, on an action it names. */
const ROUTE = `{ name: 'orders', signature: { scheme: 'standard-webhooks' }, secretName: 'orders/webhook', action: 'placeOrder', actionTimeSeconds: 5 }`;

describe('npm start -- --config PATH on a file it cannot run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  /** Writes `text` as the configuration file `name` and runs `npm start -- --config` on it. */
  const startOn = async (name: string, text: string | undefined) => {
    const path = join(dir, name);
    if (text !== undefined) await writeFile(path, text);
    return { path, out: await runScript('scripts/start.ts', ['--config', path], { ...process.env, RETRYPROOF_LOCAL_DIR: join(dir, 'data') }) };
  };

  it('names the route and the action nobody supplied', async () => {
    // Act
    const { path, out } = await startOn('orphan.config.ts', `export const config = { routes: [${ROUTE}], demo: false };\n`);
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `retryproof local: ${path}: route "orders": action "placeOrder" is not supplied; the actions supplied are: none ` +
        "(add it to actions: { placeOrder: { entry: 'src/actions/placeOrder.ts' } })\n",
    );
    expect(out.stdout).toBe('');
  });

  it('says the file is not there', async () => {
    const { path, out } = await startOn('missing.config.ts', undefined);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(`retryproof local: config file ${path} not found (give another with --config <path>)\n`);
  });

  it('says the file exports no config', async () => {
    const { path, out } = await startOn('unnamed.config.ts', `export const routes = [${ROUTE}];\n`);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `retryproof local: config file ${path} must export \`config\`, an object (export const config: RetryproofConfig = { routes: [...] }); found no such export\n`,
    );
  });

  it('says what is wrong with an invalid configuration, on one line', async () => {
    const { path, out } = await startOn('invalid.config.ts', `export const config = { routes: [{ ...${ROUTE}, actionTimeSeconds: 0 }], demo: false };\n`);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(new RegExp(`^retryproof local: ${path}: route "orders": actionTimeSeconds must be an integer from 1 to \\d+ .*, got 0\\n$`));
  });

  it('names the action whose module is not there, before anything starts', async () => {
    // Prepare: an absolute path, as a relative one is taken from the working directory.
    const entry = join(dir, 'place-order.mjs');
    // Act
    const { out } = await startOn('typo.config.ts', `export const config = { routes: [${ROUTE}], actions: { placeOrder: { entry: ${JSON.stringify(entry)} } }, demo: false };\n`);
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(`retryproof local: action "placeOrder": its entry ${entry} is not a file\n`);
  });

  it('says localSetup failed, exit code 1, and leaves no local service running', async () => {
    // Prepare: a module that exists, so the start gets as far as localSetup.
    const entry = join(dir, 'noop-action.mjs');
    await writeFile(entry, 'export default async () => ({});\n');
    const config = `export const config = { routes: [${ROUTE}], actions: { placeOrder: { entry: ${JSON.stringify(entry)} } }, demo: false };\n`;
    // Act
    const { path, out } = await startOn('failing-setup.config.ts', `${config}export async function localSetup() { throw new Error('no orders table today'); }\n`);
    // Assess
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`retryproof local: localSetup of ${path} failed: no orders table today\n`);
    expect(dynamoJvmsOf(join(dir, 'data'))).toEqual([]);
  }, 60_000);

  it('names the action whose module fails as it loads, exit code 2, and leaves no local service running', async () => {
    // Prepare: the module needs a variable nobody set, as a module reading its settings at load would.
    const entry = join(dir, 'needy-action.mjs');
    await writeFile(entry, "if (process.env.ORDERS_TABLE === undefined) throw new Error('ORDERS_TABLE is not set');\nexport default async () => ({});\n");
    // Act
    const { out } = await startOn('needy.config.ts', `export const config = { routes: [${ROUTE}], actions: { placeOrder: { entry: ${JSON.stringify(entry)} } }, demo: false };\n`);
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(`retryproof local: action "placeOrder": its entry ${entry} could not be loaded: ORDERS_TABLE is not set\n`);
    expect(dynamoJvmsOf(join(dir, 'data'))).toEqual([]);
  }, 60_000);

  it('says which option it does not know', async () => {
    const out = await runScript('scripts/start.ts', ['--confg', 'x.ts'], { ...process.env, RETRYPROOF_LOCAL_DIR: join(dir, 'data') });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('retryproof local: unknown option --confg; did you mean --config? (npm start -- --help)\n');
  });
});
