/**
 * The orders-app's own modules as the executor and the reconciler load them: their default
 * exports, built from the environment with the SDK's default clients (pointed at DynamoDB
 * Local through AWS_ENDPOINT_URL_DYNAMODB, as the local stack does), against the fake
 * orders API and the example's own ledger table.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { ActionContext } from '../../lambdas/actions/action.ts';
import type { Action, Ledger } from '../../lambdas/actions/index.ts';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/index.ts';
import { startFakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
import type { FakeOrdersApi } from '../../examples/orders-app/src/fake-orders-api.ts';
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
  let placeOrder: Action;
  let ledger: Ledger;
  let placeOrderAction: (ledger: Ledger, apiUrl: string) => Action;

  beforeAll(async () => {
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    await ensureOrdersLedgerTable(dynamo, table);
    await ensureOrdersLedgerTable(dynamo, table); // a second call finds it and creates nothing
    dynamo.destroy();
    api = await startFakeOrdersApi();
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

  const entriesOf = async (key: string) => (await ledger.listWindow(Date.now() - DAY_MS, Date.now() + 1)).filter((e) => e.idempotencyKey === key);

  it('places one order per key however often it runs, booking one ledger entry per run', async () => {
    // Prepare
    const key = `msg_${randomUUID()}`;
    const ctx = contextFor(key, { amount: 4200, currency: 'EUR' });
    // Act: a first run, then a rerun of the same delivery (as after a crash past the effect)
    const first = await placeOrder(ctx);
    const second = await placeOrder({ ...ctx, attempt: 2 });
    // Assess
    expect(second).toEqual(first);
    expect(api.effects(`orders/${key}`)).toBe(1);
    expect(api.requests(`orders/${key}`)).toBe(2);
    const entries = await entriesOf(key);
    expect(entries.map((e) => [e.route, e.status, e.amount, e.currency])).toEqual([
      ['orders', 'posted', 4200, 'EUR'],
      ['orders', 'posted', 4200, 'EUR'],
    ]);
    expect(entries[0]).not.toHaveProperty('postedDay');
  });

  it('reverses an entry once: a second reversal, whatever its id, finds it reversed', async () => {
    const entry = await ledger.post({ route: 'orders', idempotencyKey: `msg_${randomUUID()}`, amount: 1, currency: 'EUR', postedAt: Date.now() });
    const reversal = { reversalId: 'rev_1', reason: 'duplicate', at: Date.now() };
    expect(await ledger.reverse(entry.entryId, reversal)).toBe('reversed');
    expect(await ledger.reverse(entry.entryId, reversal)).toBe('already-reversed');
    expect(await ledger.reverse(entry.entryId, { ...reversal, reversalId: 'rev_2' })).toBe('already-reversed');
    expect(await ledger.reverse(randomUUID(), reversal)).toBe('not-found');
    const [after] = await entriesOf(entry.idempotencyKey);
    expect(after).toMatchObject({ status: 'reversed', reversalId: 'rev_1', reversalReason: 'duplicate' });
  });

  it('lists a window across midnight from the byDay index, start included and end left out', async () => {
    // Prepare: entries a minute either side of a UTC midnight, and one at the window's end.
    const key = `msg_${randomUUID()}`;
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS - 10 * DAY_MS;
    const at = [midnight - 60_000, midnight + 60_000, midnight + 120_000];
    for (const postedAt of at) await ledger.post({ route: 'orders', idempotencyKey: key, postedAt });
    // Act
    const listed = await ledger.listWindow(midnight - 60_000, midnight + 120_000);
    // Assess
    expect(listed.filter((e) => e.idempotencyKey === key).map((e) => e.postedAt).sort()).toEqual([at[0], at[1]]);
  });

  it('throws RetryableActionError on a 5xx, a 429 and a timeout, leaving its entry for the reconciler', async () => {
    for (const status of [503, 429, 0]) {
      const server = await answering(status);
      const signal = status === 0 ? AbortSignal.timeout(200) : new AbortController().signal;
      const key = `msg_${randomUUID()}`;
      await expect(placeOrderAction(ledger, server.url)(contextFor(key, { amount: 100, currency: 'EUR' }, { signal }))).rejects.toBeInstanceOf(
        RetryableActionError,
      );
      await server.close();
      expect((await entriesOf(key)).map((e) => e.status)).toEqual(['posted']);
    }
  });

  it('throws PermanentActionError on a 4xx and reverses the entry it booked', async () => {
    const server = await answering(400);
    const key = `msg_${randomUUID()}`;
    await expect(placeOrderAction(ledger, server.url)(contextFor(key, { amount: 100, currency: 'EUR' }))).rejects.toBeInstanceOf(PermanentActionError);
    await server.close();
    expect((await entriesOf(key)).map((e) => e.status)).toEqual(['reversed']);
  });

  it('refuses a body that is no order before booking or calling anything', async () => {
    const key = `msg_${randomUUID()}`;
    await expect(placeOrder(contextFor(key, { amount: 'lots' }))).rejects.toBeInstanceOf(PermanentActionError);
    expect(api.requests(`orders/${key}`)).toBe(0);
    expect(await entriesOf(key)).toEqual([]);
  });
});
