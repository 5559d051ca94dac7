/**
 * `retryproof --local wait`, and the CLI's answers about routes and bodies, against a real
 * local stack started the way the README does (`npm start` in the background), with the CLI
 * and `npm run send` as child processes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { runScript, shutDown, stackEnv, startStack } from '../local/stack-process.ts';
import type { RunResult, StackProcess } from '../local/stack-process.ts';

describe('retryproof --local wait, with no stack coming', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-wait-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up after --timeout with exit code 1 and one line saying what to check, after one whole line of progress', async () => {
    // Prepare: stderr lines with the time each was written (stderr is not a terminal).
    const lines: { at: number; text: string }[] = [];
    let stdout = '';
    // Act
    const code = await runCli(['--local', 'wait', '--timeout', '2'], {
      stdout: (t) => (stdout += t),
      stderr: (t) => lines.push({ at: performance.now(), text: t }),
      stderrIsTty: false,
      env: { RETRYPROOF_LOCAL_DIR: dir },
    });
    // Assess
    expect(code).toBe(EXIT.failed);
    expect(stdout).toBe('');
    const error = lines.at(-1)?.text ?? '';
    expect(error).toBe(
      `retryproof wait: the local stack in ${dir} was not ready within 2 s (no endpoints.json yet): ` +
        'is npm start running with this RETRYPROOF_LOCAL_DIR? Its output says why it stopped; or wait longer with --timeout S\n',
    );
    // One whole line per reason, not one a second: a stack started with & writes to the same terminal.
    expect(lines.slice(0, -1).map((l) => l.text)).toEqual([`waiting for the local stack in ${dir}: no endpoints.json yet\n`]);
  });

  it('keeps waiting past a stopped stack\'s endpoints.json, and says so', async () => {
    // Prepare: what a killed stack leaves (its pid is gone).
    await writeFile(join(dir, 'endpoints.json'), JSON.stringify({ version: 1, pid: 2 ** 22 + 12345, httpUrl: 'http://127.0.0.1:1', eventsTable: 'x' }));
    // Act
    const out = await runScript('cli/retryproof.ts', ['--local', 'wait', '--timeout', '1'], { ...process.env, RETRYPROOF_LOCAL_DIR: dir });
    // Assess
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toMatch(/not ready within 1 s \(endpoints\.json is a stopped stack's \(pid \d+ is gone\)\)/);
  });

  it('refuses --stack: a deployed stack is ready when cdk deploy returns', async () => {
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', 'wait'], { ...process.env, RETRYPROOF_LOCAL_DIR: dir });
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe('retryproof wait: wait works on the local stack only (--local); a deployed stack is ready when cdk deploy returns');
  });
});

describe('the CLI against a local stack started in the background', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  let waited: RunResult;
  /** The routes the running stack serves, as its endpoints.json lists them. */
  let routes: string;
  const cli = (...args: string[]): Promise<RunResult> => runScript('cli/retryproof.ts', args, env);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-cli-e2e-'));
    env = await stackEnv(dir);
    // `npm start & npx retryproof --local wait`: the wait starts first, before any endpoints.json.
    // The child's own limit past the wait's 100 s: a loaded machine starts the stack in over 60 s.
    const waiting = runScript('cli/retryproof.ts', ['--local', 'wait', '--timeout', '100'], env, 110_000);
    stack = await startStack(env);
    waited = await waiting;
    const endpoints = JSON.parse(await readFile(join(dir, 'endpoints.json'), 'utf8')) as { routes: { name: string }[] };
    routes = endpoints.routes.map((r) => r.name).join(', ');
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('wait, started before the stack, exits 0 once the stack is ready, having said what it waited for', () => {
    expect(waited.code, waited.stderr).toBe(EXIT.ok);
    expect(waited.stdout).toMatch(new RegExp(`^the local stack is ready at ${stack?.url ?? ''} \\(waited \\d+\\.\\d s\\)\\n$`));
    expect(waited.stderr).toMatch(new RegExp(`^waiting for the local stack in ${dir}: `));
  });

  it('wait answers at once when the stack is ready already, without a progress line', async () => {
    const out = await cli('--local', 'wait', '--json');
    expect(out.code).toBe(EXIT.ok);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toMatchObject({ ready: true, httpUrl: stack?.url, dir });
  });

  it('inspect of a route the stack does not have names its routes, exit code 2', async () => {
    const out = await cli('--local', 'inspect', 'nosuchroute', 'x');
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(`retryproof inspect: unknown route "nosuchroute"; the routes of the local stack in ${dir}: ${routes}`);
    // The configuration's routes, then the demo's, which the local stack adds.
    expect(routes).toMatch(/^stripe, demo\b/);
    const near = await cli('--local', 'inspect', 'demp', 'x');
    expect(near.stderr.split('\n')[0]).toMatch(/^retryproof inspect: unknown route "demp" \(did you mean "demo"\?\); the routes of /);
  });

  it('a one-Region stack is Region local-1: --region local-1 picks it, any other name is a usage error naming it', async () => {
    // Act
    const named = await cli('--local', '--region', 'local-1', 'dlq', 'list', '--json');
    const other = await cli('--local', '--region', 'us-east-1', 'dlq', 'list');
    // Assess
    expect(named.code, named.stderr).toBe(EXIT.ok);
    expect(other.code).toBe(EXIT.usage);
    expect(other.stderr.split('\n')[0]).toBe(`retryproof dlq list: --region us-east-1: the local stack in ${dir} has no such region; its regions: local-1`);
  });

  it('refuses a storm across --regions on a one-Region stack, saying how to start several', async () => {
    const out = await runScript('scripts/storm.ts', ['--regions'], env);
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe('retryproof storm: --regions needs a local stack of several Regions; this one runs one (local-1): start it with npm start -- --regions 2');
  });

  it('inspect of a known route and an unknown key says there is no record, exit code 1', async () => {
    const out = await cli('--local', 'inspect', 'demo', 'never-sent');
    expect(out.code).toBe(EXIT.failed);
    expect(out.stdout).toContain('no record for demo/never-sent (never received, or expired)');
  });

  it('routes pause of a route the stack does not have is a usage error naming its routes', async () => {
    const out = await cli('--local', 'routes', 'pause', 'strip');
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(`retryproof routes pause: unknown route "strip" (did you mean "stripe"?); the routes of the local stack in ${dir}: ${routes}`);
  });

  it('inspect --with-body says a completed delivery\'s body is not kept in the table', async () => {
    // Prepare: one delivery that completes.
    const sent = await runScript('scripts/send.ts', ['--id', 'order-body-0', '--amount', '4200'], env);
    expect(sent.code, sent.stderr).toBe(0);
    for (let i = 0; i < 100 && !(await cli('--local', 'inspect', 'demo', 'order-body-0')).stdout.includes('COMPLETED'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Act
    const withBody = await cli('--local', 'inspect', 'demo', 'order-body-0', '--with-body');
    // Assess: its size, and where it was: in the work message, gone with it once the work was done.
    expect(withBody.stdout).toContain('COMPLETED');
    expect(withBody.stdout).toMatch(/ {2}body {7}\d+ bytes, not kept in the table \(it travels in the work message\)/);
    expect(withBody.stdout).not.toContain('----- body of');
  });

  it('inspect --with-body prints the stored body between marker lines, and only when asked', async () => {
    // Prepare: one delivery with a known key that fails for good: a FAILED record keeps its body.
    const sent = await runScript('scripts/send.ts', ['--id', 'order-body-1', '--amount', '4200', '--simulate', '{"permanentError":true}'], env);
    expect(sent.code, sent.stderr).toBe(0);
    for (let i = 0; i < 100 && !(await cli('--local', 'inspect', 'demo', 'order-body-1')).stdout.includes('FAILED'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Act
    const withBody = await cli('--local', 'inspect', 'demo', 'order-body-1', '--with-body');
    const without = await cli('--local', 'inspect', 'demo', 'order-body-1');
    const json = await cli('--local', 'inspect', 'demo', 'order-body-1', '--with-body', '--json');
    // Assess: the text between the markers is the body, byte for byte as --json gives it.
    expect(withBody.code, withBody.stderr).toBe(EXIT.ok);
    const lines = withBody.stdout.split('\n');
    const start = lines.findIndex((l) => /^----- body of demo\/order-body-1 \(\d+ bytes\) -----$/.test(l));
    const end = lines.indexOf('----- end of body -----');
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const shown = lines.slice(start + 1, end).join('\n');
    expect(JSON.parse(shown)).toMatchObject({ type: 'payout.requested', amount: 4200, currency: 'EUR' });
    expect((JSON.parse(json.stdout) as { record: { body: string } }).record.body).toBe(shown);
    expect(without.stdout).not.toContain('----- body of');
    expect(without.stdout).not.toContain('payout.requested');
  });

  it('redrive takes back FAILED work selected by key prefix, each record once, after a dry run that changes nothing; a bad selection is a usage error', async () => {
    // Prepare: three deliveries whose downstream refuses their first run for good.
    for (const n of [0, 1, 2]) {
      const sent = await runScript('scripts/send.ts', ['--id', `redrive-e2e-${n}`, '--simulate', '{"permanentErrorRuns":1}'], env);
      expect(sent.code, sent.stderr).toBe(0);
    }
    const statusOf = async (n: number): Promise<string> => ((JSON.parse((await cli('--local', 'inspect', 'demo', `redrive-e2e-${n}`, '--json')).stdout) as { record?: { status?: string } }).record?.status ?? '');
    for (let i = 0; i < 100 && (await Promise.all([0, 1, 2].map(statusOf))).some((s) => s !== 'FAILED'); i++) await new Promise((resolve) => setTimeout(resolve, 200));
    // Act
    const dry = await cli('--local', 'redrive', '--route', 'demo', '--key', 'redrive-e2e-', '--dry-run', '--json');
    const run = await cli('--local', 'redrive', '--route', 'demo', '--key', 'redrive-e2e-');
    const again = await cli('--local', 'redrive', '--route', 'demo', '--key', 'redrive-e2e-', '--json');
    const bare = await cli('--local', 'redrive');
    const badSince = await cli('--local', 'redrive', '--since', 'yesterday');
    // Assess
    expect(dry.code, dry.stderr).toBe(EXIT.ok);
    expect(JSON.parse(dry.stdout)).toMatchObject({ count: 3, byRoute: { demo: 3 } });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toBe('3 records redriven of 3 selected\n');
    expect(JSON.parse(again.stdout)).toEqual({ total: 0, redriven: 0, skipped: 0, unsendable: 0, interrupted: false });
    for (let i = 0; i < 100 && (await Promise.all([0, 1, 2].map(statusOf))).some((s) => s !== 'COMPLETED'); i++) await new Promise((resolve) => setTimeout(resolve, 200));
    const record = (JSON.parse((await cli('--local', 'inspect', 'demo', 'redrive-e2e-0', '--json')).stdout) as { record: Record<string, unknown> }).record;
    expect(record).toMatchObject({ status: 'COMPLETED', runs: 2, redrives: 1 });
    expect(bare.code).toBe(EXIT.usage);
    expect(bare.stderr.split('\n')[0]).toBe('retryproof redrive: say what to redrive: --route, --since, --until, --error or --key (or --all for every FAILED record)');
    expect(badSince.code).toBe(EXIT.usage);
    expect(badSince.stderr.split('\n')[0]).toBe('retryproof redrive: --since must be an ISO 8601 instant (2026-12-03T10:00:00Z) or an age (90m, 24h, 7d), got "yesterday"');
  });
});
