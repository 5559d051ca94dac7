/**
 * The CLI reads its settings from the receiver as it runs, never from the repository's
 * retryproof.config.ts: a local stack started with RETRYPROOF_SETTLE_S=0 is reconciled up to now
 * by a plain `--local reconcile`, and a stack started with `--config <file>` shows that file's
 * routes and is reconciled with that file's margins. Real local stacks (`npm start` as a child
 * process, as test/local/stack-process.ts starts them), one per describe block; the CLI as a
 * child process, or in-process (runCli) where the order of stdout and stderr lines matters.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { config as repositoryConfig } from '../../retryproof.config.ts';
import { runScript, shutDown, stackEnv, startStack, until, withLocalTarget } from '../local/stack-process.ts';
import type { RunResult, StackProcess } from '../local/stack-process.ts';

interface Report {
  readonly window: { fromMs: number; toMs: number };
  readonly counts: { reversed: number };
}

describe('a local stack started with RETRYPROOF_SETTLE_S=0: the CLI reconciles with the settle margin it runs', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  const cli = (...args: string[]): Promise<RunResult> => runScript('cli/retryproof.ts', args, env);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-settle0-'));
    env = await stackEnv(dir, { RETRYPROOF_SETTLE_S: '0', RETRYPROOF_VISIBILITY_TIMEOUT_S: '1', RETRYPROOF_ACTION_TIME_S: '3' });
    stack = await startStack(env);
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('after a worker died past its effect, reconcile with no flags keeps one ledger entry and reverses the other', async () => {
    // Prepare: the repository's file says 300 s; the stack runs 0 s. A run over the file's
    // margin would end 5 minutes ago and miss this delivery altogether.
    expect(repositoryConfig.reconciliation?.settleSeconds).toBe(300);
    const key = 'crash-cli-1';
    const sent = await runScript('scripts/send.ts', ['--simulate', '{"crashAfterEffect":true}', '--id', key], env);
    expect(sent.code, sent.stderr).toBe(0);
    // The first run posted and died; the second, after the lease, posted again and completed.
    await until(
      'the delivery to complete, after its crashed first run',
      async () => {
        const out = await cli('--local', 'inspect', 'demo', key, '--json');
        return (JSON.parse(out.stdout) as { record: { status: string } | null }).record?.status === 'COMPLETED' ? true : undefined;
      },
      60_000,
    );
    const before = await cli('--local', 'ledger', '--key', key, '--json');
    expect((JSON.parse(before.stdout) as { status: string }[]).map((e) => e.status)).toEqual(['posted', 'posted']);
    // Act
    const startedAt = Date.now();
    const reconciled = await cli('--local', 'reconcile', '--json');
    const ledger = await cli('--local', 'ledger', '--key', key, '--json');
    // Assess
    expect(reconciled.code, reconciled.stderr).toBe(EXIT.ok);
    const report = JSON.parse(reconciled.stdout) as Report;
    expect(report.counts.reversed).toBe(1);
    // Settle 0: the window ends now, not 300 s ago.
    expect(report.window.toMs).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(ledger.code, ledger.stderr).toBe(EXIT.ok);
    const entries = JSON.parse(ledger.stdout) as { status: string }[];
    expect(entries.filter((e) => e.status === 'posted')).toHaveLength(1);
    expect(entries.filter((e) => e.status === 'reversed')).toHaveLength(1);
  });
});

/** A team's configuration: routes and margins of its own, unlike retryproof.config.ts's. */
const CONFIG = `export const config = {
  routes: [
    { name: 'alpha', signature: { scheme: 'standard-webhooks' }, secretName: 'team/alpha', action: 'record', actionTimeSeconds: 1 },
    { name: 'beta', signature: { scheme: 'standard-webhooks' }, secretName: 'team/beta', action: 'record', actionTimeSeconds: 1 },
  ],
  actions: { record: { entry: './record-action.mjs' } },
  reconciliation: { windowHours: 2, everyMinutes: 30, settleSeconds: 120, stuckAfterSeconds: 600 },
  demo: false,
};
`;
const ACTION = 'export default async () => ({ recorded: true });\n';

/** A work message as the executor reads it, as a DLQ copy that carries an old reason. */
function workMessage(route: string, key: string, reason: string): string {
  return JSON.stringify({ v: 1, route, key, fingerprint: 'f'.repeat(64), receivedAt: Date.now() - 60_000, body: '{}', bodyEncoding: 'utf8', headers: {}, reason });
}

