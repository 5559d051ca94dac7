/**
 * The executor against DynamoDB as the SDK really meets it: a write commits, its answer is
 * lost (a 500), and the SDK's own retry of the identical command meets the committed first
 * attempt and fails its condition (test/support/ambiguous-dynamodb.ts). Each transition must
 * take that refusal for its own success (the write nonce, store/conditional-write.ts).
 */
import { describe, expect, it } from 'vitest';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { once } from '../support/ambiguous-dynamodb.ts';
import { executorHarness, updating } from './executor-harness.ts';

/** An action that counts its runs and fails as told on the runs it names. */
function counted(fails: Partial<Record<number, 'retryable' | 'permanent'>> = {}): { action: Action; runs: () => number } {
  let runs = 0;
  const action: Action = (ctx) => {
    runs++;
    const fate = fails[ctx.attempt];
    if (fate === 'retryable') return Promise.reject(new RetryableActionError(`downstream answered 503 on run ${ctx.attempt}`));
    if (fate === 'permanent') return Promise.reject(new PermanentActionError(`refused on run ${ctx.attempt}`));
    return Promise.resolve({ run: ctx.attempt });
  };
  return { action, runs: () => runs };
}

describe('the executor when a write commits and its answer is lost (the SDK retries it)', () => {
  it('takes the refused retry of its own lease for its lease, and runs the action once instead of finding itself locked out', async () => {
    // Prepare
    const work = counted();
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('leaseUntil = :leaseUntil'));
    const h = await executorHarness({ action: work.action, decide: lost });
    const { key, message } = await h.deliver({ amount: 10 });
    // Act
    const report = await h.run(message);
    h.heal();
    // Assess
    expect(lost.fired()).toBe(true);
    expect(report).toMatchObject({ outcome: 'completed', ack: true });
    expect(work.runs()).toBe(1);
    expect(await h.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1, runs: 1 });
  });

  it('keeps work whose release lost its answer: RECEIVED, its message handed back, and the next receive completes it (defect 2)', async () => {
    // Prepare: run 1 fails retryably, and its release commits but answers a 500.
    const work = counted({ 1: 'retryable' });
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('#status = :received, lastError = :error'));
    const h = await executorHarness({ action: work.action, decide: lost });
    const { key, message } = await h.deliver({ amount: 20 });
    // Act
    const first = await h.run(message);
    const released = await h.record(key);
    h.heal();
    h.advance(2_000);
    const second = await h.run(message, { receiveCount: 2 });
    // Assess: the release was ours, not a fence: the message went back, never deleted, and ran again.
    expect(lost.fired()).toBe(true);
    expect(first).toMatchObject({ outcome: 'retryable-error', ack: false });
    expect(released).toMatchObject({ status: 'RECEIVED', attempts: 1 });
    expect(released?.leaseToken).toBeUndefined();
    expect(second).toMatchObject({ outcome: 'completed', ack: true });
    expect(work.runs()).toBe(2);
    expect((await h.log(key)).map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'retryable-error'],
      [2, 'completed'],
    ]);
  });

  it('completes once when its completion lost its answer: acknowledged, with no fenced-out attempt logged', async () => {
    const work = counted();
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('#status = :completed'));
    const h = await executorHarness({ action: work.action, decide: lost });
    const { key, message } = await h.deliver({ amount: 30 });
    const report = await h.run(message);
    h.heal();
    expect(lost.fired()).toBe(true);
    expect(report).toMatchObject({ outcome: 'completed', ack: true });
    expect((await h.log(key)).map((e) => e.outcome)).toEqual(['completed']);
  });

  it('fails permanent work whose FAILED write lost its answer, and sends the dead-letter copy the record names', async () => {
    const work = counted({ 1: 'permanent' });
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('#status = :failed'));
    const h = await executorHarness({ action: work.action, decide: lost });
    const { key, message } = await h.deliver({ amount: 40 });
    const report = await h.run(message);
    h.heal();
    const failed = await h.record(key);
    expect(lost.fired()).toBe(true);
    expect(report).toMatchObject({ outcome: 'permanent-error', ack: true, deadLetterReason: 'permanent error' });
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(h.sent.map((m) => m.deadLetterId)).toEqual([failed?.deadLetterId]);
  });

  it('runs a person\'s redrive once when the redrive write lost its answer', async () => {
    // Prepare: run 1 is refused for good; its dead-letter copy is what a person redrives, a minute later.
    const work = counted({ 1: 'permanent' });
    const lost = once('UpdateItemCommand', 'commit-then-error', updating('redrivenAt = :now'));
    const h = await executorHarness({ action: work.action, decide: lost });
    const { key, message } = await h.deliver({ amount: 50 });
    await h.run(message);
    const copy = h.sent[0]!;
    h.advance(60_000);
    // Act: the redriven copy is a new message, stamped by SQS now.
    const report = await h.run(copy, { sentAt: h.now() });
    h.heal();
    // Assess
    expect(lost.fired()).toBe(true);
    expect(report).toMatchObject({ outcome: 'completed', ack: true });
    expect(work.runs()).toBe(2);
    expect(await h.record(key)).toMatchObject({ status: 'COMPLETED', redrives: 1, runs: 2, attempts: 1 });
  });
});
