/**
 * The orders-app's own modules as the executor and the reconciler load them: their default
 * exports, built from the environment with the SDK's default clients (pointed at DynamoDB
 * Local through AWS_ENDPOINT_URL_DYNAMODB, as the local stack does), against the fake
 * orders API and the example's own ledger table. Each spec is a clause of the contract for
 * user code (README, "The contract for your code"): the entry exists if and only if its
 * order does, and `reverse` undoes exactly that entry's order.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { ActionContext } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/index.ts';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/index.ts';
import { cancelOrderWithApi } from '../../examples/orders-app/src/cancel-order.ts';
import { DynamoDbOrdersLedger } from '../../examples/orders-app/src/dynamodb-orders-ledger.ts';
import type { OrdersLedger } from '../../examples/orders-app/src/order-entry.ts';
import { orderEntries } from './order-entries.ts';
import { startFakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
import type { FakeOrdersApi, FakeOrdersFault } from '../../examples/orders-app/src/fake-orders-api.ts';
import { ensureOrdersLedgerTable } from '../../examples/orders-app/src/local-resources.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';

const DAY_MS = 86_400_000;

function contextFor(key: string, body: unknown, overrides: Partial<ActionContext> = {}): ActionContext {
  return {
    route: 'orders',
    key,
    idempotencyKey: `orders/${key}`,
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    headers: {},
    attempt: 1,
    deadline: Date.now() + 10_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A server that answers every request with one status, or never when status is 0. */
