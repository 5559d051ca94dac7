/**
 * A dead-letter copy adds to its work message: a reason, a last error of up to 500 characters
 * (a control character escapes to 6 bytes in JSON), attempts, its id and one more message
 * attribute. The ingest keeps that much room below SQS's 256 KiB (QUEUE_RESERVE_BYTES, computed
 * from the largest copy), so a copy never overflows after `fail` has committed (defect 12).
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { PermanentActionError } from '../../lambdas/actions/action.ts';
import { QUEUE_RESERVE_BYTES, SQS_MAX_MESSAGE_BYTES, sqsMessageBytes, unqueueableReason } from '../../lambdas/domain/queue-limits.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { executorHarness } from './executor-harness.ts';

describe('a dead-letter copy of the largest body the ingest accepts', () => {
  it('fits in a 256 KiB queue, with the longest last error there is, escaped at its widest', async () => {
    // Prepare: an action refused with 600 control characters (cut to 500, each replaced by U+FFFD,
    // 3 bytes: the widest a character of a last error gets now; the reserve still counts 6).
    const h = await executorHarness({ action: () => Promise.reject(new PermanentActionError('\u0001'.repeat(600))) });
    // Find the body whose work message is exactly the largest the ingest lets through: each
    // backslash pair of the raw body takes 4 bytes in the message, an 'a' takes 1.
    const probe = await h.deliver({ pad: '' });
    const probeBytes = Buffer.byteLength(JSON.stringify(probe.message), 'utf8');
    const room = SQS_MAX_MESSAGE_BYTES - QUEUE_RESERVE_BYTES - probeBytes;
    const pad = '\\'.repeat(Math.floor(room / 4)) + 'a'.repeat(room % 4);
    const { key, message } = await h.deliver({ pad });
    const messageBytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    const oneMore = await h.post({ pad: `${pad}a` });
    // Act: its one run fails for good, and the executor sends the copy it builds.
    const report = await h.run(message);
    const copy = h.sent[0]!;
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const created = await sqs.send(
      new CreateQueueCommand({ QueueName: `size-${randomUUID().slice(0, 8)}`, Attributes: { MaximumMessageSize: String(SQS_MAX_MESSAGE_BYTES) } }),
    );
    const sent = await new SqsWorkQueue(sqs, created.QueueUrl ?? '').send(copy).then(
      () => 'sent',
      (err: unknown) => (err as Error).message,
    );
    // Assess
    expect(messageBytes).toBe(SQS_MAX_MESSAGE_BYTES - QUEUE_RESERVE_BYTES);
    expect(unqueueableReason(JSON.stringify(message))).toBeUndefined();
    expect(oneMore.status).toBe(413);
    expect(report).toMatchObject({ outcome: 'permanent-error', ack: true });
    expect(copy).toMatchObject({ key, reason: 'permanent error', attempts: 1 });
    expect(copy.lastError).toHaveLength(500);
    // The copy grew by about 1.7 KB, all of it within the reserve: SQS (fauxqs counts as SQS does) takes it.
    expect(copy.lastError).toBe(`PermanentActionError: ${'\uFFFD'.repeat(478)}`);
    expect(sqsMessageBytes(copy) - messageBytes).toBeGreaterThan(1_500);
    expect(sqsMessageBytes(copy)).toBeLessThanOrEqual(SQS_MAX_MESSAGE_BYTES);
    expect(sent).toBe('sent');
  });
});
