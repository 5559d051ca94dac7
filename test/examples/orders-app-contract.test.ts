/**
 * The orders-app keeps the contract for user code (README, "The contract for your code")
 * under retryproof's real ingest, executor and reconciler, on DynamoDB Local and fauxqs, with
 * the example's own action, ledger and cancel call against the fake orders API:
 *
 * - Defect 8's schedule: run 1 fails with a 503 (before the API placed anything, or after, its
 *   answer lost), run 2 places the order, a reconciler run follows, and whatever it reverses
 *   is reversed by the ledger's compensating `reverse`, which cancels the entry's order. The
 *   one real order must stand, booked once, and never be cancelled. An action that books
 *   before its effect and leaves the entry on a retryable error fails here: it holds an
 *   entry after run 1, when no order exists.
 * - A run that dies after booking: the rerun gets the same order back and books nothing more.
 * - A downstream that forgot the key (its retention shorter than the redrive horizon, the
 *   contract broken on purpose) places a second order: the reconciler reverses one of the
 *   two entries, its reverse cancels exactly that entry's order, and one order stands.
 *
 * Each holds whichever entry the reconciler keeps (the earliest, or the one whose `attempt`
 * is the completed run), because each entry names the one order it books.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Action } from '../../lambdas/actions/index.ts';
import { cancelOrderWithApi } from '../../examples/orders-app/src/cancel-order.ts';
import { DynamoDbOrdersLedger } from '../../examples/orders-app/src/dynamodb-orders-ledger.ts';
import { startFakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
import type { FakeOrder, FakeOrdersApi, FakeOrdersFault } from '../../examples/orders-app/src/fake-orders-api.ts';
import { ensureOrdersLedgerTable } from '../../examples/orders-app/src/local-resources.ts';
import type { OrderEntry, OrdersLedger } from '../../examples/orders-app/src/order-entry.ts';
import { orderEntries } from './order-entries.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { dieAsWorker } from '../../lambdas/demo/worker-death.ts';
import { createReconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import type { Reconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import { createEventsTable, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { executorFixture, MAX_RECEIVE_COUNT, ROUTE } from '../support/executor-fixture.ts';
import type { ExecutorFixture } from '../support/executor-fixture.ts';
import { recentWindow } from '../support/reconciler-fixture.ts';
import { testConfig } from '../support/test-config.ts';

const ORDER = { amount: 4200, currency: 'EUR' };

/** One receiver on tables of its own (a reconciler reads whole windows), running the example's action over its ledger. */
interface OrdersReceiver {
  readonly fx: ExecutorFixture;
  readonly ledger: OrdersLedger;
  readonly reconciler: Reconciler;
  /** The key's entries, oldest first. */
  entries(key: string): Promise<OrderEntry[]>;
}