describe('a local stack started with --config <file>: the CLI shows that file\'s routes and reconciles with its margins', () => {
  let work: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  const cli = (...args: string[]): Promise<RunResult> => runScript('cli/retryproof.ts', args, env);

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'retryproof-team-cli-'));
    dir = join(work, '.local');
    await writeFile(join(work, 'team.config.ts'), CONFIG);
    await writeFile(join(work, 'record-action.mjs'), ACTION);
    env = await stackEnv(dir);
    stack = await startStack(env, { cwd: work, args: ['--config', 'team.config.ts'] });
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(work, { recursive: true, force: true });
  }, 90_000);

  it('routes list shows the file\'s routes, not the repository\'s; pause and resume work on them', async () => {
    const listed = await cli('--local', 'routes', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(EXIT.ok);
    expect((JSON.parse(listed.stdout) as { route: string }[]).map((r) => r.route)).toEqual(['alpha', 'beta']);
    const paused = await cli('--local', 'routes', 'pause', 'alpha', '--json');
    expect(JSON.parse(paused.stdout)).toEqual({ route: 'alpha', paused: true });
    const resumed = await cli('--local', 'routes', 'resume', 'alpha', '--json');
    expect(JSON.parse(resumed.stdout)).toMatchObject({ route: 'alpha', resumed: true });
    const demo = await cli('--local', 'routes', 'pause', 'demo');
    expect(demo.code).toBe(EXIT.usage);
    expect(demo.stderr.split('\n')[0]).toBe(`retryproof routes pause: unknown route "demo"; the routes of the local stack in ${dir}: alpha, beta`);
  });

  it('reconcile with no flags covers [now - 2 h, now - 120 s], the file\'s window and settle margin', async () => {
    // Act
    const startedAt = Date.now();
    const out = await cli('--local', 'reconcile', '--json');
    const endedAt = Date.now();
    // Assess
    expect(out.code, out.stderr).toBe(EXIT.ok);
    const { window } = JSON.parse(out.stdout) as Report;
    expect(window.toMs).toBeGreaterThanOrEqual(startedAt - 120_000);
    expect(window.toMs).toBeLessThanOrEqual(endedAt - 120_000);
    expect(window.toMs - window.fromMs).toBe(2 * 3_600_000 - 120_000);
  });

  it('reconcile --window shorter than the running settle margin is a usage error naming that margin', async () => {
    const out = await cli('--local', 'reconcile', '--window', '1m');
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(
      "retryproof reconcile: --window 1m must be longer than --settle 120s (the receiver's settle margin): a run reconciles [now - window, now - settle]",
    );
  });

  it('receivers --local lists the one local receiver', async () => {
    const out = await cli('--local', 'receivers', '--json');
    expect(out.code, out.stderr).toBe(EXIT.ok);
    expect(JSON.parse(out.stdout)).toEqual([expect.objectContaining({ stack: 'local', receiver: 'local', region: 'local-1' })]);
  });

  it('dlq redrive moves what can run, keeps a removed route\'s message with a reason of today, and its progress ends where it ended', async () => {
    // Prepare: two copies of a route the stack runs, one of a route it no longer has.
    await withLocalTarget(env, async (t) => {
      for (const [route, key] of [['alpha', 'k-1'], ['alpha', 'k-2'], ['gone', 'k-gone']] as const) {
        await t.sqs.send(new SendMessageCommand({ QueueUrl: t.dlqUrl, MessageBody: workMessage(route, key, `route "${route}" is not configured`) }));
      }
    });
    // Act: in-process, so stdout's and stderr's lines are seen in the order they were written.
    const lines: string[] = [];
    const code = await runCli(['--local', 'dlq', 'redrive'], {
      stdout: (t) => lines.push(`out ${t}`),
      stderr: (t) => lines.push(`err ${t}`),
      stderrIsTty: false,
      env,
    });
    // Assess
    expect(code).toBe(EXIT.ok);
    expect(lines).toEqual([
      'err redrive: 0/3 moved\n',
      `out kept in the DLQ: gone/k-gone: route "gone" is not in the configuration the local stack in ${dir} runs\n`,
      'err redrive: 2/3 moved, 1 kept in the DLQ\n',
      'out moved 2 messages from the DLQ to the work queue; 1 message kept in the DLQ (route not in the running configuration)\n',
    ]);
    const listed = await cli('--local', 'dlq', 'list', '--json');
    const gone = (JSON.parse(listed.stdout) as { route: string; key: string; reason: string }[]).filter((r) => r.route === 'gone');
    expect(gone).toHaveLength(1);
    expect(gone[0]?.reason).toMatch(
      new RegExp(`^route "gone" is not in the configuration the local stack in ${dir} runs \\(its routes: alpha, beta\\); kept in the DLQ by a redrive at \\d{4}-\\d\\d-\\d\\dT`),
    );
  });
});