async function answering(status: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    if (status === 0) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":"as told"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

describe("the orders-app's action and ledger modules", () => {
  const table = `orders-ledger-${randomUUID().slice(0, 8)}`;
  let api: FakeOrdersApi;
  /** Faults the fake API plays, by Idempotency-Key. */
  const faults = new Map<string, (request: number) => FakeOrdersFault | undefined>();
  let placeOrder: Action;
  let ledger: OrdersLedger;
  let placeOrderAction: (ledger: OrdersLedger, apiUrl: string) => Action;

  beforeAll(async () => {
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    await ensureOrdersLedgerTable(dynamo, table);
    await ensureOrdersLedgerTable(dynamo, table); // a second call finds it and creates nothing
    dynamo.destroy();
    api = await startFakeOrdersApi({ fault: (key, request) => faults.get(key)?.(request) });
    // The environment the stack (or localSetup) gives the functions, then the modules, as a cold start loads them.
    vi.stubEnv('ORDERS_LEDGER_TABLE', table);
    vi.stubEnv('ORDERS_API_URL', api.url);
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', inject('dynamoEndpoint'));
    vi.stubEnv('AWS_REGION', LOCAL_REGION);
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
    const action = await import('../../examples/orders-app/src/place-order.ts');
    placeOrder = action.default;
    placeOrderAction = action.placeOrderAction;
    ledger = (await import('../../examples/orders-app/src/orders-ledger.ts')).default;
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    await api.close();
  });

  const entriesOf = async (key: string) => (await orderEntries(ledger, Date.now() - DAY_MS, Date.now() + 1)).filter((e) => e.idempotencyKey === key);

  it('places one order per key however often it runs, and books it once, under the run that placed it', async () => {
    // Prepare
    const key = `msg_${randomUUID()}`;
    const ctx = contextFor(key, { amount: 4200, currency: 'EUR' });
    // Act: a first run, then a rerun of the same delivery (as after a crash past the booking)
    const first = await placeOrder(ctx);
    const second = await placeOrder({ ...ctx, attempt: 2 });
    // Assess
    expect(second).toEqual(first);
    expect(api.effects(`orders/${key}`)).toBe(1);
    expect(api.requests(`orders/${key}`)).toBe(2);
    const entries = await entriesOf(key);
    const [order] = api.orders().filter((o) => o.key === `orders/${key}`);
    expect(entries.map((e) => [e.route, e.status, e.amount, e.currency, e.orderId, e.attempt])).toEqual([
      ['orders', 'posted', 4200, 'EUR', order?.orderId, 1],
    ]);
    expect(first).toEqual({ orderId: order?.orderId, entryId: entries[0]?.entryId });
    expect(entries[0]).not.toHaveProperty('postedDay');
  });

  it('books nothing on a 5xx, a 429 or a timeout before the order, and throws RetryableActionError', async () => {
    for (const status of [503, 429, 0]) {
      const server = await answering(status);
      const signal = status === 0 ? AbortSignal.timeout(200) : new AbortController().signal;
      const key = `msg_${randomUUID()}`;
      await expect(placeOrderAction(ledger, server.url)(contextFor(key, { amount: 100, currency: 'EUR' }, { signal }))).rejects.toBeInstanceOf(
        RetryableActionError,
      );
      await server.close();
      expect(await entriesOf(key)).toEqual([]);
    }
  });

  it('books an order whose first answer was lost (placed, then a 503) on the run that gets it back', async () => {
    // Prepare: the API places the order on the first request and answers 503.
    const key = `msg_${randomUUID()}`;
    faults.set(`orders/${key}`, (request) => (request === 1 ? { status: 503, placed: true } : undefined));
    const ctx = contextFor(key, { amount: 700, currency: 'EUR' });
    // Act 1
    await expect(placeOrder(ctx)).rejects.toBeInstanceOf(RetryableActionError);
    // Assess 1: the order stands, and no entry claims it yet
    expect(api.standing(`orders/${key}`)).toBe(1);
    expect(await entriesOf(key)).toEqual([]);
    // Act 2
    await placeOrder({ ...ctx, attempt: 2 });
    // Assess 2: that one order, booked once, by run 2
    expect(api.effects(`orders/${key}`)).toBe(1);
    expect((await entriesOf(key)).map((e) => [e.orderId, e.attempt])).toEqual([[api.orders().find((o) => o.key === `orders/${key}`)?.orderId, 2]]);
  });

  it('throws PermanentActionError on a 4xx and books nothing', async () => {
    const server = await answering(400);
    const key = `msg_${randomUUID()}`;
    await expect(placeOrderAction(ledger, server.url)(contextFor(key, { amount: 100, currency: 'EUR' }))).rejects.toBeInstanceOf(PermanentActionError);
    await server.close();
    expect(await entriesOf(key)).toEqual([]);
  });

  it('refuses a body that is no order before booking or calling anything', async () => {
    const key = `msg_${randomUUID()}`;
    await expect(placeOrder(contextFor(key, { amount: 'lots' }))).rejects.toBeInstanceOf(PermanentActionError);
    expect(api.requests(`orders/${key}`)).toBe(0);
    expect(await entriesOf(key)).toEqual([]);
  });

  it('refuses an entry that names no order: an entry is booked only for an order that exists', async () => {
    const key = `msg_${randomUUID()}`;
    const noOrder = { route: 'orders', idempotencyKey: key, amount: 1, currency: 'EUR', postedAt: Date.now() } as Parameters<OrdersLedger['post']>[0];
    await expect(ledger.post(noOrder)).rejects.toThrow(/names the order it books/);
    expect(await entriesOf(key)).toEqual([]);
  });

  it("books an order once: a post of it again (the SDK's retry of a committed write) returns that entry; another key's is refused", async () => {
    const key = `msg_${randomUUID()}`;
    const entry = { route: 'orders', idempotencyKey: key, orderId: `ord_${randomUUID().slice(0, 8)}`, attempt: 1, postedAt: Date.now() };
    const first = await ledger.post(entry);
    expect(await ledger.post({ ...entry, attempt: 3, postedAt: entry.postedAt + 5 })).toEqual(first);
    await expect(ledger.post({ ...entry, idempotencyKey: `${key}-other` })).rejects.toThrow(/is posted for orders\//);
    expect(await entriesOf(key)).toEqual([first]);
  });

  it('reverses an entry by cancelling its order, once: a second reversal, whatever its id, finds it reversed', async () => {
    // Prepare: an order placed and booked by the action
    const key = `msg_${randomUUID()}`;
    const { entryId } = (await placeOrder(contextFor(key, { amount: 1, currency: 'EUR' }))) as { entryId: string };
    const reversal = { reversalId: 'rev_1', reason: 'duplicate', at: Date.now() };
    // Act + Assess
    expect(await ledger.reverse(entryId, reversal)).toBe('reversed');
    expect(api.standing(`orders/${key}`)).toBe(0);
    expect(await ledger.reverse(entryId, reversal)).toBe('already-reversed');
    expect(await ledger.reverse(entryId, { ...reversal, reversalId: 'rev_2' })).toBe('already-reversed');
    expect(await ledger.reverse(randomUUID(), reversal)).toBe('not-found');
    const [after] = await entriesOf(key);
    expect(after).toMatchObject({ status: 'reversed', reversalId: 'rev_1', reversalReason: 'duplicate' });
    expect(api.orders().filter((o) => o.key === `orders/${key}`).map((o) => o.cancelled)).toEqual([true]);
  });

  it('leaves the entry posted when its order cannot be cancelled, so the next reversal tries again', async () => {
    // Prepare: a booked order, and a ledger on the same table whose orders API answers 500
    const key = `msg_${randomUUID()}`;
    const { entryId } = (await placeOrder(contextFor(key, { amount: 1, currency: 'EUR' }))) as { entryId: string };
    const broken = await answering(500);
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const failing = new DynamoDbOrdersLedger(dynamo, table, cancelOrderWithApi(broken.url));
    // Act
    await expect(failing.reverse(entryId, { reversalId: 'rev_x', reason: 'duplicate', at: Date.now() })).rejects.toThrow(/did not cancel/);
    await broken.close();
    dynamo.destroy();
    // Assess: the order stands, and so does its entry; the ledger's own reverse then finishes it
    expect(api.standing(`orders/${key}`)).toBe(1);
    expect((await entriesOf(key)).map((e) => e.status)).toEqual(['posted']);
    expect(await ledger.reverse(entryId, { reversalId: 'rev_x', reason: 'duplicate', at: Date.now() })).toBe('reversed');
    expect(api.standing(`orders/${key}`)).toBe(0);
  });

  it('lists a window across midnight from the byHour index, start included and end left out', async () => {
    // Prepare: entries a minute either side of a UTC midnight, and one at the window's end.
    const key = `msg_${randomUUID()}`;
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS - 10 * DAY_MS;
    const at = [midnight - 60_000, midnight + 60_000, midnight + 120_000];
    for (const postedAt of at) await ledger.post({ route: 'orders', idempotencyKey: key, orderId: `ord_${randomUUID().slice(0, 8)}`, postedAt });
    // Act
    const listed = await orderEntries(ledger, midnight - 60_000, midnight + 120_000);
    // Assess
    expect(listed.filter((e) => e.idempotencyKey === key).map((e) => e.postedAt).sort()).toEqual([at[0], at[1]]);
  });
});
