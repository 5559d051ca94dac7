/**
 * `npm start -- --config PATH` on a team's own configuration, in a folder of its own outside
 * the repository: its `localSetup` runs once the local services do, the variables it returns
 * reach the team's action module as it loads, a signed delivery runs that action once, and
 * the reconciler reads the team's own ledger.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import { resolveTarget } from '../../cli/target.ts';
import { readEndpointsFile } from '../../local/endpoints-file.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { runScript, shutDown, stackEnv, startStack, until } from './stack-process.ts';
import type { StackProcess } from './stack-process.ts';

/**
 * The configuration: one route on the team's action `record`, no demo. Its paths are
 * relative, so they are taken from the folder `npm start` runs in.
 */
const CONFIG = `import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const config = {
  routes: [{ name: 'orders', signature: { scheme: 'standard-webhooks' }, secretName: 'orders/webhook', action: 'record', actionTimeSeconds: 1 }],
  actions: { record: { entry: './record-action.mjs', ledger: './record-ledger.mjs' } },
  demo: false,
};

const here = dirname(fileURLToPath(import.meta.url));

export async function localSetup(local: { dynamoEndpoint: string; region: string }): Promise<Record<string, string>> {
  return {
    RECORD_FILE: join(here, 'effects.log'),
    RECORD_READS: join(here, 'ledger-reads.log'),
    RECORD_SETUP: JSON.stringify({ dynamoEndpoint: local.dynamoEndpoint, region: local.region }),
  };
}
`;

/** The action: reads its setting as it loads, as in a Lambda, and appends one line per run. */
const ACTION = `import { appendFile } from 'node:fs/promises';

const file = process.env.RECORD_FILE;
if (file === undefined) throw new Error('RECORD_FILE is not set');

export default async (ctx) => {
  const line = { route: ctx.route, key: ctx.key, attempt: ctx.attempt, postedAt: Date.now(), setup: process.env.RECORD_SETUP, sdkDynamo: process.env.AWS_ENDPOINT_URL_DYNAMODB };
  await appendFile(file, JSON.stringify(line) + '\\n');
  return { recorded: true };
};
`;

/** The ledger: the action's lines as entries; each read leaves a line of its own. */
const LEDGER = `import { appendFile, readFile } from 'node:fs/promises';

const lines = async () => (await readFile(process.env.RECORD_FILE, 'utf8').catch(() => '')).split('\\n').filter((l) => l !== '').map((l) => JSON.parse(l));

export default {
  post: () => Promise.reject(new Error('the action posts by itself')),
  listWindow: async (fromMs, toMs) => {
    await appendFile(process.env.RECORD_READS, fromMs + '..' + toMs + '\\n');
    return (await lines())
      .filter((l) => l.postedAt >= fromMs && l.postedAt < toMs)
      .map((l, i) => ({ entryId: 'e' + i, route: l.route, idempotencyKey: l.key, postedAt: l.postedAt, status: 'posted' }));
  },
  reverse: async () => 'not-found',
};
`;


