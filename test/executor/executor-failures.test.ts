import { describe, expect, inject, it } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { sqsRecordOf } from '../../local/sqs-event-source.ts';
import { DEAD_LETTER_STAMP_MARGIN_MS, TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { executorFixture, MAX_ATTEMPTS, ROUTE } from '../support/executor-fixture.ts';
import { SCHEME_ROUTES } from '../support/ingest-fixture.ts';

/**
 * A person redrives a while after the failure: the fixture's clock (the executor's, and the
 * SentTimestamp it reads from SQS) moves on this far. A copy SQS stamped within
 * DEAD_LETTER_STAMP_MARGIN_MS of the failure could be the executor's own copy on its way.
 */
const REDRIVE_LATER_MS = DEAD_LETTER_STAMP_MARGIN_MS + 60_000;

describe('the executor on failing actions, the DLQ and redrives', () => {
  it('completes on attempt 3 after failAttempts 2, with 3 execution-log entries carrying one operation fingerprint', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 300, simulate: { failAttempts: 2 } });
    // Act
    await fx.drain();
    // Assess
    const record = await fx.record(key);
    expect(record).toMatchObject({ status: 'COMPLETED', attempts: 3 });
    const log = await fx.log(key);
    expect(log.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'retryable-error'],
      [2, 'retryable-error'],
      [3, 'completed'],
    ]);
    expect(new Set(log.map((e) => e.operationFingerprint)).size).toBe(1);
    expect(String(log[0]?.operationFingerprint)).toMatch(/^[0-9a-f]{64}$/);
    expect(log[0]?.error).toMatchObject({ class: 'RetryableActionError' });
    expect(await fx.ledger(key)).toHaveLength(1);
  });

  it('puts work that fails on each of its maxAttempts in the DLQ with the full context; a redrive runs it on a fresh budget, once', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 500, currency: 'USD', simulate: { failAttempts: MAX_ATTEMPTS } });
    // Act
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    const failed = await fx.record(key);
    // Assess: the budget is the record's attempts, and the DLQ copy is enough for an audit without the table.
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      route: 'standard-webhooks',
      key,
      attempts: MAX_ATTEMPTS,
      reason: `retries exhausted after ${MAX_ATTEMPTS} attempts`,
      lastError: expect.stringContaining('RetryableActionError') as unknown,
      headers: { 'content-type': 'application/json' },
      deadLetterId: expect.any(String) as unknown,
    });
    expect(JSON.parse(String(dead[0]?.body))).toMatchObject({ amount: 500 });
    expect(dead[0]?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof dead[0]?.receivedAt).toBe('number');
    expect(failed).toMatchObject({
      status: 'FAILED',
      attempts: MAX_ATTEMPTS,
      runs: MAX_ATTEMPTS,
      deadLetterId: dead[0]?.deadLetterId,
      deadLettered: dead[0]?.deadLetterId,
      lastError: expect.stringContaining(`attempt ${MAX_ATTEMPTS}`) as unknown,
    });
    expect(await fx.ledger(key)).toHaveLength(0);
    // The copy stays a whole DLQ retention's worth and more: the record outlives it.
    expect(Number(failed?.expiresAt)).toBeGreaterThanOrEqual(Math.floor(Number(failed?.failedAt) / 1000) + 15 * 86_400);
    // Act: later, the console's "redrive to source" sends the DLQ message back to the queue.
    fx.clockOffsetMs = REDRIVE_LATER_MS;
    await fx.redrive(dead[0]!);
    await fx.drain();
    // Assess: a fresh budget (attempts 1), while the run number goes on: run 4 passes (failAttempts was 3), one entry.
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1, runs: MAX_ATTEMPTS + 1, redrives: 1 });
    expect(await fx.ledger(key)).toHaveLength(1);
    const log = await fx.log(key);
    expect(log.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'retryable-error'],
      [2, 'retryable-error'],
      [3, 'retries-exhausted'],
      [4, 'completed'],
    ]);
    expect(log[3]?.detail).toEqual({ redrive: 1 });
    expect(await fx.takeDeadLetters()).toEqual([]);
  });

  it('sends a permanent error to the DLQ on the first attempt', async () => {
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 1, simulate: { permanentError: true } });
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ key, attempts: 1, reason: 'permanent error' });
    expect(await fx.record(key)).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect((await fx.log(key)).map((e) => e.outcome)).toEqual(['permanent-error']);
  });

  it('acknowledges a redrive of finished work without running it again', async () => {
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 9 });
    await fx.drain();
    await fx.redrive(await fx.workMessage(key));
    const round = await fx.poll();
    expect(round).toMatchObject({ received: 1, deleted: 1 });
    expect(await fx.ledger(key)).toHaveLength(1);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('leaves two ledger entries and a COMPLETED record after crashAfterEffect: the double effect layer 3 repairs', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 77, simulate: { crashAfterEffect: true } });
    // Act: the first worker posts and dies; its message comes back after the visibility timeout, but the lease is live.
    const first = await fx.pollUntilReceived();
    const crashed = await fx.record(key);
    const before = fx.now();
    const whileLeased = await fx.pollUntilReceived();
    const after = fx.now();
    // The lease runs out (the executor's clock moves past it and twice the clock bound), and the next delivery claims.
    fx.clockOffsetMs = 15_000 + TAKEOVER_MARGIN_MS + 5_000;
    await fx.drain();
    // Assess: the copy that found the lease went back for the lease's remaining time, not the queue's visibility timeout.
    expect(first).toMatchObject({ received: 1, handedBack: 1 });
    expect(crashed).toMatchObject({ status: 'EXECUTING', attempts: 1 });
    expect(whileLeased).toMatchObject({ received: 1, handedBack: 1 });
    const leaseUntil = Number(crashed?.leaseUntil);
    expect(fx.visibilityChanges).toHaveLength(1);
    expect(fx.visibilityChanges[0]?.seconds).toBeGreaterThanOrEqual((leaseUntil + TAKEOVER_MARGIN_MS - after) / 1000);
    expect(fx.visibilityChanges[0]?.seconds).toBeLessThanOrEqual((leaseUntil + TAKEOVER_MARGIN_MS - before) / 1000 + 3);
    const ledger = await fx.ledger(key);
    expect(ledger.map((e) => e.status)).toEqual(['posted', 'posted']);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
  });

  it('runs FAILED work once whatever copies of its message arrive, and once more on a redrive of its dead-letter copy', async () => {
    // Prepare: an action refused for good on its first run, that passes on the next.
    let runs = 0;
    const refusedOnce: Action = (ctx) => {
      runs++;
      if (ctx.attempt === 1) return Promise.reject(new PermanentActionError('refused on run 1'));
      return Promise.resolve({ attempt: ctx.attempt });
    };
    const fx = await executorFixture({ actions: { refusedOnce }, action: 'refusedOnce' });
    const key = await fx.deliver({ amount: 5 });
    const work = await fx.workMessage(key);
    // Act: the first run fails permanently; 3 more messages for the key arrive, as a duplicate's or the reconciler's resend would.
    const first = await fx.pollUntilReceived();
    for (let i = 0; i < 3; i++) await fx.redrive(work);
    await fx.drain();
    const runsBeforeRedrive = runs;
    const failed = await fx.record(key);
    const dead = await fx.takeDeadLetters();
    // Act: later, a person redrives the dead-letter copy from the DLQ, and sends it twice by mistake.
    fx.clockOffsetMs = REDRIVE_LATER_MS;
    await fx.redrive(dead[0]!);
    await fx.redrive(dead[0]!);
    await fx.drain();
    // Assess: one run for the failure and the 3 copies, one for the redrive; the log shows both runs.
    expect(first).toMatchObject({ received: 1, deleted: 1 });
    expect(runsBeforeRedrive).toBe(1);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1, runs: 1 });
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ key, reason: 'permanent error', attempts: 1, deadLetterId: failed?.deadLetterId });
    expect(runs).toBe(2);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1, runs: 2, redrives: 1 });
    expect((await fx.log(key)).map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'permanent-error'],
      [2, 'completed'],
    ]);
    expect(await fx.takeDeadLetters()).toEqual([]);
  });

  it('fails an always-retryable action after exactly maxAttempts 2 runs, whatever the receive count, and its dead-letter copy reaches the DLQ', async () => {
    // Prepare: a route with a budget of 2, and the real message received by hand.
    let runs = 0;
    const unavailable: Action = () => {
      runs++;
      return Promise.reject(new RetryableActionError('downstream answered 503'));
    };
    const routes = SCHEME_ROUTES.map((r) => (r.name === ROUTE ? { ...r, maxAttempts: 2 } : r));
    const fx = await executorFixture({ actions: { unavailable }, action: 'unavailable', routes });
    const key = await fx.deliver({ amount: 2 });
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MessageSystemAttributeNames: ['All'] }));
    const message = sqsRecordOf(out.Messages![0]!, 'arn:aws:sqs:us-east-1:000000000000:exec');
    // Act: copies of it read receive counts 7 (near the backstop of 8), then 1, 1, 1; none of them is the budget.
    const answers = [];
    for (const [i, receiveCount] of ['7', '1', '1', '1'].entries()) {
      const copy = { ...message, messageId: `copy-${i}`, attributes: { ...message.attributes, ApproximateReceiveCount: receiveCount } };
      answers.push(await fx.handler({ Records: [copy] }, lambdaContext()));
    }
    const failed = await fx.record(key);
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    // Assess: run 1 handed back, run 2 the last of the budget, then nothing runs.
    expect(answers.map((a) => a.batchItemFailures.length)).toEqual([1, 0, 0, 0]);
    expect(runs).toBe(2);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 2, runs: 2 });
    expect((await fx.log(key)).map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'retryable-error'],
      [2, 'retries-exhausted'],
    ]);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      key,
      attempts: 2,
      reason: 'retries exhausted after 2 attempts',
      lastError: 'RetryableActionError: downstream answered 503',
    });
    expect(await fx.record(key)).toMatchObject({ status: 'FAILED', deadLettered: dead[0]?.deadLetterId });
  });
});
