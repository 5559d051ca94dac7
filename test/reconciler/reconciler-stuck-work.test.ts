import { describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { GetQueueAttributesCommand, PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { localSqsClient } from '../../local/aws-clients.ts';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { MAX_ATTEMPTS, ROUTE } from '../support/executor-fixture.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { reconcilerFixture, recentWindow } from '../support/reconciler-fixture.ts';
import { sampleRecord } from '../support/event-records.ts';

describe('the reconciler and stuck work', () => {
  it('re-enqueues a RECEIVED record whose send failed and whose sender never retried, once, and it then executes exactly once', async () => {
    // Prepare: the delivery's send fails (a 503): the record keeps its payload, and nobody retries.
    const rf = await reconcilerFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const outage = await ingestFixture({
      routes: rf.fx.routes,
      tableName: rf.eventsTable,
      queue: new SqsWorkQueue(sqs, `${rf.fx.queueUrl}-gone`),
    });
    const key = uniqueKey(ROUTE);
    expect((await outage.invoke(signedDelivery(ROUTE, key, { payload: { amount: 40 } }))).statusCode).toBe(503);
    // Act: a run 20 minutes later (past stuckAfter 900 s), and a second run right after it.
    rf.fx.clockOffsetMs = 20 * 60_000;
    const first = await rf.reconciler().run(recentWindow(rf.fx));
    const second = await rf.reconciler().run(recentWindow(rf.fx));
    const queued = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: rf.fx.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    await rf.fx.drain();
    // Assess
    expect(first.counts.reenqueued).toBe(1);
    expect(second.counts.reenqueued).toBe(0);
    expect(queued.Attributes?.ApproximateNumberOfMessages).toBe('1');
    expect(await rf.fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(await rf.fx.ledger(key)).toHaveLength(1);
    expect((await rf.fx.log(key)).map((e) => e.outcome)).toEqual(['re-enqueued', 'completed']);
  });

  it('leaves a RECEIVED record younger than the threshold alone', async () => {
    const rf = await reconcilerFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    await rf.fx.deliver({ amount: 1 });
    await sqs.send(new PurgeQueueCommand({ QueueUrl: rf.fx.queueUrl }));
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    expect(report.counts).toMatchObject({ scanned: 1, reenqueued: 0 });
  });

  it('re-enqueues an EXECUTING record whose lease expired, and it completes once', async () => {
    // Prepare: a worker claims on the message's second receive (so the record keeps the
    // payload), and dies; then the message is lost too, as when SQS's backstop moves it to the DLQ.
    const rf = await reconcilerFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const key = await rf.fx.deliver({ amount: 8 });
    const { DynamoDbExecutionStore } = await import('../../lambdas/store/dynamodb-execution-store.ts');
    const store = new DynamoDbExecutionStore(rf.dynamo, rf.eventsTable);
    const record = await rf.fx.record(key);
    const claim = await store.acquireLease({
      route: 'standard-webhooks',
      key,
      receivedAt: Number(record?.receivedAt),
      nowMs: Date.now(),
      leaseMs: 15_000,
      token: 'dead-worker',
      maxAttempts: MAX_ATTEMPTS,
      payload: { body: JSON.stringify({ amount: 8 }), bodyEncoding: 'utf8', headers: { 'content-type': 'application/json' } },
    });
    await sqs.send(new PurgeQueueCommand({ QueueUrl: rf.fx.queueUrl }));
    // Act: the lease ran out longer ago than stuckAfter (900 s); the reconciler re-enqueues; the executor completes.
    rf.fx.clockOffsetMs = 20 * 60_000;
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    const again = await rf.reconciler().run(recentWindow(rf.fx));
    await rf.fx.drain();
    // Assess
    expect(claim.kind).toBe('leased');
    expect(report.counts.reenqueued).toBe(1);
    expect(again.counts.reenqueued).toBe(0);
    expect(await rf.fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(await rf.fx.ledger(key)).toHaveLength(1);
  });

  it('reports a stuck record that keeps no payload, and sends nothing: its message waits in the queue or the DLQ, or its sender retries', async () => {
    // Prepare: an accepted delivery whose message nobody has taken in 20 minutes (the executor is behind, or its message went to the DLQ).
    const rf = await reconcilerFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const key = await rf.fx.deliver({ amount: 3 });
    await sqs.send(new PurgeQueueCommand({ QueueUrl: rf.fx.queueUrl }));
    rf.fx.clockOffsetMs = 20 * 60_000;
    // Act
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    // Assess: a finding for people; the record and the queue are left as they were.
    expect(report.counts).toMatchObject({ scanned: 1, reenqueued: 0 });
    expect(report.needsAttention).toEqual([expect.objectContaining({ key, finding: 'payload-not-kept' }) as unknown]);
    expect(await rf.fx.record(key)).toMatchObject({ status: 'RECEIVED', attempts: 0 });
    expect((await rf.fx.record(key))?.body).toBeUndefined();
  });

  it('counts FAILED records and lists them for people without touching them', async () => {
    const rf = await reconcilerFixture();
    const key = await rf.fx.deliver({ amount: 1, simulate: { permanentError: true } });
    await rf.fx.drain();
    const before = await rf.fx.record(key);
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    expect(report.counts).toMatchObject({ failed: 1, reenqueued: 0 });
    expect(report.needsAttention).toEqual([expect.objectContaining({ key, finding: 'failed' }) as unknown]);
    expect(await rf.fx.record(key)).toEqual(before);
  });

  it('finishes its run and reports reenqueue-failed when the queue refuses one record\'s message, still re-enqueuing the other', async () => {
    // Prepare: two RECEIVED records whose messages were lost half an hour ago. One is old, from
    // before ingest checked what SQS can carry: its body holds U+FFFF, which SQS refuses.
    const rf = await reconcilerFixture();
    const at = Date.now() - 30 * 60_000;
    // Each with its body's own fingerprint: the executor runs nothing else.
    const stuck = (body: string): EventRecord => sampleRecord(ROUTE, uniqueKey(ROUTE), at, { body, fingerprint: fingerprint(Buffer.from(body)) });
    const refused = stuck('{"amount":1,"note":"\uFFFF"}');
    const fine = stuck('{"amount":12}');
    const doc = documentClient(rf.dynamo);
    for (const record of [refused, fine]) await doc.send(new PutCommand({ TableName: rf.eventsTable, Item: toRecordItem(record) }));
    // Act
    const report = await rf.reconciler().run(recentWindow(rf.fx));
    await rf.fx.drain();
    // Assess: the refusal is a finding for people, not the end of the run.
    expect(report.stoppedEarly).toBe(false);
    expect(report.counts).toMatchObject({ scanned: 2, reenqueued: 1, needsAttention: 1 });
    expect(report.needsAttention).toEqual([
      { route: ROUTE, key: refused.key, finding: 'reenqueue-failed', detail: expect.stringContaining('Invalid characters') as unknown },
    ]);
    expect(await rf.fx.record(fine.key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(await rf.fx.ledger(fine.key)).toHaveLength(1);
    expect((await rf.fx.log(fine.key)).map((e) => e.outcome)).toEqual(['re-enqueued', 'completed']);
    expect(await rf.fx.record(refused.key)).toMatchObject({ status: 'RECEIVED', attempts: 0 });
  });
});
