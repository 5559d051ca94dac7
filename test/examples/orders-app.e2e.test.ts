/**
 * The orders-app on the local stack, as its README runs it:
 * `npm start -- --config examples/orders-app/retryproof.config.ts`, with ORDERS_API_URL on
 * a fake orders API this test runs. Retries run the app's own action once per key, and a
 * real crash after the action's effect (the stack process SIGKILLed by the orders API while
 * it holds the request) ends, after a restart and a reconciliation, in one order and one
 * ledger entry: the dead run booked nothing, the rerun got the same order back and booked
 * it, and the reconciler has nothing to reverse.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import type { Target } from '../../cli/target.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { LOCAL_LEDGER_TABLE } from '../../examples/orders-app/retryproof.config.ts';
import { cancelOrderWithApi } from '../../examples/orders-app/src/cancel-order.ts';
import { startFakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
import type { FakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
import { DynamoDbOrdersLedger } from '../../examples/orders-app/src/dynamodb-orders-ledger.ts';
import type { OrderEntry } from '../../examples/orders-app/src/order-entry.ts';
import { orderEntries } from './order-entries.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { readEndpointsFile } from '../../local/endpoints-file.ts';
import { dynamoJvmsOf, runScript, shutDown, stackEnv, startStack, until, withLocalTarget } from '../local/stack-process.ts';
import type { StackProcess } from '../local/stack-process.ts';
import { isAlive } from '../../local/endpoints-file.ts';

const CONFIG = 'examples/orders-app/retryproof.config.ts';
const ROUTE = 'orders';



describe('the orders-app on the local stack (npm start -- --config examples/orders-app/retryproof.config.ts)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let api: FakeOrdersApi;
  let stack: StackProcess | undefined;
  /** The orders API's key whose first request kills the stack, once. */
  let crashOn: string | undefined;

  const withTarget = <T>(work: (t: Target) => Promise<T>): Promise<T> => withLocalTarget(env, work);

  const statusOf = (key: string) => withTarget(async (t) => (await inspectDelivery(t, ROUTE, key)).record?.status);
  const completed = (key: string) =>
    until(`${ROUTE}/${key} to complete`, async () => ((await statusOf(key)) === 'COMPLETED' ? true : undefined), 60_000);
  /** The example's own ledger entries for a key, read from the DynamoDB Local the stack runs now. */
  const ledgerOf = async (key: string): Promise<OrderEntry[]> => {
    const endpoints = await readEndpointsFile(dir);
    if (endpoints === undefined) throw new Error(`no endpoints.json in ${dir}`);
    const dynamo = localDynamoClient(endpoints.dynamoEndpoint);
    try {
      const ledger = new DynamoDbOrdersLedger(dynamo, LOCAL_LEDGER_TABLE, cancelOrderWithApi(api.url));
      const entries = await orderEntries(ledger, Date.now() - 3_600_000, Date.now() + 1);
      return entries.filter((e) => e.route === ROUTE && e.idempotencyKey === key).sort((a, b) => a.postedAt - b.postedAt);
    } finally {
      dynamo.destroy();
    }
  };
  const reconcile = async (body: Record<string, number>): Promise<ReconcileReport> => {
    const answer = await fetch(`${stack!.url}/_local/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(answer.status).toBe(200);
    return (await answer.json()) as ReconcileReport;
  };
  const send = async (key: string, copies: number) => {
    const sent = await runScript('scripts/send.ts', ['--route', ROUTE, '--id', key, '--amount', '4200', '--dup', String(copies - 1), '--json'], env);
    expect(sent.code, sent.stderr).toBe(0);
    return (JSON.parse(sent.stdout) as { answers: { status: number; replayed: boolean }[] }).answers;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orders-app-e2e-'));
    api = await startFakeOrdersApi({
      afterEffect: async (key) => {
        // A real crash after the effect: the order exists, the executor never hears of it.
        if (key !== crashOn || stack === undefined) return;
        crashOn = undefined;
        await stack.stop('SIGKILL');
      },
    });
    env = await stackEnv(dir, {
      // The example imports the package by its name; in this checkout its sources answer (examples/self-reference.ts).
      NODE_OPTIONS: `--import=${fileURLToPath(new URL('../../examples/self-reference.ts', import.meta.url))}`,
      ORDERS_API_URL: api.url,
      // A 6 s lease (3 x 2 s): the crashed run's lease runs out while the stack restarts.
      RETRYPROOF_ACTION_TIME_S: '2',
      // Long enough that the crashed run's own message stays away: the reconciler's re-enqueue runs it.
      RETRYPROOF_VISIBILITY_TIMEOUT_S: '60',
    });
    stack = await startStack(env, { args: ['--config', CONFIG] });
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('runs its own action once per key: 3 keys delivered 4 times each, 3 orders, 3 ledger entries', async () => {
    // Prepare
    const keys = [1, 2, 3].map(() => `msg_${randomUUID()}`);
    // Act
    const answers = (await Promise.all(keys.map((key) => send(key, 4)))).flat();
    // Assess
    expect(answers).toHaveLength(12);
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(3);
    for (const key of keys) await completed(key);
    expect(keys.map((key) => api.effects(`${ROUTE}/${key}`))).toEqual([1, 1, 1]);
    expect(api.orders()).toHaveLength(3);
    const entries = await Promise.all(keys.map(ledgerOf));
    expect(entries.map((forKey) => forKey.map((e) => e.status))).toEqual([['posted'], ['posted'], ['posted']]);
  }, 120_000);

  it('survives a crash after the effect: one order, booked once by the rerun that got it back, nothing to reverse', async () => {
    // Prepare: the orders API kills the stack when this key's order is placed.
    const key = `msg_${randomUUID()}`;
    crashOn = `${ROUTE}/${key}`;
    const first = stack!;
    // Act 1: the delivery is accepted; its run places the order and dies before it hears of it.
    expect((await send(key, 1)).map((a) => a.status)).toEqual([202]);
    expect(await until('the orders API to kill the stack', () => Promise.resolve(first.child.signalCode ?? undefined), 60_000)).toBe('SIGKILL');
    expect(api.effects(`${ROUTE}/${key}`)).toBe(1);
    // The stack's DynamoDB Local outlived it: a JVM is its own process. The order stands, and
    // no entry claims it: the action books an order only once the API has answered with it.
    expect(await ledgerOf(key)).toEqual([]);
    const orphans = dynamoJvmsOf(dir);
    expect(orphans).toHaveLength(1);
    for (const pid of orphans) process.kill(pid, 'SIGTERM');
    await until('the orphaned JVM to end', () => Promise.resolve(orphans.some(isAlive) ? undefined : true), 30_000);

    // Act 2: restart on the same folder. The crashed run's message was never deleted: it comes
    // back (kept by the queue's own data folder) once the run's lease is over, and runs again.
    stack = await startStack(env, { args: ['--config', CONFIG] });
    expect(await statusOf(key)).toBe('EXECUTING');
    await until(`${ROUTE}/${key} to complete again`, async () => ((await statusOf(key)) === 'COMPLETED' ? true : undefined), 120_000);
    // Assess 1: the orders API, honouring Idempotency-Key, answered the rerun with the same
    // order, and the rerun booked it: one order, one entry, by run 2.
    expect(api.effects(`${ROUTE}/${key}`)).toBe(1);
    expect(api.requests(`${ROUTE}/${key}`)).toBe(2);
    expect(api.orders()).toHaveLength(4);
    const order = api.orders().find((o) => o.key === `${ROUTE}/${key}`);
    expect((await ledgerOf(key)).map((e) => [e.orderId, e.attempt, e.status])).toEqual([[order?.orderId, 2, 'posted']]);

    // Act 3: the next reconciliation.
    const report = await reconcile({ settleSeconds: 0 });
    // Assess 2: nothing of this key to reverse or report; the order still stands, booked once.
    expect(report.reversals.filter((r) => r.key === key)).toEqual([]);
    expect(report.needsAttention.filter((n) => n.key === key)).toEqual([]);
    expect(api.standing(`${ROUTE}/${key}`)).toBe(1);
    expect((await ledgerOf(key)).map((e) => e.status)).toEqual(['posted']);
  }, 240_000);

  it('stops on SIGINT with exit code 0, and leaves no DynamoDB Local JVM behind', async () => {
    expect(await stack!.stop('SIGINT')).toBe(0);
    expect(dynamoJvmsOf(dir)).toEqual([]);
  }, 60_000);
});
