/**
 * Write units on the wire: one new delivery through its whole life (the claim, the lease,
 * the completion, which logs the attempt on the record) and one duplicate, on DynamoDB Local, each call asked
 * for its consumed capacity per table and index. The cost model prices the same phases, so
 * the model and what DynamoDB charges cannot drift apart.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import type { Action } from '../../lambdas/actions/action.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { executeMessage } from '../../lambdas/executor/execute-message.ts';
import { ingestDelivery } from '../../lambdas/ingest/ingest-delivery.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import type { IngestEventStore } from '../../lambdas/ports/event-store.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { meterCapacity } from '../../local/capacity-meter.ts';
import type { CapacityMeter } from '../../local/capacity-meter.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { retryproofWriteUnits } from '../../bench/cost-model.ts';
import { SENDER_TIMEOUT_MS } from '../../bench/workloads.ts';
import { testConfig } from '../support/test-config.ts';

const SECRET = 'write-units-secret';
const BODY_BYTES = 2048;
const ROUTE: RouteConfig = {
  name: 'orders',
  signature: { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'hex' },
  key: '{body:/id}',
  secretName: 'test/orders',
  action: 'payout',
  actionTimeSeconds: 5,
  keepHeaders: ['content-type'],
};

/** A store whose every method labels the calls it makes with a phase of the meter. */
function labelled<T extends object>(store: T, meter: CapacityMeter, phases: Readonly<Record<string, string>>): T {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const phase = phases[String(prop)];
        if (phase !== undefined) meter.phase(phase);
        return method.apply(target, args);
      };
    },
  });
}

/** A JSON body of exactly `bytes` bytes carrying the key. */
function bodyOf(key: string, bytes: number): Buffer {
  const head = JSON.stringify({ id: key, amount: 1250, currency: 'EUR', note: '' });
  return Buffer.from(head.replace('"note":""', `"note":"${'x'.repeat(bytes - head.length)}"`));
}

describe('write units per delivery, measured on DynamoDB Local against the cost model', () => {
  it(`charges what the cost model says for each phase of a ${BODY_BYTES}-byte delivery's life, and for a duplicate`, async () => {
    // Prepare: a table of its own, both stores over one metered client.
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const table = await createEventsTable(client, `wcu-${randomUUID().slice(0, 8)}`);
    const meter = meterCapacity(client, table);
    const config = resolveConfig(testConfig([ROUTE]));
    const sent: WorkMessage[] = [];
    const now = Date.now();
    const ingestStore: IngestEventStore = new DynamoDbEventStore(client, table);
    const deps = {
      routes: prepareRoutes(config.routes),
      store: ingestStore,
      queue: { send: (m: WorkMessage) => Promise.resolve(void sent.push(m)) },
      secrets: new StaticSecretSource({ [ROUTE.secretName]: SECRET }),
      now: () => now,
    };
    const key = `msg_${randomUUID()}`;
    const body = bodyOf(key, BODY_BYTES);
    const delivery = {
      method: 'POST',
      routeName: ROUTE.name,
      headers: { 'content-type': 'application/json', ...signDelivery(ROUTE.signature, SECRET, body, { nowSeconds: Math.floor(now / 1000) }) },
      rawBody: body,
      bodyEncoding: 'utf8' as const,
    };
    const action: Action = () => Promise.resolve({ ok: true });
    const executionStore: ExecutionStore = labelled(new DynamoDbExecutionStore(client, table), meter, {
      acquireLease: 'lease',
      rememberTaken: 'lease',
      complete: 'completion',
      appendLog: 'log',
    });
    // Act: the delivery, its execution, then a copy of it.
    meter.phase('claim');
    expect((await ingestDelivery(deps, delivery)).kind).toBe('accepted');
    const message = sent[0];
    if (message === undefined) throw new Error('nothing was queued');
    const report = await executeMessage(
      { routes: new Map(config.routes.map((r) => [r.name, r])), actions: new Map([[ROUTE.action, action]]), store: executionStore, workQueue: deps.queue, maxReceiveCount: 12, now: () => now + 50 },
      { messageId: 'm1', body: JSON.stringify(message), receiveCount: 1 },
    );
    expect(report.outcome).toBe('completed');
    meter.phase('duplicate');
    // A sender's retry after its request timeout (bench/workloads.ts): later than ANSWER_MARGIN_MS.
    expect((await ingestDelivery({ ...deps, now: () => now + SENDER_TIMEOUT_MS }, delivery)).kind).toBe('duplicate');
    // Assess
    // An hmac-sha256 route signs no timestamp: its worker also writes the replay memory after its lease (protocol v3).
    const model = retryproofWriteUnits(BODY_BYTES, { replayMemory: true });
    const measured = Object.fromEntries([...meter.byPhase].map(([phase, c]) => [phase, { table: c.table, index: Object.values(c.indexes).reduce((a, b) => a + b, 0) }]));
    expect(measured).toEqual(model.phases);
    // The completing attempt is logged on the record: no log item is written on the way.
    expect(meter.byPhase.has('log')).toBe(false);
    const life = ['claim', 'lease', 'completion'].reduce((sum, phase) => sum + meter.writeUnits(phase), 0);
    expect(life).toBe(model.newDeliveryLife);
    expect(meter.writeUnits('duplicate')).toBe(model.duplicate);
    // The goal is at most 4 units a delivery's life, index copies included, and 1 a duplicate. The replay
    // memory (1) adds to this route's, whose scheme signs no timestamp: 6 here, 5 on the others.
    expect(life).toBeLessThanOrEqual(6);
    expect(meter.writeUnits('duplicate')).toBeLessThanOrEqual(1);
    client.destroy();
  });
});
