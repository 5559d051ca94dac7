import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { SCHEME_ROUTES, ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

describe('the ingest handler when SQS fails after the claim', () => {
  it('answers 503, keeps the record, and lets the sender retry get the message sent', async () => {
    // Prepare: the same table; the first handler's queue URL names a queue that does not exist.
    const healthy = await ingestFixture();
    const broken = await ingestFixture({ queue: new SqsWorkQueue(healthy.sqs, `${healthy.queueUrl}-missing`) });
    const key = uniqueKey('stripe');
    const delivery = signedDelivery('stripe', key);
    // Act
    const failed = await broken.invoke(delivery);
    const stored = await documentClient(healthy.ddb).send(
      new GetCommand({ TableName: healthy.tableName, Key: { pk: recordPk('stripe', key), sk: RECORD_SK } }),
    );
    const queuedBeforeRetry = await healthy.messagesInQueue();
    const retry = await healthy.invoke(delivery);
    // Assess
    expect(failed.statusCode).toBe(503);
    expect(failed.headers?.['content-type']).toBe('application/problem+json');
    expect(stored.Item?.status).toBe('RECEIVED');
    expect(stored.Item?.answerStatus).toBe(503);
    expect(queuedBeforeRetry).toBe(0);
    expect(retry.statusCode).toBe(202);
    expect(JSON.parse(retry.body ?? '{}')).toEqual({ id: `stripe/${key}`, status: 'accepted' });
    // The sender's first acceptance: nothing it was told before is replayed.
    expect(retry.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await healthy.messagesInQueue()).toBe(1);
    // A third copy is a plain replay of the now-successful answer and sends nothing.
    const third = await healthy.invoke(delivery);
    expect(third.statusCode).toBe(202);
    expect(third.headers?.['idempotent-replayed']).toBe('true');
    expect(await healthy.messagesInQueue()).toBe(1);
  });

  it('on a strict-409 route, accepts the retry of our 503 with a 202, and refuses only the copies after it', async () => {
    // Prepare: the stripe route answering duplicates with 409.
    const routes = SCHEME_ROUTES.map((r) => (r.name === 'stripe' ? { ...r, duplicateAnswer: 'strict-409' as const } : r));
    const healthy = await ingestFixture({ routes });
    const broken = await ingestFixture({ routes, queue: new SqsWorkQueue(healthy.sqs, `${healthy.queueUrl}-missing`) });
    const key = uniqueKey('stripe');
    const delivery = signedDelivery('stripe', key);
    // Act
    const failed = await broken.invoke(delivery);
    const retry = await healthy.invoke(delivery);
    const queuedAfterRetry = await healthy.messagesInQueue();
    const third = await healthy.invoke(delivery);
    // Assess: the sender never had an acceptance before the retry, so the retry is not a duplicate to it.
    expect(failed.statusCode).toBe(503);
    expect(retry.statusCode).toBe(202);
    expect(JSON.parse(retry.body ?? '{}')).toEqual({ id: `stripe/${key}`, status: 'accepted' });
    expect(retry.headers?.['idempotent-replayed']).toBeUndefined();
    expect(queuedAfterRetry).toBe(1);
    expect(third.statusCode).toBe(409);
    expect(third.headers?.['content-type']).toBe('application/problem+json');
    expect(await healthy.messagesInQueue()).toBe(1);
  });

  it('on a strict-409 route, refuses a copy of a delivery we accepted with a 409, and sends nothing', async () => {
    // Prepare
    const routes = SCHEME_ROUTES.map((r) => (r.name === 'stripe' ? { ...r, duplicateAnswer: 'strict-409' as const } : r));
    const fx = await ingestFixture({ routes });
    const key = uniqueKey('stripe');
    const delivery = signedDelivery('stripe', key);
    // Act
    const first = await fx.invoke(delivery);
    const copy = await fx.invoke(delivery);
    // Assess
    expect(first.statusCode).toBe(202);
    expect(copy.statusCode).toBe(409);
    expect(JSON.parse(copy.body ?? '{}')).toMatchObject({ status: 409, detail: `"stripe/${key}" was already accepted.` });
    expect(await fx.messagesInQueue()).toBe(1);
  });

  it('re-sends when a copy finds the record RECEIVED long after its send, as after a crash', async () => {
    let now = Date.now();
    const fx = await ingestFixture({ now: () => now, resendAfterMs: 60_000 });
    const delivery = signedDelivery('stripe', uniqueKey('stripe'));
    await fx.invoke(delivery);
    now += 30_000;
    await fx.invoke({ ...delivery, headers: { ...delivery.headers } });
    const afterEarlyCopy = await fx.messagesInQueue();
    now += 31_000;
    const late = signedDelivery('stripe', (JSON.parse(delivery.body) as { id: string }).id, { nowSeconds: Math.floor(now / 1000) });
    const answer = await fx.invoke(late);
    expect(afterEarlyCopy).toBe(1);
    expect(answer.statusCode).toBe(202);
    expect(await fx.messagesInQueue()).toBe(2);
  });
});
