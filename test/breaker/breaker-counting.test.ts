/**
 * What the circuit breaker counts: a sender's repeats after we answered 2xx (lost
 * acknowledgements, replays), never the retries our own 5xx caused. And a trip that fails
 * half-way still ends in a paused route and a counted RoutePaused.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RouteStateStore } from '../../lambdas/ports/route-state-store.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { noticeLog } from '../support/breaker-notices.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';

const ROUTE = 'stripe';

async function ownTable() {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const eventsTable = await createEventsTable(dynamo, `events-bc-${randomUUID().slice(0, 8)}`);
  return { dynamo, eventsTable, states: new DynamoDbRouteStateStore(dynamo, eventsTable) };
}

describe('the circuit breaker counts a sender’s repeats, not our failures', () => {
  it('leaves the route active through 10 retries during an SQS outage, and pauses it on repeats after a 2xx', async () => {
    // Prepare: one table; during the outage the ingest's queue does not exist.
    const t = await ownTable();
    const log = noticeLog();
    const breaker = { routeState: t.states };
    const healthy = await ingestFixture({ tableName: t.eventsTable, breaker, logger: log.logger });
    const outage = await ingestFixture({
      tableName: t.eventsTable,
      breaker,
      logger: log.logger,
      queue: new SqsWorkQueue(healthy.sqs, `${healthy.queueUrl}-gone`),
    });
    const delivery = signedDelivery(ROUTE, uniqueKey(ROUTE));
    // Act: the first delivery and 10 retries, all during the outage.
    const during: number[] = [];
    for (let i = 0; i < 11; i++) during.push((await outage.invoke(delivery)).statusCode ?? 0);
    const afterOutage = (await t.states.get(ROUTE)).state;
    // The outage ends: the next retry gets the work sent and a 202.
    const recovered = await healthy.invoke(delivery);
    // Then the sender loses acknowledgements: each further copy came after a 2xx.
    const states: string[] = [];
    for (let i = 0; i < 5; i++) {
      healthy.advance(ANSWER_MARGIN_MS + 1);
      await healthy.invoke(delivery);
      states.push((await t.states.get(ROUTE)).state);
    }
    // Assess
    expect(during).toEqual(Array.from({ length: 11 }, () => 503));
    expect(afterOutage).toBe('active');
    expect(recovered.statusCode).toBe(202);
    // Threshold 3: the third repeat after the 2xx is the fourth delivery counted.
    expect(states).toEqual(['active', 'active', 'paused', 'paused', 'paused']);
    expect(log.notices()).toHaveLength(1);
  });

  it('counts repeats on both sides of a 5xx of ours, and none of the retries of that 5xx', async () => {
    // Prepare: one table, a clock, and the route's threshold of 3.
    const t = await ownTable();
    let now = Date.now();
    const breaker = { routeState: t.states };
    const options = { tableName: t.eventsTable, breaker, now: () => now, resendAfterMs: 60_000 };
    const healthy = await ingestFixture(options);
    const outage = await ingestFixture({ ...options, queue: new SqsWorkQueue(healthy.sqs, `${healthy.queueUrl}-gone`) });
    const key = uniqueKey(ROUTE);
    const deliver = async (fx: typeof healthy): Promise<number> =>
      (await fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(now / 1000) }))).statusCode ?? 0;
    const repeats = async (): Promise<number | undefined> => {
      const out = await documentClient(t.dynamo).send(
        new GetCommand({ TableName: t.eventsTable, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }),
      );
      return out.Item === undefined ? undefined : fromRecordItem(out.Item).repeats;
    };
    // Act: accepted; its message is lost before any worker took it. The next copy, past the resend
    // window, sends the work again and marks its 202 (the count starts); one copy after that is a repeat.
    const answers = [await deliver(healthy)];
    await healthy.purgeQueue();
    now += 120_000;
    answers.push(await deliver(healthy));
    now += ANSWER_MARGIN_MS + 1;
    answers.push(await deliver(healthy));
    const beforeOutage = await repeats();
    // The record waits past the resend window. The next copy found our 202 (a repeat); its
    // resend meets an SQS outage and it answers 503, as do the 3 retries of that 503.
    now += 120_000;
    for (let i = 0; i < 4; i++) answers.push(await deliver(outage));
    const duringOutage = await repeats();
    // SQS is back: the next retry of the 503 re-sends (202, not a repeat); one more copy after that 202 is one.
    answers.push(await deliver(healthy));
    now += ANSWER_MARGIN_MS + 1;
    answers.push(await deliver(healthy));
    const afterOutage = await repeats();
    // Assess: the four deliveries that found our 503 counted nothing; the count went on from 2 to the threshold.
    expect(answers).toEqual([202, 202, 202, 503, 503, 503, 503, 202, 202]);
    expect([beforeOutage, duringOutage, afterOutage]).toEqual([1, 2, 3]);
    expect((await t.states.get(ROUTE)).state).toBe('paused');
  });

  it('announces a trip again when it died after its pause, before its mark: the first announcement died with it', async () => {
    // Prepare: the key's mark fails once, after the route was paused (the function dies there).
    const t = await ownTable();
    const log = noticeLog();
    let failures = 1;
    class DyingStore extends DynamoDbEventStore {
      override markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean> {
        if (failures-- > 0) return Promise.reject(new Error('the function died here'));
        return super.markBreakerTripped(route, key, receivedAt, nowMs);
      }
    }
    const fx = await ingestFixture({
      tableName: t.eventsTable,
      store: new DyingStore(t.dynamo, t.eventsTable),
      breaker: { routeState: t.states },
      logger: log.logger,
    });
    const key = uniqueKey(ROUTE);
    const delivery = signedDelivery(ROUTE, key);
    // Act
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) {
      fx.advance(ANSWER_MARGIN_MS + 1);
      answers.push((await fx.invoke(delivery)).statusCode ?? 0);
      // A worker's lease of the first delivery's message starts the count.
      if (i === 0) await fx.takeWork();
    }
    // Assess: the route stayed paused from the first trip; its retry, 4 repeats later, marked the key and announced it.
    expect(answers).toEqual([202, 202, 202, 503, 202, 202, 202, 202]);
    expect((await t.states.get(ROUTE)).state).toBe('paused');
    const notices = log.notices();
    expect(notices.map((n) => [n.key, n.repeats, n.reaction])).toEqual([[key, 7, 'pause']]);
    const record = await documentClient(t.dynamo).send(
      new GetCommand({ TableName: t.eventsTable, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } }),
    );
    expect(record.Item?.breakerTrippedAt).toEqual(expect.any(Number));
    // No write counts repeats: while the answer is below 500 they are hits - repeatBase.
    expect(record.Item === undefined ? undefined : fromRecordItem(record.Item).repeats).toBe(7);
    expect(record.Item?.hits).toBe(8);
  });

  it('trips again, threshold + 1 repeats later, when the pause write failed', async () => {
    // Prepare: the route-state store fails its first pause.
    const t = await ownTable();
    const log = noticeLog();
    let failures = 1;
    const flaky: RouteStateStore = {
      get: (route) => t.states.get(route),
      resume: (route, at) => t.states.resume(route, at),
      pause: (route, request) => {
        if (failures-- > 0) return Promise.reject(new Error('DynamoDB throttled'));
        return t.states.pause(route, request);
      },
    };
    const fx = await ingestFixture({ tableName: t.eventsTable, breaker: { routeState: flaky }, logger: log.logger });
    const delivery = signedDelivery(ROUTE, uniqueKey(ROUTE));
    // Act
    const answers: number[] = [];
    const states: string[] = [];
    for (let i = 0; i < 8; i++) {
      fx.advance(ANSWER_MARGIN_MS + 1);
      answers.push((await fx.invoke(delivery)).statusCode ?? 0);
      if (i === 0) await fx.takeWork();
      states.push((await t.states.get(ROUTE)).state);
    }
    // Assess: the failed trip answered 503 (the sender retries); the 7th repeat (3 + 4) tripped again.
    expect(answers).toEqual([202, 202, 202, 503, 202, 202, 202, 202]);
    expect(states).toEqual(['active', 'active', 'active', 'active', 'active', 'active', 'active', 'paused']);
    expect(log.notices()).toHaveLength(1);
  });

  it('announces the pause once, not once per key that crosses while the route is paused', async () => {
    // Prepare
    const t = await ownTable();
    const log = noticeLog();
    const fx = await ingestFixture({ tableName: t.eventsTable, breaker: { routeState: t.states }, logger: log.logger });
    // Act: two keys, each delivered four times (three repeats after the 202).
    const keys = [uniqueKey(ROUTE), uniqueKey(ROUTE)];
    for (const key of keys) {
      const delivery = signedDelivery(ROUTE, key);
      for (let i = 0; i < 4; i++) {
        fx.advance(ANSWER_MARGIN_MS + 1);
        await fx.invoke(delivery);
        if (i === 0) await fx.takeWork();
      }
    }
    // Assess: the first key paused the route and says so; the second found it paused.
    expect(log.notices().map((n) => n.key)).toEqual([keys[0]]);
    expect((await t.states.get(ROUTE)).key).toBe(keys[0]);
  });
});