describe('the orders-app under the executor and the reconciler: an entry if and only if its order, and a reverse that undoes only its own', () => {
  let api: FakeOrdersApi;
  let dynamo: DynamoDBClient;
  let placeOrderAction: (ledger: OrdersLedger, apiUrl: string) => Action;
  /** Faults the fake orders API plays, by Idempotency-Key. */
  const faults = new Map<string, (request: number) => FakeOrdersFault | undefined>();

  beforeAll(async () => {
    api = await startFakeOrdersApi({ fault: (key, request) => faults.get(key)?.(request) });
    dynamo = localDynamoClient(inject('dynamoEndpoint'));
    // place-order.ts also builds its default export from the environment at load, as a cold start
    // does; this test composes the action over ledgers of its own, on tables of its own.
    vi.stubEnv('ORDERS_LEDGER_TABLE', 'orders-ledger-not-used-here');
    vi.stubEnv('ORDERS_API_URL', api.url);
    ({ placeOrderAction } = await import('../../examples/orders-app/src/place-order.ts'));
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    dynamo.destroy();
    await api.close();
  });

  /** The orders API's Idempotency-Key for a delivery: `ctx.idempotencyKey`. */
  const apiKey = (key: string): string => `${ROUTE}/${key}`;
  const ordersOf = (key: string): FakeOrder[] => api.orders().filter((o) => o.key === apiKey(key));

  /**
   * The example's action and ledger as orders-ledger.ts and place-order.ts compose them, on
   * fresh tables; `wrap` may stand between the action and the ledger (to kill a run).
   */
  async function ordersReceiver(wrap: (ledger: OrdersLedger) => OrdersLedger = (l) => l): Promise<OrdersReceiver> {
    const suffix = randomUUID().slice(0, 8);
    const eventsTable = await createEventsTable(dynamo, `events-orders-${suffix}`);
    const ledgerTable = `orders-ledger-${suffix}`;
    await ensureOrdersLedgerTable(dynamo, ledgerTable);
    const ledger = new DynamoDbOrdersLedger(dynamo, ledgerTable, cancelOrderWithApi(api.url));
    const fx = await executorFixture({ eventsTable, actions: { placeOrder: placeOrderAction(wrap(ledger), api.url) }, action: 'placeOrder' });
    const reconciler = createReconciler({
      dynamo,
      eventsTable,
      ledgers: new Map([['placeOrder', ledger]]),
      sqs: localSqsClient(inject('sqsEndpoint')),
      queueUrl: fx.queueUrl,
      config: resolveConfig(
        testConfig(fx.routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT }, reconciliation: { stuckAfterSeconds: 900, settleSeconds: 2 }, maxClockSkewSeconds: 1 }),
      ),
      now: () => fx.now(),
    });
    return {
      fx,
      ledger,
      reconciler,
      entries: async (key) =>
        (await orderEntries(ledger, Date.now() - 3_600_000, Date.now() + 3_600_000))
          .filter((e) => e.route === ROUTE && e.idempotencyKey === key)
          .sort((a, b) => a.postedAt - b.postedAt || a.entryId.localeCompare(b.entryId)),
    };
  }

  /** A ledger whose booking kills the run right after it, on run 1 of `key`: a worker that dies before its completion write. */
  const dyingAfterBooking =
    (key: string) =>
    (ledger: OrdersLedger): OrdersLedger => ({
      post: async (entry, options) => {
        const booked = await ledger.post(entry, options);
        if (entry.idempotencyKey === key && entry.attempt === 1) return dieAsWorker();
        return booked;
      },
      listWindow: (fromMs, toMs) => ledger.listWindow(fromMs, toMs),
      reverse: (entryId, reversal) => ledger.reverse(entryId, reversal),
    });

  it.each([
    ['before the API placed anything', { status: 503, placed: false }],
    ['after the API placed the order, its answer lost', { status: 503, placed: true }],
  ] as const)(
    "defect 8's schedule, run 1 answered 503 %s: the one real order stands, booked once by run 2, and no reversal cancels it",
    async (_when, fault) => {
      // Prepare
      const rx = await ordersReceiver();
      const key = `evt_${randomUUID()}`;
      faults.set(apiKey(key), (request) => (request === 1 ? fault : undefined));
      // Act 1: the delivery, and run 1
      await rx.fx.deliver(ORDER, key);
      await rx.fx.pollUntilReceived();
      // Assess 1: run 1 failed retryably and left no entry, whatever the API did
      expect(await rx.fx.record(key)).toMatchObject({ status: 'RECEIVED', attempts: 1 });
      expect(api.requests(apiKey(key))).toBe(1);
      expect(ordersOf(key)).toHaveLength(fault.placed ? 1 : 0);
      expect(await rx.entries(key)).toEqual([]);

      // Act 2: run 2 places the order (or gets it back), and completes
      await rx.fx.drain();
      // Assess 2: one order, one entry naming it, booked by run 2
      expect(await rx.fx.record(key)).toMatchObject({ status: 'COMPLETED', runs: 2 });
      const [order] = ordersOf(key);
      expect(ordersOf(key)).toHaveLength(1);
      expect((await rx.entries(key)).map((e) => [e.orderId, e.attempt, e.status])).toEqual([[order?.orderId, 2, 'posted']]);

      // Act 3: the reconciler runs, twice (the next hour's run too); every reversal it makes
      // goes through the ledger's compensating reverse, which cancels the entry's order.
      const reports = [await rx.reconciler.run(recentWindow(rx.fx)), await rx.reconciler.run(recentWindow(rx.fx))];
      // Assess 3: the real order was never cancelled, and it is still the one booking of the key
      for (const report of reports) {
        expect(report.reversals.filter((r) => r.key === key)).toEqual([]);
        expect(report.needsAttention.filter((n) => n.key === key)).toEqual([]);
      }
      expect(ordersOf(key).map((o) => [o.orderId, o.cancelled])).toEqual([[order?.orderId, false]]);
      expect(api.standing(apiKey(key))).toBe(1);
      expect((await rx.entries(key)).map((e) => [e.orderId, e.status])).toEqual([[order?.orderId, 'posted']]);
    },
    60_000,
  );

  it('a run that dies after booking: the rerun gets the same order back and books nothing more, so nothing is reversed', async () => {
    // Prepare
    const key = `evt_${randomUUID()}`;
    const rx = await ordersReceiver(dyingAfterBooking(key));
    // Act 1: run 1 places the order, books it, and dies holding the lease
    await rx.fx.deliver(ORDER, key);
    await rx.fx.pollUntilReceived();
    expect(await rx.fx.record(key)).toMatchObject({ status: 'EXECUTING' });
    // Act 2: past the lease, the message comes back and run 2 completes
    rx.fx.clockOffsetMs += 20_000;
    await rx.fx.drain();
    expect(await rx.fx.record(key)).toMatchObject({ status: 'COMPLETED', runs: 2 });
    // Act 3
    const report = await rx.reconciler.run(recentWindow(rx.fx));
    // Assess: two requests, one order, one entry (run 1's), nothing reversed or reported
    expect(api.requests(apiKey(key))).toBe(2);
    const [order] = ordersOf(key);
    expect(ordersOf(key).map((o) => o.cancelled)).toEqual([false]);
    expect((await rx.entries(key)).map((e) => [e.orderId, e.attempt, e.status])).toEqual([[order?.orderId, 1, 'posted']]);
    expect(report.reversals.filter((r) => r.key === key)).toEqual([]);
    expect(report.needsAttention.filter((n) => n.key === key)).toEqual([]);
  }, 60_000);

  it("a downstream that forgot the key places a second order: the reconciler's reverse cancels exactly the reversed entry's order, and one order stands", async () => {
    // Prepare: run 1 places and books order A, then dies; the API then forgets the key, as one
    // whose idempotency-key retention is shorter than retryproof's redrive horizon.
    const key = `evt_${randomUUID()}`;
    const rx = await ordersReceiver(dyingAfterBooking(key));
    await rx.fx.deliver(ORDER, key);
    await rx.fx.pollUntilReceived();
    api.forget(apiKey(key));
    // Act 1: run 2 places order B and books it
    rx.fx.clockOffsetMs += 20_000;
    await rx.fx.drain();
    expect(await rx.fx.record(key)).toMatchObject({ status: 'COMPLETED', runs: 2 });
    const booked = await rx.entries(key);
    expect(booked.map((e) => [e.attempt, e.status])).toEqual([
      [1, 'posted'],
      [2, 'posted'],
    ]);
    expect(new Set(booked.map((e) => e.orderId)).size).toBe(2);
    expect(api.standing(apiKey(key))).toBe(2);
    // Act 2
    const report = await rx.reconciler.run(recentWindow(rx.fx));
    // Assess: one entry reversed and exactly its order cancelled; the kept entry's order stands
    const reversals = report.reversals.filter((r) => r.key === key);
    expect(reversals).toHaveLength(1);
    const byId = new Map(booked.map((e) => [e.entryId, e]));
    const reversed = byId.get(reversals[0]?.entryId ?? '');
    const kept = byId.get(reversals[0]?.keptEntryId ?? '');
    expect(reversed).toBeDefined();
    expect(kept).toBeDefined();
    expect(ordersOf(key).map((o) => [o.orderId, o.cancelled]).sort()).toEqual(
      [
        [kept?.orderId, false],
        [reversed?.orderId, true],
      ].sort(),
    );
    expect(api.standing(apiKey(key))).toBe(1);
    expect((await rx.entries(key)).map((e) => [e.orderId, e.status]).sort()).toEqual(
      [
        [kept?.orderId, 'posted'],
        [reversed?.orderId, 'reversed'],
      ].sort(),
    );
    // A second run changes nothing: the reversed order stays the only one cancelled.
    const again = await rx.reconciler.run(recentWindow(rx.fx));
    expect(again.reversals.filter((r) => r.key === key)).toEqual([]);
    expect(api.standing(apiKey(key))).toBe(1);
  }, 60_000);
});
