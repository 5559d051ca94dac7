import { describe, expect, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { lambdaContext } from '../../local/http-api-event.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { sqsRecordOf } from '../../local/sqs-event-source.ts';
import { executorFixture } from '../support/executor-fixture.ts';

describe('the executor on ordinary and duplicate messages', () => {
  it('turns one message into one ledger entry and a COMPLETED record with a log entry', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 4200, currency: 'EUR' });
    // Act
    await fx.drain();
    // Assess
    const record = await fx.record(key);
    expect(record?.status).toBe('COMPLETED');
    expect(record?.attempts).toBe(1);
    expect(JSON.parse(String(record?.result))).toMatchObject({ amount: 4200, currency: 'EUR' });
    const ledger = await fx.ledger(key);
    expect(ledger.map((e) => [e.amount, e.status])).toEqual([[4200, 'posted']]);
    const log = await fx.log(key);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, outcome: 'completed', kind: 'execution' });
    expect(String(log[0]?.operationFingerprint)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('executes once when the same message arrives 5 times, sequentially and in one concurrent batch', async () => {
    // Prepare: take the one real message off the queue and copy it, as SQS's at-least-once delivery may.
    const fx = await executorFixture();
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const keyA = await fx.deliver({ amount: 1 });
    const keyB = await fx.deliver({ amount: 2 });
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }));
    const [first, second] = received.Messages ?? [];
    expect(first).toBeDefined();
    const arn = 'arn:aws:sqs:us-east-1:000000000000:exec';
    // Act: message A five times in a row, message B five times in one batch.
    const sequential = [];
    for (let i = 0; i < 5; i++) {
      sequential.push(await fx.handler({ Records: [{ ...sqsRecordOf(first!, arn), messageId: `a-${i}` }] }, lambdaContext()));
    }
    const concurrent = await fx.handler(
      { Records: Array.from({ length: 5 }, (_, i) => ({ ...sqsRecordOf(second!, arn), messageId: `b-${i}` })) },
      lambdaContext(),
    );
    // Assess: every copy is acknowledged (the live-lease copies of B may be handed back),
    // and each key has exactly one ledger entry.
    expect(sequential.every((r) => r.batchItemFailures.length === 0)).toBe(true);
    const bodies = [first, second].map((m) => JSON.parse(m?.Body ?? '{}') as { key: string });
    const keys = bodies.map((b) => b.key);
    expect(keys.sort()).toEqual([keyA, keyB].sort());
    expect(await fx.ledger(keyA)).toHaveLength(1);
    expect(await fx.ledger(keyB)).toHaveLength(1);
    expect(concurrent.batchItemFailures.length).toBeLessThanOrEqual(4);
    expect((await fx.record(keyB))?.status).toBe('COMPLETED');
    // Once B is done, the handed-back copies are acknowledged as duplicates.
    const again = await fx.handler(
      { Records: concurrent.batchItemFailures.map((f) => ({ ...sqsRecordOf(second!, arn), messageId: f.itemIdentifier })) },
      lambdaContext(),
    );
    expect(again.batchItemFailures).toEqual([]);
    expect(await fx.ledger(keyB)).toHaveLength(1);
  });

  it('sends a message whose record expired to the DLQ with that reason, and runs nothing', async () => {
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 7 });
    fx.clockOffsetMs = 36 * 86_400_000;
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ key, route: 'standard-webhooks', reason: 'record expired before execution' });
    expect(await fx.ledger(key)).toHaveLength(0);
    expect((await fx.record(key))?.status).toBe('RECEIVED');
  });
});
