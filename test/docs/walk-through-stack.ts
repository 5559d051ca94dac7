/**
 * The local stack end to end, on the stack the README's walk-through started (issue 45: one
 * stack for the walk-through and the end-to-end checks, and one storm). readme-commands.test.ts
 * registers these after the documentation's blocks, on the same folder and port: the stack's
 * own lines are the log of the block that started it, and the storm's report is the one the
 * README's `npm run storm` wrote. Then Ctrl-C, and a restart on the same folder.
 *
 * What it checks beside the walk-through: one ready line and a 404 problem+json off the
 * webhook route, the 401 line, the demo route of each signature scheme (its banner line, `routes
 * list`, a signed send and its replay), the refusal of a second stack, `send --dup 3` tripping the
 * breaker and `routes resume`, the DLQ round trip in JSON, the storm's report, no warning
 * printed twice, a reconcile by hand that finds nothing left, the stop and the restart.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import { peekDeadLetters } from '../../cli/operations/dead-letters.ts';
import type { StormReport } from '../../cli/storm/storm-report.ts';
import type { Target } from '../../cli/target.ts';
import { DEFAULT_MAX_ATTEMPTS } from '../../lambdas/config/protocol-limits.ts';
import { readEndpointsFile } from '../../local/endpoints-file.ts';
import { DEMO_ROUTE, LOCAL_SCHEME_DEMO_ROUTES } from '../../local/local-settings.ts';
import { freePort } from '../../local/free-port.ts';
import { runScript, shutDown, startStack, until, withLocalTarget } from '../local/stack-process.ts';
import type { StackProcess } from '../local/stack-process.ts';
import { isAlive } from '../../local/endpoints-file.ts';

/** What the walk-through's run gives these checks, read when they run. */
export interface WalkThrough {
  /** The environment the blocks ran in: the stack's PORT and RETRYPROOF_LOCAL_DIR. */
  readonly env: () => NodeJS.ProcessEnv;
  /** The log of the block that started the stack in the background: the stack's stdout and stderr. */
  readonly stackLog: () => string;
  /** The stack log's length in bytes before and after the storm's block ran. */
  readonly stormWindow: () => { readonly from: number; readonly to: number };
  /** Whether every block passed: the checks build on the stack they leave running. */
  readonly blocksPassed: () => boolean;
}

/** The README's stack does not set RETRYPROOF_MAX_ATTEMPTS: the demo route's budget is the default. */
const MAX_ATTEMPTS = DEFAULT_MAX_ATTEMPTS;
/** The wait command's own line in the block that started the stack: not the stack's. */
const WAIT_LINE = /^the local stack is ready at /;

