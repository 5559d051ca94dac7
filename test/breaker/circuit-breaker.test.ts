import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import type { ClaimResult } from '../../lambdas/ports/event-store.ts';
import { createEventsTable, createLedgerTable, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { executorFixture, ROUTE } from '../support/executor-fixture.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { noticeLog } from '../support/breaker-notices.ts';
import { testConfig } from '../support/test-config.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';

async function ownTables() {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const suffix = randomUUID().slice(0, 8);
  return {
    dynamo,
    eventsTable: await createEventsTable(dynamo, `events-b-${suffix}`),
    ledgerTable: await createLedgerTable(dynamo, `ledger-b-${suffix}`),
  };
}

describe('the circuit breaker, parked work and resume', () => {
  it('pauses the route exactly once when 5 copies of one key arrive at once after its 202, and records why', async () => {
    // Prepare
    const t = await ownTables();
    const log = noticeLog();
    const states = new DynamoDbRouteStateStore(t.dynamo, t.eventsTable);
    const fx = await ingestFixture({ tableName: t.eventsTable, breaker: { routeState: states }, logger: log.logger });
    const key = uniqueKey(ROUTE);
    const delivery = signedDelivery(ROUTE, key);
    // Act: the first delivery is answered 202; then 5 copies at once, each after that answer.
    const first = await fx.invoke(delivery);
    await fx.takeWork();
    fx.advance(ANSWER_MARGIN_MS + 1);
    const answers = await Promise.all(Array.from({ length: 5 }, () => fx.invoke(delivery)));
    // Assess: every copy is still acknowledged; one pause event, one notice, kept with the pause too.
    expect(first.statusCode).toBe(202);
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202, 202]);
    const state = await states.get(ROUTE);
    expect(state).toMatchObject({ state: 'paused', key, pausedBy: 'circuit-breaker', repeats: 3, threshold: 3 });
    expect(state.reason).toBe(`key "${key}" came back 3 times after we had answered it (4 deliveries), reaching the route's threshold of 3`);
    expect(state.whatNow).toMatch(new RegExp(`routes resume ${ROUTE}$`));
    const notices = log.notices();
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ route: ROUTE, key, repeats: 3, threshold: 3, reason: state.reason, reaction: 'pause', whatNow: state.whatNow });
  });

  it('counts none of 5 copies that arrive at once before any answer: they are not repeats of an answer', async () => {
    // Prepare
    const t = await ownTables();
    const log = noticeLog();
    const states = new DynamoDbRouteStateStore(t.dynamo, t.eventsTable);
    // The first copy's send waits until all 5 have claimed: every copy arrives before its answer.
    let claims = 0;
    let allClaimed: () => void = () => undefined;
    const claimed = new Promise<void>((resolve) => (allClaimed = resolve));
    class CountingStore extends DynamoDbEventStore {
      override async claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult> {
        const out = await super.claimKey(record, nowMs);
        if (++claims === 5) allClaimed();
        return out;
      }
    }
    const plain = await ingestFixture({ tableName: t.eventsTable });
    const queue = new SqsWorkQueue(plain.sqs, plain.queueUrl);
    const fx = await ingestFixture({
      tableName: t.eventsTable,
      store: new CountingStore(t.dynamo, t.eventsTable),
      queue: { send: async (message) => claimed.then(() => queue.send(message)) },
      breaker: { routeState: states },
      logger: log.logger,
    });
    const delivery = signedDelivery(ROUTE, uniqueKey(ROUTE));
    // Act: 5 first copies at once.
    const answers = await Promise.all(Array.from({ length: 5 }, () => fx.invoke(delivery)));
    // Assess: all acknowledged, the route active, no notice; at most one copy came after an answer of another.
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202, 202]);
    expect((await states.get(ROUTE)).state).toBe('active');
    expect(log.notices()).toHaveLength(0);
  });

  it('accepts and parks new work on a paused route, then runs it exactly once after resume', async () => {
    // Prepare: pause the route through the breaker.
    const t = await ownTables();
    const states = new DynamoDbRouteStateStore(t.dynamo, t.eventsTable);
    const fx = await executorFixture({
      eventsTable: t.eventsTable,
      ledgerTable: t.ledgerTable,
      breaker: { routeState: states },
    });
    const noisy = await fx.deliver({ amount: 1 });
    // Its worker's lease starts the count; the action runs once.
    await fx.drain();
    fx.ingest.advance(ANSWER_MARGIN_MS + 1);
    for (let i = 0; i < 4; i++) await fx.ingest.invoke(signedDelivery(ROUTE, noisy, { payload: { amount: 1 } }));
    expect((await states.get(ROUTE)).state).toBe('paused');
    // Act: a new delivery to the paused route.
    const key = await fx.deliver({ amount: 250 });
    await fx.drain();
    // Assess: accepted, kept, not executed.
    expect(await fx.record(key)).toMatchObject({ status: 'PARKED', gsi2pk: `PARKED#${ROUTE}` });
    expect(await fx.ledger(key)).toHaveLength(0);
    // Act: an operator resumes the route.
    const control = createRouteControl({
      dynamo: t.dynamo,
      eventsTable: t.eventsTable,
      sqs: localSqsClient(inject('sqsEndpoint')),
      queueUrl: fx.queueUrl,
      config: resolveConfig(testConfig(SCHEME_ROUTES)),
    });
    const resumed = await control.resume(ROUTE);
    await fx.drain();
    // Assess: the parked record ran once; the noisy key's, run before the pause, did not run again.
    expect(resumed).toEqual({ resumed: true, reenqueued: 1 });
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect((await fx.record(key))?.gsi2pk).toBeUndefined();
    expect(await fx.ledger(key)).toHaveLength(1);
    expect(await fx.ledger(noisy)).toHaveLength(1);
    expect((await control.list()).find((r) => r.route === ROUTE)?.state).toBe('active');
  });

  it('never pauses a route whose reaction is alert, and alerts once per key', async () => {
    const t = await ownTables();
    const log = noticeLog();
    const states = new DynamoDbRouteStateStore(t.dynamo, t.eventsTable);
    const routes = SCHEME_ROUTES.map((r) => (r.name === 'stripe' ? { ...r, breakerReaction: 'alert' as const } : r));
    const fx = await ingestFixture({ routes, tableName: t.eventsTable, breaker: { routeState: states }, logger: log.logger });
    const delivery = signedDelivery('stripe', uniqueKey('stripe'));
    await fx.invoke(delivery);
    await fx.takeWork();
    fx.advance(ANSWER_MARGIN_MS + 1);
    for (let i = 0; i < 7; i++) await fx.invoke(delivery);
    expect((await states.get('stripe')).state).toBe('active');
    const notices = log.notices();
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ route: 'stripe', reaction: 'alert' });
    expect(notices[0]?.whatNow).toBeUndefined();
  });
});