const linesOf = async (path: string): Promise<string[]> =>
  (await readFile(path, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

describe('npm start -- --config PATH, on a configuration of a team\'s own', () => {
  let work: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  let endpoints: LocalEndpoints;

  beforeAll(async () => {
    // Prepare: the team's folder, its configuration and its two modules.
    work = await mkdtemp(join(tmpdir(), 'retryproof-team-'));
    dir = join(work, '.local');
    await writeFile(join(work, 'receiver.config.ts'), CONFIG);
    await writeFile(join(work, 'record-action.mjs'), ACTION);
    await writeFile(join(work, 'record-ledger.mjs'), LEDGER);
    env = await stackEnv(dir);
    stack = await startStack(env, { cwd: work, args: ['--config', 'receiver.config.ts'] });
    endpoints = (await readEndpointsFile(dir))!;
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(work, { recursive: true, force: true });
  }, 90_000);

  it('serves the file\'s routes only, says which file and actions it runs, and records the file in endpoints.json', () => {
    expect(stack!.lines[0]).toBe('retryproof local: config receiver.config.ts, actions record');
    expect(endpoints.configFile).toBe(join(work, 'receiver.config.ts'));
    // No demo: neither its routes of every scheme nor its ledger table.
    expect(endpoints.routes.map((r) => [r.name, r.action])).toEqual([['orders', 'record']]);
    expect(endpoints.ledgerTable).toBeUndefined();
  });

  it('runs the team\'s action once for a delivery and its copy, with what localSetup returned and the SDK pointed at the local services', async () => {
    // Act
    const sent = await runScript('scripts/send.ts', ['--route', 'orders', '--dup', '1', '--json'], env);
    // Assess
    expect(sent.code, sent.stderr).toBe(0);
    const { key, answers } = JSON.parse(sent.stdout) as { key: string; answers: { status: number; replayed: boolean }[] };
    expect(answers.map((a) => [a.status, a.replayed])).toEqual([
      [202, false],
      [202, true],
    ]);
    const target = await resolveTarget({ local: true }, env);
    try {
      await until('the delivery to complete', async () => ((await inspectDelivery(target, 'orders', key)).record?.status === 'COMPLETED' ? true : undefined), 30_000);
    } finally {
      target.close();
    }
    const runs = (await linesOf(join(work, 'effects.log'))).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(runs).toEqual([
      expect.objectContaining({
        route: 'orders',
        key,
        attempt: 1,
        setup: JSON.stringify({ dynamoEndpoint: endpoints.dynamoEndpoint, region: endpoints.region }),
        sdkDynamo: endpoints.dynamoEndpoint,
      }),
    ]);
    expect(stack!.lines.some((l) => l.includes(`exec orders/${key}  attempt 1 completed`))).toBe(true);
  }, 60_000);

  it('reconciles against the team\'s own ledger, and finds the one run accounted for', async () => {
    // Prepare: inspect, polled above, reads the ledger too.
    const readsBefore = (await linesOf(join(work, 'ledger-reads.log'))).length;
    // Act: one reconciliation by hand, as the storm asks for it.
    const answer = await fetch(`${stack!.url}/_local/reconcile`, { method: 'POST', body: JSON.stringify({ settleSeconds: 0 }) });
    // Assess
    expect(answer.status).toBe(200);
    const report = (await answer.json()) as { counts: Record<string, number> };
    expect(report.counts).toMatchObject({ scanned: 1, missing: 0, orphans: 0, reversed: 0 });
    expect(await linesOf(join(work, 'ledger-reads.log'))).toHaveLength(readsBefore + 1);
  }, 60_000);

  it('reconciles the same way from the CLI: `retryproof --local reconcile` runs the stack\'s own reconciler, with the team\'s ledger', async () => {
    // Prepare
    const readsBefore = (await linesOf(join(work, 'ledger-reads.log'))).length;
    // Act
    const out = await runScript('cli/retryproof.ts', ['--local', 'reconcile', '--settle', '0s', '--json'], env);
    // Assess: the team's record is read and its ledger entry found, which the repository's demo config could not do.
    expect(out.code).toBe(0);
    expect((JSON.parse(out.stdout) as { counts: Record<string, number> }).counts).toMatchObject({ scanned: 1, missing: 0, orphans: 0 });
    expect(await linesOf(join(work, 'ledger-reads.log'))).toHaveLength(readsBefore + 1);
  }, 60_000);

  it('has no demo for the storm to drive, and says so', async () => {
    // Act
    const storm = await runScript('scripts/storm.ts', ['--route', 'orders', '--events', '1'], env);
    // Assess
    expect(storm.code).toBe(2);
    expect(storm.stderr.split('\n')[0]).toBe(
      'retryproof storm: route "orders" runs the action "record": the storm drives the demo\'s payout action ' +
        '(its crashes and failures are asked for in the body); start the stack with demo: true and pick a demo route',
    );
  }, 60_000);

  it('shows the team\'s own ledger in `retryproof --local ledger` and `inspect`, read through the stack', async () => {
    // Prepare: the one key delivered above.
    const [run] = (await linesOf(join(work, 'effects.log'))).map((line) => JSON.parse(line) as { key: string });
    const readsBefore = (await linesOf(join(work, 'ledger-reads.log'))).length;
    // Act
    const ledger = await runScript('cli/retryproof.ts', ['--local', 'ledger', '--json'], env);
    const inspect = await runScript('cli/retryproof.ts', ['--local', 'inspect', 'orders', run?.key ?? '', '--json'], env);
    // Assess: the team's module answered both (each read leaves a line), not the demo's table.
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(JSON.parse(ledger.stdout)).toEqual([expect.objectContaining({ route: 'orders', idempotencyKey: run?.key, status: 'posted' })]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect((JSON.parse(inspect.stdout) as { ledger: unknown[] }).ledger).toEqual([expect.objectContaining({ idempotencyKey: run?.key })]);
    expect(await linesOf(join(work, 'ledger-reads.log'))).toHaveLength(readsBefore + 2);
  }, 60_000);

  it('stops on SIGINT with exit code 0', async () => {
    expect(await shutDown(stack, dir)).toBe(0);
    stack = undefined;
  }, 90_000);
});