export function describeWalkThroughStack(walk: WalkThrough): void {
  describe('the walk-through\'s stack, end to end', () => {
    let restarted: StackProcess | undefined;
    const env = (): NodeJS.ProcessEnv => walk.env();
    const dir = (): string => env().RETRYPROOF_LOCAL_DIR ?? '';
    const url = (): string => `http://127.0.0.1:${env().PORT ?? ''}`;
    /** The stack's lines so far, without the wait command's. */
    const lines = (): string[] => walk.stackLog().split('\n').filter((l) => !WAIT_LINE.test(l));
    const withTarget = <T>(work: (t: Target) => Promise<T>): Promise<T> => withLocalTarget(env(), work);
    const cli = (args: readonly string[]) => runScript('cli/retryproof.ts', args, env());
    const completed = (route: string, key: string) =>
      until(
        `${route}/${key} to complete`,
        () => withTarget(async (t) => ((await inspectDelivery(t, route, key)).record?.status === 'COMPLETED' ? true : undefined)),
        60_000,
      );
    const stormReport = async (): Promise<StormReport> => JSON.parse(await readFile(join(dir(), 'storm-report.json'), 'utf8')) as StormReport;

    afterAll(async () => {
      // The last test stops the restarted stack itself; after a failure it may still run.
      await shutDown(restarted, dir());
    }, 90_000);

    it('printed exactly one line with its URL, and answers 404 problem+json off the webhook route', async () => {
      expect(walk.blocksPassed(), 'the walk-through failed; these checks run on its stack').toBe(true);
      expect(lines().filter((l) => l.includes('http://127.0.0.1:'))).toHaveLength(1);
      const answer = await fetch(`${url()}/elsewhere`, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
    });

    it('says on its own terminal which header a 401 lacked, and tells the sender no more than 401', async () => {
      // Act: a delivery with no signature headers at all.
      const answer = await fetch(`${url()}/webhooks/demo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      // Assess
      expect(answer.status).toBe(401);
      expect(await answer.text()).not.toMatch(/missing|webhook-id/);
      const line = await until('the 401 line', () => Promise.resolve(lines().find((l) => / in {3}demo\/.* 401 .*missing-signature/.test(l))), 10_000);
      expect(line).toContain('401 Unauthorized (missing-signature: standard-webhooks needs the headers webhook-id, webhook-timestamp, webhook-signature)');
    });

    it('prints each route’s local secret in the banner, and for v1a the signing key beside the public key', () => {
      // The demo route's secret is on the ready line ("(demo secret ...)"); every other route has a line of its own.
      for (const route of LOCAL_SCHEME_DEMO_ROUTES.filter((r) => r.name !== DEMO_ROUTE)) {
        expect(lines().some((l) => l.startsWith(`route ${route.name} (${route.signature.scheme},`)), route.name).toBe(true);
      }
      expect(lines().some((l) => / \(demo secret whsec_\S+\)/.test(l))).toBe(true);
      expect(lines().find((l) => l.startsWith('route demo-v1a '))).toMatch(/local signing key whsk_\S+ \(the receiver holds whpk_\S+\)/);
    });

    it('lists every demo route in `retryproof --local routes list`', async () => {
      const listed = await cli(['--local', 'routes', 'list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const routes = (JSON.parse(listed.stdout) as { route: string }[]).map((r) => r.route);
      expect(routes).toEqual(expect.arrayContaining(LOCAL_SCHEME_DEMO_ROUTES.map((r) => r.name)));
    }, 60_000);

    it.each(LOCAL_SCHEME_DEMO_ROUTES.map((r) => r.name))('accepts `npm run send -- --route %s --dup 1` as one delivery and one replay, and runs it once', async (route) => {
      // Act: every scheme's sender, as the README's senders table says.
      const sent = await runScript('scripts/send.ts', ['--route', route, '--dup', '1', '--json'], env());
      // Assess
      expect(sent.code, sent.stderr).toBe(0);
      const out = JSON.parse(sent.stdout) as { key: string; answers: { status: number; replayed: boolean }[] };
      expect(out.answers.map((a) => [a.status, a.replayed])).toEqual([
        [202, false],
        [202, true],
      ]);
      await completed(route, out.key);
    }, 90_000);

    it('refuses a second stack on the same folder, before it starts anything', async () => {
      const second = await runScript('scripts/start.ts', [], { ...env(), PORT: String(await freePort()) });
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/^retryproof local: a local stack already runs in .* \(pid \d+\)/);
    }, 60_000);

    /** The key of `send --dup 3`: its work runs once, before the breaker's pause or after the resume. */
    let dupKey = '';

    it('answers `send --dup 3` with one 202 and three replays, one line each', async () => {
      // Act
      const sent = await runScript('scripts/send.ts', ['--dup', '3', '--json'], env());
      // Assess
      expect(sent.code, sent.stderr).toBe(0);
      const out = JSON.parse(sent.stdout) as { key: string; answers: { status: number; replayed: boolean }[] };
      expect(out.answers.map((a) => [a.status, a.replayed])).toEqual([
        [202, false],
        [202, true],
        [202, true],
        [202, true],
      ]);
      dupKey = out.key;
      // One compact line per delivery in the stack's output, naming the key, never the body.
      const ofKey = () => lines().filter((l) => l.includes(`demo/${out.key}`) && / in /.test(l));
      await until('the four lines of the key', () => Promise.resolve(ofKey().length >= 4 ? true : undefined), 10_000);
      expect(ofKey()).toHaveLength(4);
      expect(walk.stackLog()).not.toContain('payout.requested');
    }, 60_000);

    it("lets the fourth copy trip the demo route's circuit breaker (threshold 3); `routes resume` reopens it, and the work has run once", async () => {
      // Assess: the copies of the previous test were 4 deliveries of one key.
      const listed = await cli(['--local', 'routes', 'list', '--json']);
      const states = JSON.parse(listed.stdout) as { route: string; state: string; pausedBy?: string }[];
      expect(states.find((r) => r.route === 'demo')).toMatchObject({ state: 'paused', pausedBy: 'circuit-breaker' });
      expect(lines().some((l) => l.startsWith('notice: retryproof: route demo paused') && l.includes(dupKey))).toBe(true);
      // Act
      const resumed = await cli(['--local', 'routes', 'resume', 'demo', '--json']);
      // Assess
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ route: 'demo', resumed: true });
      // The work ran before the pause, or was parked and ran after the resume: either way once.
      await completed('demo', dupKey);
      const ledger = await cli(['--local', 'ledger', '--key', dupKey, '--json']);
      expect(ledger.code, ledger.stderr).toBe(0);
      const entries = JSON.parse(ledger.stdout) as { idempotencyKey: string; status: string; amount: number }[];
      expect(entries).toEqual([expect.objectContaining({ idempotencyKey: dupKey, status: 'posted', amount: 1250 })]);
    }, 90_000);

    it('shows a delivery that fails beyond maxAttempts in `dlq list`; `dlq redrive` completes it once', async () => {
      // Prepare: the action fails on runs 1 to MAX_ATTEMPTS, so the last run spends the budget.
      const sent = await runScript('scripts/send.ts', ['--simulate', JSON.stringify({ failAttempts: MAX_ATTEMPTS }), '--json'], env());
      expect(sent.code, sent.stderr).toBe(0);
      const key = (JSON.parse(sent.stdout) as { key: string }).key;
      await until('the DLQ copy', () => withTarget(async (t) => ((await peekDeadLetters(t)).some((d) => d.key === key) ? true : undefined)), 60_000);
      // Act
      const listed = await cli(['dlq', 'list', '--local', '--json']);
      // Assess
      expect(listed.code, listed.stderr).toBe(0);
      const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
      expect(rows).toContainEqual(
        expect.objectContaining({
          route: 'demo',
          key,
          attempts: MAX_ATTEMPTS,
          reason: `retries exhausted after ${MAX_ATTEMPTS} attempts`,
          lastError: expect.stringContaining('RetryableActionError') as unknown,
          receivedAt: expect.any(Number) as unknown,
        }),
      );
      // Listing twice shows the same: a listing consumes nothing.
      const again = JSON.parse((await cli(['--local', '--json', 'dlq', 'list'])).stdout) as unknown[];
      expect(again).toHaveLength(rows.length);
      // Act: every dead letter, the storm's planned one too.
      const redrive = await cli(['--local', 'dlq', 'redrive', '--json']);
      // Assess
      expect(redrive.code, redrive.stderr).toBe(0);
      expect(JSON.parse(redrive.stdout)).toMatchObject({ mode: 'receive-send-delete', moved: rows.length });
      await completed('demo', key);
      const inspected = await cli(['--local', 'inspect', 'demo', key, '--json']);
      const found = JSON.parse(inspected.stdout) as { record: { status: string; attempts: number }; ledger: { status: string }[]; log: unknown[] };
      // The redrive gave a fresh budget: its first run (run MAX_ATTEMPTS + 1 in all) passes.
      expect(found.record).toMatchObject({ status: 'COMPLETED', attempts: 1, runs: MAX_ATTEMPTS + 1, redrives: 1 });
      expect(found.ledger.map((e) => e.status)).toEqual(['posted']);
      expect(found.log).toHaveLength(MAX_ATTEMPTS + 1);
    }, 120_000);

    it("survived the walk-through's retry storm: no double effect after reconciliation, nothing lost", async () => {
      // Assess: on the report the README's `npm run storm` wrote, not on its exit code alone.
      const report = await stormReport();
      expect(report.checks.filter((c) => !c.ok)).toEqual([]);
      expect(report.accepted).toBe(report.events);
      expect(report.events).toBeGreaterThanOrEqual(100);
      expect(report.sent).toBeGreaterThan(report.events);
      expect(report.replayed).toBeGreaterThan(0);
      for (const probe of Object.values(report.rejected)) expect(probe.asExpected).toBe(probe.count);
      expect(report.rejected['bad-signature'].count).toBeGreaterThan(0);
      expect(report.doubleEffects.keysLeft).toBe(0);
      expect(report.lost).toBe(0);
      expect(report.deadLettered.accountedFor).toBe(report.deadLettered.planned);
      expect(report.executorRestart).toMatch(/^done mid-run/);
      // A worker that dies after the effect leaves an extra entry when its work runs again, and
      // reconciliation reverses every one. Not one per planned crash: the executor restart can
      // kill a crash event's first run before its effect, and its next run does not crash.
      expect(report.behaviours['crash-after-effect'] ?? 0).toBeGreaterThan(0);
      const { keysWithSecondEffect, reversedEntries } = report.doubleEffects;
      expect(keysWithSecondEffect).toBeGreaterThan(0);
      expect(reversedEntries).toBeGreaterThanOrEqual(keysWithSecondEffect ?? Number.POSITIVE_INFINITY);
      expect(report.reconciliation).toMatchObject({ ran: true });
      expect(report.reconciliation.reversed).toBeGreaterThanOrEqual(reversedEntries ?? Number.POSITIVE_INFINITY);
    });

    it("reports the storm's breaker as the stack saw it: tripped exactly when the stack paused the demo route during the storm", async () => {
      // Whether its duplicates trip the breaker depends on timing (the README says so); the
      // report must say what happened, and the storm must resume a route it tripped.
      const report = await stormReport();
      const { from, to } = walk.stormWindow();
      const duringStorm = Buffer.from(walk.stackLog()).subarray(from, to).toString();
      const paused = duringStorm.split('\n').some((l) => l.startsWith('notice: retryproof: route demo paused'));
      expect(report.breaker).toMatchObject({ checked: true, pausedBefore: false, trippedDuringStorm: paused });
      const states = JSON.parse((await cli(['--local', 'routes', 'list', '--json'])).stdout) as { route: string; state: string }[];
      expect(states.find((r) => r.route === 'demo')).toMatchObject({ state: 'active' });
    });

    it('prints no warning twice: every line beside the per-delivery ones says something new', () => {
      // Per-delivery, per-execution and reconcile lines start with a clock and name a key;
      // anything else repeated is noise (such as Powertools' "No application metrics to
      // publish", once printed for every empty executor batch).
      const perEvent = /^\d\d:\d\d:\d\d\.\d{3} /;
      // npm's own warnings (`npm start` on a host Node older than the package's engines) are not the stack's.
      const other = lines().filter((l) => l.trim() !== '' && !perEvent.test(l) && !l.startsWith('npm warn '));
      const seen = new Map<string, number>();
      for (const line of other) seen.set(line, (seen.get(line) ?? 0) + 1);
      const repeated = [...seen].filter(([, count]) => count > 1).map(([line, count]) => `${count}x ${line}`);
      expect(repeated).toEqual([]);
      expect(walk.stackLog()).not.toContain('No application metrics');
      // The storm's forged and stale copies: each 401 line says which check failed.
      expect(lines().some((l) => l.includes("401 Unauthorized (bad-signature: webhook-signature does not match the body under the route's secret)"))).toBe(true);
      expect(lines().some((l) => l.includes('401 Unauthorized (stale-timestamp: webhook-timestamp is more than 300 s from this clock)'))).toBe(true);
    });

    it('runs one reconciliation by hand with `reconcile --json`, and finds nothing left to repair', async () => {
      // Act: the storm and the crash's page reconciled already; a run by hand over the same hour changes nothing.
      const run = await cli(['--local', 'reconcile', '--window', '1h', '--settle', '0s', '--json']);
      // Assess
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as { counts: Record<string, number>; stoppedEarly: boolean };
      expect(report.stoppedEarly).toBe(false);
      expect(report.counts.scanned).toBeGreaterThan((await stormReport()).events);
      expect(report.counts).toMatchObject({ reversed: 0, orphans: 0, missing: 0 });
    }, 60_000);

    it('stops on Ctrl-C: its last line says stopped, npm reports no failure, endpoints.json removed', async () => {
      // Prepare: the stack runs under `npm start` (which execs node); the signal goes to the stack's own pid.
      const endpoints = await readEndpointsFile(dir());
      if (endpoints === undefined) throw new Error(`no endpoints.json in ${dir()}`);
      // Act
      process.kill(endpoints.pid, 'SIGINT');
      await until('the stack to exit', () => Promise.resolve(isAlive(endpoints.pid) ? undefined : true), 60_000);
      // Assess: npm prints an error for a non-zero exit; its silence is the stack's 0.
      const log = walk.stackLog().trimEnd().split('\n');
      expect(log.at(-1)).toBe('retryproof local: stopped');
      expect(log.filter((l) => /^npm (error|ERR!)/.test(l))).toEqual([]);
      await expect(stat(join(dir(), 'endpoints.json'))).rejects.toThrow(/ENOENT/);
      const ledger = await cli(['--local', 'ledger']);
      expect(ledger.code).toBe(1);
      expect(ledger.stderr).toMatch(/no local stack is running/);
    }, 90_000);

    it('starts again on the same folder with everything it had: tables, queues, ledger; SIGTERM stops it with 0', async () => {
      // Prepare: what the walk-through left.
      restarted = await startStack(env());
      // Act
      const ledger = await cli(['--local', 'ledger', '--json']);
      // Assess: the walk-through's entries and the storm's are all still there.
      const entries = JSON.parse(ledger.stdout) as { route: string }[];
      const report = await stormReport();
      expect(entries.length).toBeGreaterThanOrEqual(2 + report.accepted - report.deadLettered.planned);
      expect(await restarted.stop('SIGTERM')).toBe(0);
    }, 120_000);
  });
}

