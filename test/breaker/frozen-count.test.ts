/**
 * Protocol v4 starts a new delivery's breaker count at the worker's lease of its message. A send
 * that failed as far as the ingest knows may still have landed, and a worker may lease it before
 * or after the ingest stores its 503: either way the 503's retries must not count
 * (record-transitions.ts, recordEnqueueFailure and COUNT_FROZEN).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keptPayloadOf, workMessageOf } from '../../lambdas/domain/event-record.ts';
import type { EventRecord, Payload, WorkMessage } from '../../lambdas/domain/event-record.ts';
import type { ClaimResult } from '../../lambdas/ports/event-store.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

const ROUTE = 'stripe';

/**
 * A queue whose first send lands and then reports a failure; `whenLanded` runs between the two.
 * `beforeNextSend` runs a step before a later send goes out.
 */
function landsThenFails(real: WorkQueue, whenLanded: () => Promise<unknown>): WorkQueue & { failed: () => boolean; beforeNextSend: (step: () => Promise<void>) => void } {
  let failures = 1;
  let before: (() => Promise<void>) | undefined;
  return {
    failed: () => failures <= 0,
    beforeNextSend: (step) => {
      before = step;
    },
    send: async (message: WorkMessage) => {
      if (failures <= 0 && before !== undefined) {
        const step = before;
        before = undefined;
        await step();
      }
      await real.send(message);
      if (failures-- <= 0) return;
      await whenLanded();
      throw new Error('SQS: socket hang up (the message landed)');
    },
  };
}

async function scene(leaseBeforeFailureWrite: boolean) {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const table = await createEventsTable(dynamo, `events-fc-${randomUUID().slice(0, 8)}`);
  const states = new DynamoDbRouteStateStore(dynamo, table);
  const clock = { now: Date.now() };
  const worker = await ingestFixture({ tableName: table, now: () => clock.now });
  const queue = landsThenFails(new SqsWorkQueue(worker.sqs, worker.queueUrl), () => (leaseBeforeFailureWrite ? worker.takeWork() : Promise.resolve(0)));
  const fx = await ingestFixture({ tableName: table, queue, breaker: { routeState: states }, now: () => clock.now });
  const key = uniqueKey(ROUTE);
  const deliver = async (): Promise<number> => (await fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }))).statusCode ?? 0;
  const record = async () => {
    const out = await documentClient(dynamo).send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }));
    return out.Item === undefined ? undefined : fromRecordItem(out.Item);
  };
  return { clock, worker, queue, states, deliver, record };
}

describe("a send that landed though the ingest saw it fail: its 503's retries never count", () => {
  it('when the worker leases the landed message after the 503 was stored', async () => {
    // Prepare
    const s = await scene(false);
    // Act: the first delivery answers 503; the worker then leases the message that landed; the
    // sender retries 4 times, each more than the margin after the last.
    const answers = [await s.deliver()];
    expect(await s.worker.takeWork()).toBe(1);
    for (let i = 0; i < 4; i++) {
      s.clock.now += ANSWER_MARGIN_MS + 1;
      answers.push(await s.deliver());
    }
    // Assess: the 503 stood until a retry re-sent the work; none of the retries counted.
    expect(s.queue.failed()).toBe(true);
    expect(answers[0]).toBe(503);
    expect(answers.slice(1).every((a) => a === 202)).toBe(true);
    expect((await s.record())?.repeats ?? 0).toBe(0);
    expect((await s.states.get(ROUTE)).state).toBe('active');
  });

  it('nor does a copy that races the resend ending the 503, when the landed message is leased meanwhile', async () => {
    // Prepare: the first send lands and fails (503 stored). A minute later a retry wins the resend;
    // while its send is on its way, a worker leases the first, landed message and another copy comes.
    const s = await scene(false);
    const racing: number[] = [];
    s.queue.beforeNextSend(async () => {
      expect(await s.worker.takeWork()).toBe(1);
      racing.push(await s.deliver());
    });
    // Act
    const first = await s.deliver();
    s.clock.now += 60_000;
    const resent = await s.deliver();
    // Assess: the resend's 202 came after the racing copy, which is no repeat: the lease of the
    // landed message started no count (the 503 froze it), the resend's mark did.
    expect([first, resent, ...racing]).toEqual([503, 202, 202]);
    expect(await s.record()).toMatchObject({ hits: 3, repeats: 0 });
  });

  it('when the worker leased the landed message before the 503 could be stored', async () => {
    // Prepare: the worker takes the work while the ingest still waits on its send.
    const s = await scene(true);
    // Act
    const answers = [await s.deliver()];
    for (let i = 0; i < 4; i++) {
      s.clock.now += ANSWER_MARGIN_MS + 1;
      answers.push(await s.deliver());
    }
    // Assess: the record was taken, so it keeps its state and 202; the count stays frozen at 0.
    expect(answers[0]).toBe(503);
    expect(answers.slice(1)).toEqual([202, 202, 202, 202]);
    expect(await s.record()).toMatchObject({ status: 'EXECUTING', repeats: 0 });
    expect((await s.states.get(ROUTE)).state).toBe('active');
  });
});

describe("deliveries whose functions all died: a re-send of their work starts no count", () => {
  it('when a copy kept the payload and died before its answer, and the reconciler re-sent the work (seed 220)', async () => {
    // Prepare: the first delivery dies after its claim, before its send; a copy keeps the payload
    // (the write before its 2xx) and dies too, before it answers. No 2xx was ever given.
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const table = await createEventsTable(dynamo, `events-fc-${randomUUID().slice(0, 8)}`);
    const clock = { now: Date.now() };
    let dying = true;
    class DyingStore extends DynamoDbEventStore {
      override async claimKey(record: EventRecord, nowMs: number): Promise<ClaimResult> {
        const out = await super.claimKey(record, nowMs);
        if (dying && out.kind === 'created') throw new Error('the function died here');
        return out;
      }
      override async keepPayload(route: string, key: string, receivedAt: number, payload: Payload): Promise<void> {
        await super.keepPayload(route, key, receivedAt, payload);
        if (dying) throw new Error('the function died here');
      }
    }
    const worker = await ingestFixture({ tableName: table, now: () => clock.now });
    const fx = await ingestFixture({ tableName: table, store: new DyingStore(dynamo, table), queueUrl: worker.queueUrl, now: () => clock.now });
    const key = uniqueKey(ROUTE);
    const deliver = async (): Promise<number> => (await fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }))).statusCode ?? 0;
    const item = async () =>
      (await documentClient(dynamo).send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
    const died = [await deliver(), await deliver()];
    dying = false;
    // Act: the reconciler re-sends the kept payload (a message that follows no answer of ours), a
    // worker takes it, and the sender's next retry comes well past the margin.
    const record = fromRecordItem((await item()) ?? {});
    await new SqsWorkQueue(worker.sqs, worker.queueUrl).send(workMessageOf(record, keptPayloadOf(record) as Payload));
    expect(await worker.takeWork()).toBe(1);
    clock.now += ANSWER_MARGIN_MS + 60_000;
    const retry = await deliver();
    // Assess: both deaths answered 5xx (API Gateway's answer to a failed function); the retry is no repeat.
    expect(died.every((s) => s >= 500)).toBe(true);
    expect(retry).toBe(202);
    expect(fromRecordItem((await item()) ?? {}).repeats ?? 0).toBe(0);
  });
});
