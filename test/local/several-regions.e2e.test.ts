/**
 * Several Regions on the local stack, as the README's walk-through runs them: `npm start --
 * --regions 2` as a child process with fast timings, a delivery to one Region and its copy to
 * the other, the CLI's `--local --region`, and a scaled-down storm whose copies go to both
 * Regions in turn while workers die after their effects.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/errors.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { newKey, sampleBody, signSample, webhookUrl } from '../../local/sample-delivery.ts';
import type { StormReport } from '../../cli/storm/storm-report.ts';
import { STORM_ACTION_TIME, freePortRun, runScript, shutDown, stackEnv, startStack, until } from './stack-process.ts';
import type { RunResult, StackProcess } from './stack-process.ts';

/** What `retryproof inspect --json` prints, as far as these tests read it. */
interface InspectView {
  readonly record: { readonly status: string; readonly hits: number; readonly runs: number } | null;
  readonly log: readonly unknown[];
  readonly ledger: readonly { readonly status: string; readonly amount: number }[];
}

describe('npm start -- --regions 2', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let stack: StackProcess | undefined;
  let endpoints: LocalEndpoints;
  const cli = (...args: string[]): Promise<RunResult> => runScript('cli/retryproof.ts', args, env);
  const regionUrl = (i: number): string => endpoints.regions?.[i]?.httpUrl ?? '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-regions-'));
    port = await freePortRun(2);
    env = await stackEnv(dir, { PORT: String(port), ...STORM_ACTION_TIME });
    stack = await startStack(env, { args: ['--regions', '2'] });
    endpoints = JSON.parse(await readFile(join(dir, 'endpoints.json'), 'utf8')) as LocalEndpoints;
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('answers on two ports, lists both in endpoints.json with their own queues, and names both in its banner', async () => {
    // Assess: the file, with the first Region in the top-level fields older readers use.
    expect(endpoints.regions?.map((r) => [r.name, r.httpUrl])).toEqual([
      ['local-1', `http://127.0.0.1:${port}`],
      ['local-2', `http://127.0.0.1:${port + 1}`],
    ]);
    const [first, second] = endpoints.regions ?? [];
    expect(endpoints.httpUrl).toBe(first?.httpUrl);
    expect(endpoints.queueUrl).toBe(first?.queueUrl);
    expect(first?.queueUrl).toMatch(/\/retryproof-work$/);
    expect(second?.queueUrl).toMatch(/\/retryproof-work-local-2$/);
    expect(second?.dlqUrl).toMatch(/\/retryproof-work-local-2-dlq$/);
    expect(stack!.lines).toContain(
      `retryproof local: 2 regions on one events table, each with its own queue, DLQ and executor: local-1 http://127.0.0.1:${port}, local-2 http://127.0.0.1:${port + 1}`,
    );
    // Each gateway answers for its own Region, from this one process.
    for (const region of endpoints.regions ?? []) {
      const status = await fetch(`${region.adminUrl}/_local/status`);
      expect(status.status).toBe(200);
      expect(await status.json()).toMatchObject({ pid: endpoints.pid, region: region.name, queue: { visible: 0 } });
    }
  });

  it('replays in local-2 a key local-1 accepted (Idempotent-Replayed: true), and runs its work once', async () => {
    // Prepare: one signed delivery, byte for byte the same in both Regions.
    const route = endpoints.routes.find((r) => r.name === 'demo')!;
    const key = newKey(route);
    const signed = signSample(route, route.secret, key, sampleBody(route, key, { type: 'payout.requested', amount: 4200, currency: 'EUR' }), Math.floor(Date.now() / 1000));
    const deliver = (base: string) => fetch(webhookUrl(base, 'demo'), { method: 'POST', headers: signed.headers, body: signed.body });
    // Act
    const inFirst = await deliver(regionUrl(0));
    const inSecond = await deliver(regionUrl(1));
    // Assess: the second Region found the first one's claim in the shared table.
    expect(inFirst.status).toBe(202);
    expect(inFirst.headers.get('idempotent-replayed')).toBeNull();
    expect(inSecond.status).toBe(202);
    expect(inSecond.headers.get('idempotent-replayed')).toBe('true');
    expect(await inSecond.json()).toEqual(await inFirst.json());
    const found = await until(
      `demo/${key} to complete`,
      async () => {
        const out = await cli('--local', 'inspect', 'demo', key, '--json');
        const view = JSON.parse(out.stdout) as InspectView;
        return view.record?.status === 'COMPLETED' ? view : undefined;
      },
      30_000,
    );
    expect(found.record).toMatchObject({ status: 'COMPLETED', hits: 2, runs: 1 });
    expect(found.log).toHaveLength(1);
    expect(found.ledger.map((e) => [e.status, e.amount])).toEqual([['posted', 4200]]);
    // Each Region's own line: the first accepted, the second replayed, and the first's executor ran it.
    expect(stack!.lines.some((l) => new RegExp(`^\\S+ local-1 in   demo/${key}  202 accepted `).test(l))).toBe(true);
    expect(stack!.lines.some((l) => new RegExp(`^\\S+ local-2 in   demo/${key}  202 replayed `).test(l))).toBe(true);
    expect(stack!.lines.filter((l) => new RegExp(`^\\S+ local-\\d exec demo/${key} `).test(l))).toEqual([expect.stringMatching(/ local-1 exec .* attempt 1 completed/)]);
  }, 60_000);

  it('takes --region on a --local verb: that Region\'s DLQ, gateway and reconciler', async () => {
    // Act
    const listed = await cli('--local', '--region', 'local-2', 'dlq', 'list', '--json');
    const waited = await cli('--local', '--region', 'local-2', 'wait', '--json');
    const reconciled = await cli('--local', '--region', 'local-2', 'reconcile', '--window', '1h', '--settle', '0s', '--json');
    // Assess
    expect(listed.code, listed.stderr).toBe(EXIT.ok);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    expect(JSON.parse(waited.stdout)).toMatchObject({ ready: true, httpUrl: regionUrl(1), regions: [{ name: 'local-1' }, { name: 'local-2' }] });
    expect(reconciled.code, reconciled.stderr).toBe(EXIT.ok);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ counts: { reenqueued: 0, reversed: 0 } });
    // The run was local-2's own reconciler, on the table every Region shares.
    await until('local-2\'s reconcile line', () => Promise.resolve(stack!.lines.find((l) => / local-2 reconcile {2}scanned [1-9]/.test(l))), 10_000);
  }, 60_000);

  it('refuses an unknown --region with exit code 2, listing the Regions the stack runs', async () => {
    // Act
    const unknown = await cli('--local', '--region', 'us-east-1', 'dlq', 'list');
    const mistyped = await cli('--local', '--region', 'local2', 'routes', 'list');
    // Assess
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr.split('\n')[0]).toBe(`retryproof dlq list: --region us-east-1: the local stack in ${dir} has no such region; its regions: local-1, local-2`);
    expect(mistyped.code).toBe(EXIT.usage);
    expect(mistyped.stderr.split('\n')[0]).toBe(
      `retryproof routes list: --region local2: the local stack in ${dir} has no such region (did you mean "local-2"?); its regions: local-1, local-2`,
    );
  }, 30_000);

  it('survives a storm whose copies go to both Regions in turn, workers dying after the effect: one effect per key, 0 lost, 0 doubled', async () => {
    // Act: small enough for CI; a quarter of the workers die after their effect.
    const reportPath = join(dir, 'storm.json');
    const storm = await runScript(
      'scripts/storm.ts',
      ['--regions', '--events', '40', '--crash', '0.25', '--slow', '0', '--fail', '0', '--dead-letter', '0', '--seed', '20261202', '--quiet', '--json-out', reportPath],
      env,
      120_000,
    );
    // Assess: on the report, not on the exit code alone.
    const report = JSON.parse(await readFile(reportPath, 'utf8')) as StormReport;
    expect(report.checks.filter((c) => !c.ok), storm.stdout).toEqual([]);
    expect(storm.code).toBe(EXIT.ok);
    expect(report.accepted).toBe(40);
    expect(report.endState).toEqual({ keys: 40, oneEffect: 40, lost: 0, doubled: 0 });
    // Both Regions won claims and replayed the other's: the copies really went to both.
    expect(report.regions?.map((r) => r.name)).toEqual(['local-1', 'local-2']);
    for (const region of report.regions ?? []) {
      expect(region.accepted, region.name).toBeGreaterThan(0);
      expect(region.replayed, region.name).toBeGreaterThan(0);
    }
    // Every key was accepted in one Region or the other (more only if a 5xx made a retry the first acceptance).
    expect((report.regions ?? []).reduce((sum, r) => sum + r.accepted, 0)).toBeGreaterThanOrEqual(40);
    // Workers died after their effects; their second effects were reversed.
    expect(report.behaviours['crash-after-effect']).toBeGreaterThan(0);
    expect(report.doubleEffects.keysWithSecondEffect).toBeGreaterThan(0);
    expect(report.doubleEffects.reversedEntries).toBeGreaterThanOrEqual(report.doubleEffects.keysWithSecondEffect ?? Number.POSITIVE_INFINITY);
    expect(report.executorRestart).toMatch(/^done mid-run .*2 regions\)$/);
    expect(storm.stdout).toMatch(/end state +40 of 40 keys planned to complete hold exactly one effect; lost 0, doubled 0/);
  }, 150_000);
});
