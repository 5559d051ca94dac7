/**
 * Dead-letter copies as SQS really handles them: a copy can come twice (at-least-once
 * delivery keeps its messageId and SentTimestamp), its last receive before the DLQ can be one
 * the executor never saw, and redrives can be weeks apart. A person's redrive is recognised by
 * what only a redrive makes: a new message, stamped by SQS after every copy of ours (defect 10);
 * and a FAILED record outlives every copy that may still bring it back (defect 7).
 */
import { describe, expect, inject, it } from 'vitest';
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PermanentActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { sqsRecordOf } from '../../local/sqs-event-source.ts';
import { DEAD_LETTER_STAMP_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { executorFixture, MAX_RECEIVE_COUNT } from '../support/executor-fixture.ts';

const DAY_MS = 86_400_000;
/** A person redrives well after the copy was sent (the fixture moves SQS's stamps with its clock). */
const LATER_MS = DEAD_LETTER_STAMP_MARGIN_MS + 60_000;

/** An action refused for good on the runs it names, that passes on the others; it counts its runs. */
function refusedOn(runsRefused: (run: number) => boolean): { action: Action; runs: () => number } {
  let runs = 0;
  const action: Action = (ctx) => {
    runs++;
    if (runsRefused(ctx.attempt)) return Promise.reject(new PermanentActionError(`refused on run ${ctx.attempt}`));
    return Promise.resolve({ run: ctx.attempt });
  };
  return { action, runs: () => runs };
}

describe('dead-letter copies and redrives', () => {
  it('never runs FAILED work for an SQS duplicate of its dead-letter copy that arrives after the copy reached the DLQ', async () => {
    // Prepare: run 1 fails for good; its dead-letter copy goes to the work queue.
    const work = refusedOn((run) => run === 1);
    const fx = await executorFixture({ actions: { refused: work.action }, action: 'refused' });
    const key = await fx.deliver({ amount: 1 });
    await fx.pollUntilReceived();
    // Take one receive of the copy as SQS might hand it out again later: same messageId, same SentTimestamp.
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }));
    const copy = out.Messages![0]!;
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: fx.queueUrl, ReceiptHandle: copy.ReceiptHandle, VisibilityTimeout: 0 }));
    // The copy goes around and reaches the DLQ; its last receive marks the record.
    await fx.drain();
    const marked = await fx.record(key);
    // Act: later, the duplicate arrives.
    fx.clockOffsetMs = LATER_MS;
    const duplicate = sqsRecordOf({ ...copy, MessageId: copy.MessageId }, 'arn:aws:sqs:us-east-1:000000000000:exec');
    const answer = await fx.handler({ Records: [duplicate] }, lambdaContext());
    // Assess: nothing ran; the duplicate goes back (to join the DLQ), the record stays FAILED for a person.
    expect(JSON.parse(copy.Body ?? '{}')).toMatchObject({ key, deadLetterId: marked?.deadLetterId });
    expect(marked).toMatchObject({ status: 'FAILED', deadLettered: marked?.deadLetterId });
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: copy.MessageId }]);
    expect(work.runs()).toBe(1);
    expect(await fx.record(key)).toMatchObject({ status: 'FAILED', runs: 1, redrives: 0 });
    expect(await fx.takeDeadLetters()).toHaveLength(1);
  });

  it('runs a person\'s first redrive, also when the copy\'s last receive before the DLQ was one the executor never saw', async () => {
    // Prepare: run 1 fails for good.
    const work = refusedOn((run) => run === 1);
    const fx = await executorFixture({ actions: { refused: work.action }, action: 'refused' });
    const key = await fx.deliver({ amount: 2 });
    await fx.pollUntilReceived();
    // Every receive of the copy is lost on the way (the executor sees none): SQS counts them all and moves it.
    const sqs = localSqsClient(inject('sqsEndpoint'));
    for (let receives = 0; receives < MAX_RECEIVE_COUNT; ) {
      const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, VisibilityTimeout: 0 }));
      receives += (out.Messages ?? []).length;
    }
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl }));
    const unmarked = await fx.record(key);
    const dead = await fx.takeDeadLetters();
    // Act: later, a person redrives it, once.
    fx.clockOffsetMs = LATER_MS;
    await fx.redrive(dead[0]!);
    await fx.drain();
    // Assess
    expect(unmarked).toMatchObject({ status: 'FAILED' });
    expect(unmarked?.deadLettered).toBeUndefined();
    expect(dead).toHaveLength(1);
    expect(work.runs()).toBe(2);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', redrives: 1, runs: 2 });
    expect(await fx.takeDeadLetters()).toEqual([]);
  });

  it('keeps FAILED work redrivable for redrives weeks apart: failed on days 0, 13 and 26, redriven on day 39, past its first expiry', async () => {
    // Prepare: the action is refused on runs 1 to 3, and passes on run 4.
    const work = refusedOn((run) => run <= 3);
    const fx = await executorFixture({ actions: { refused: work.action }, action: 'refused' });
    const key = await fx.deliver({ amount: 3 });
    const firstExpiry = Number((await fx.record(key))?.expiresAt);
    // Act: fail on day 0, then a redrive 13 days after each failure (each copy 13 days old, inside the DLQ's 14).
    await fx.drain();
    const expiries = [Number((await fx.record(key))?.expiresAt)];
    for (const day of [13, 26, 39]) {
      const dead = await fx.takeDeadLetters();
      expect(dead, `day ${day}`).toHaveLength(1);
      fx.clockOffsetMs = day * DAY_MS;
      await fx.redrive(dead[0]!);
      await fx.drain();
      expiries.push(Number((await fx.record(key))?.expiresAt));
    }
    // Assess: the fourth run happened on day 39, though the record was made to expire on day 35.
    expect(work.runs()).toBe(4);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', redrives: 3, runs: 4 });
    const receivedAt = Math.floor(Number((await fx.record(key))?.receivedAt) / 1000);
    expect(firstExpiry - receivedAt).toBe(35 * 86_400);
    // Each failure and redrive kept it at least 15 days past its own day, the DLQ's 14 and a day.
    for (const [i, day] of [0, 13, 26, 39].entries()) expect(expiries[i]! - receivedAt, `day ${day}`).toBeGreaterThanOrEqual((day + 15) * 86_400 - 60);
  });
});
