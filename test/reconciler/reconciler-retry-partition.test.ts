import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { EventRecord, WorkMessage } from '../../lambdas/domain/event-record.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { reconcile } from '../../lambdas/reconciler/reconcile.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { strandedIndexKeys } from '../../lambdas/store/record-transitions.ts';
import { createEventsTable, createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { sampleRecord } from '../support/event-records.ts';

const HOUR = 3_600_000;
const ROUTE = 'pay';
const config = resolveConfig({
  demo: true,
  routes: [{ name: ROUTE, signature: { scheme: 'standard-webhooks' }, secretName: 't/pay', action: 'payout', actionTimeSeconds: 5 }],
});

async function setup() {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const suffix = randomUUID().slice(0, 8);
  const eventsTable = await createEventsTable(dynamo, `events-r-${suffix}`);
  const { queueUrl } = await createQueuePair(sqs, inject('sqsEndpoint'), `retry-${suffix}`, { maxReceiveCount: 12 });
  const real = new SqsWorkQueue(sqs, queueUrl);
  /** SQS on fauxqs, with an outage switch: the one fault fauxqs cannot make by itself. */
  const queue = { down: false, send: (m: WorkMessage) => (queue.down ? Promise.reject(new Error('SQS is unavailable')) : real.send(m)) };
  const run = (now: number): Promise<ReconcileReport> =>
    reconcile(
      { store: new DynamoDbReconcilerStore(dynamo, eventsTable), queue: queue satisfies WorkQueue, routes: new Map(config.routes.map((r) => [r.name, r])), now: () => now },
      { fromMs: now - 24 * HOUR, toMs: now - 300_000, budgetMs: 60_000, stuckAfterMs: 900_000, maxReenqueue: 10 },
    );
  const received = async (): Promise<WorkMessage[]> => {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    return (out.Messages ?? []).map((m) => JSON.parse(m.Body ?? '{}') as WorkMessage);
  };
  const put = (item: Record<string, unknown>) => documentClient(dynamo).send(new PutCommand({ TableName: eventsTable, Item: item }));
  const raw = async (key: string) =>
    (await documentClient(dynamo).send(new GetCommand({ TableName: eventsTable, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } }))).Item;
  return { queue, run, received, put, raw, dynamo, eventsTable, store: new DynamoDbExecutionStore(dynamo, eventsTable) };
}

function record(key: string, receivedAt: number, extra: Partial<EventRecord> = {}): EventRecord {
  return sampleRecord(ROUTE, key, receivedAt, extra);
}

describe('the reconciler and work that waits longer than its window', () => {
  it('watches a stuck record that keeps no payload beyond its window, and sends it once a copy of it kept the payload', async () => {
    // Prepare: a claimed record with no payload and no message (its first copy's function died before the send).
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 21, 10, 0);
    const { body: _body, bodyEncoding: _encoding, headers: _headers, ...bare } = record('unsent-1', t0);
    await s.put(toRecordItem(bare));
    // Act: a run finds it stuck with nothing to send; two days on, after the sender's retry kept the payload, another run.
    const first = await s.run(t0 + HOUR);
    const sentFirst = await s.received();
    const ingest = new DynamoDbEventStore(s.dynamo, s.eventsTable);
    await ingest.keepPayload(ROUTE, 'unsent-1', t0, { body: '{"amount":1}', bodyEncoding: 'utf8', headers: {} });
    const later = await s.run(t0 + 48 * HOUR);
    const sentLater = await s.received();
    // Assess: reported, kept in the retry partition past the 24 h window, then sent once, from there.
    expect(first.needsAttention).toEqual([expect.objectContaining({ key: 'unsent-1', finding: 'payload-not-kept' }) as unknown]);
    expect(sentFirst).toEqual([]);
    expect(later.counts.reenqueued).toBe(1);
    expect(sentLater.map((m) => [m.key, m.body])).toEqual([['unsent-1', '{"amount":1}']]);
    expect((await s.raw('unsent-1'))?.gsi2pk).toBeUndefined();
  });

  it('stops watching a record that keeps no payload once its sender can no longer retry it', async () => {
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 1, 10, 0);
    const { body: _body, bodyEncoding: _encoding, headers: _headers, ...bare } = record('unsent-2', t0);
    await s.put(toRecordItem(bare));
    await s.run(t0 + HOUR);
    const watched: unknown = (await s.raw('unsent-2'))?.gsi2pk;
    // Standard Webhooks senders retry for 3 days and 3 hours.
    const after = await s.run(t0 + 4 * 24 * HOUR);
    expect(watched).toBe(strandedIndexKeys(ROUTE, 'unsent-2', t0).gsi2pk);
    expect(after.needsAttention).toEqual([expect.objectContaining({ key: 'unsent-2', finding: 'payload-not-kept' }) as unknown]);
    expect((await s.raw('unsent-2'))?.gsi2pk).toBeUndefined();
  });

  it('keeps a record whose re-send failed, and re-sends it once SQS is back, after the record left the 24 h window', async () => {
    // Prepare: a RECEIVED record whose message was lost; SQS is down at the first run.
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 20, 10, 0);
    await s.put(toRecordItem(record('lost-1', t0)));
    s.queue.down = true;
    // Act
    const during = await s.run(t0 + HOUR);
    s.queue.down = false;
    const after = await s.run(t0 + 30 * HOUR);
    const again = await s.run(t0 + 32 * HOUR);
    // Assess: the second run no longer sees the record in its window, yet re-sends it; once only.
    expect(during.needsAttention).toContainEqual(expect.objectContaining({ key: 'lost-1', finding: 'reenqueue-failed' }));
    expect(after.counts.scanned).toBe(0);
    expect(after.counts.reenqueued).toBe(1);
    expect(again.counts.reenqueued).toBe(0);
    expect((await s.received()).map((m) => m.key)).toEqual(['lost-1']);
  });

  it("re-sends a FAILED record's dead-letter copy that never left, however old the record", async () => {
    // Prepare: failed 3 days after it was received (a redrive, say), its copy lost with its worker.
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 20, 10, 0);
    const failedAt = t0 + 3 * 24 * HOUR;
    await s.put({
      ...toRecordItem(record('failed-1', t0, { status: 'FAILED', attempts: 5, lastEnqueuedAt: failedAt })),
      deadLetterId: 'dl-1',
      lastError: 'PermanentActionError: refused',
      ...strandedIndexKeys(ROUTE, 'failed-1', t0),
    });
    // Act: a run right after the failure leaves the copy in flight alone; one 20 minutes on re-sends it.
    const early = await s.run(failedAt + 60_000);
    const late = await s.run(failedAt + 20 * 60_000);
    // Assess
    expect(early.counts.reenqueued).toBe(0);
    expect(late.counts.reenqueued).toBe(1);
    expect(await s.received()).toEqual([expect.objectContaining({ key: 'failed-1', deadLetterId: 'dl-1', attempts: 5 })]);
  });

  it("sends a FAILED record's copy within DEAD_LETTER_SEND_SECONDS of its claim or not at all, and the next run sends it", async () => {
    // Prepare: a FAILED record whose copy never left; the first run's claimResend takes 2.5 s
    // (the SDK retried it), so its copy would be stamped past the claim's send window.
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 20, 10, 0);
    await s.put({
      ...toRecordItem(record('failed-3', t0, { status: 'FAILED', attempts: 5, lastEnqueuedAt: t0 })),
      deadLetterId: 'dl-3',
      ...strandedIndexKeys(ROUTE, 'failed-3', t0),
    });
    const clock = { now: t0 + HOUR, claimTakesMs: 2_500 };
    class SlowClaims extends DynamoDbReconcilerStore {
      override async claimResend(...args: Parameters<DynamoDbReconcilerStore['claimResend']>): Promise<boolean> {
        const out = await super.claimResend(...args);
        clock.now += clock.claimTakesMs;
        return out;
      }
    }
    const run = () =>
      reconcile(
        {
          store: new SlowClaims(s.dynamo, s.eventsTable),
          queue: s.queue satisfies WorkQueue,
          routes: new Map(config.routes.map((r) => [r.name, r])),
          now: () => clock.now,
        },
        { fromMs: clock.now - 24 * HOUR, toMs: clock.now - 300_000, budgetMs: 60_000, stuckAfterMs: 900_000, maxReenqueue: 10 },
      );
    // Act: the slow run; then one an hour on whose claim is quick.
    const slow = await run();
    const sentSlow = await s.received();
    const kept: unknown = (await s.raw('failed-3'))?.gsi2pk;
    clock.now += HOUR;
    clock.claimTakesMs = 100;
    const quick = await run();
    // Assess: nothing sent late, the record kept for the next run, which sent it once.
    expect(sentSlow).toEqual([]);
    expect(slow.needsAttention).toContainEqual(expect.objectContaining({ key: 'failed-3', finding: 'reenqueue-failed' }));
    expect(kept).toBe(`RETRY#${ROUTE}`);
    expect(quick.counts.reenqueued).toBe(1);
    expect(await s.received()).toEqual([expect.objectContaining({ key: 'failed-3', deadLetterId: 'dl-3' })]);
  });

  it('lets a FAILED record leave the retry partition once its copy is marked dead-lettered', async () => {
    const s = await setup();
    const t0 = Date.UTC(2026, 10, 20, 10, 0);
    await s.put({
      ...toRecordItem(record('failed-2', t0, { status: 'FAILED', attempts: 5, lastEnqueuedAt: t0 })),
      deadLetterId: 'dl-2',
      ...strandedIndexKeys(ROUTE, 'failed-2', t0),
    });
    const before = await s.raw('failed-2');
    await s.store.markDeadLettered(ROUTE, 'failed-2', 'dl-2');
    const report = await s.run(t0 + 3 * 24 * HOUR);
    expect(before?.gsi2pk).toBe(`RETRY#${ROUTE}`);
    expect(await s.raw('failed-2')).toMatchObject({ deadLettered: 'dl-2' });
    expect((await s.raw('failed-2'))?.gsi2pk).toBeUndefined();
    expect(report.counts.reenqueued).toBe(0);
    expect(await s.received()).toEqual([]);
  });
});
