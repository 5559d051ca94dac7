import { describe, expect, it } from 'vitest';
import { executorFixture, MAX_RECEIVE_COUNT } from '../support/executor-fixture.ts';

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

  it('puts failAttempts beyond maxReceiveCount in the DLQ with the full context; a redrive completes it once', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 500, currency: 'USD', simulate: { failAttempts: MAX_RECEIVE_COUNT } });
    // Act
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    const failed = await fx.record(key);
    // Assess: the DLQ copy is enough for an audit without the table.
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      route: 'standard-webhooks',
      key,
      attempts: MAX_RECEIVE_COUNT,
      reason: `retries exhausted after ${MAX_RECEIVE_COUNT} attempts`,
      lastError: expect.stringContaining('RetryableActionError') as unknown,
      headers: { 'content-type': 'application/json' },
    });
    expect(JSON.parse(String(dead[0]?.body))).toMatchObject({ amount: 500 });
    expect(dead[0]?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof dead[0]?.receivedAt).toBe('number');
    expect(failed).toMatchObject({ status: 'FAILED', attempts: MAX_RECEIVE_COUNT, lastError: expect.stringContaining('attempt 3') as unknown });
    expect(await fx.ledger(key)).toHaveLength(0);
    // Act: the console's "redrive to source" sends the DLQ message back to the queue.
    await fx.redrive(dead[0]!);
    await fx.drain();
    // Assess: attempt 4 passes (failAttempts was 3), exactly one entry.
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: MAX_RECEIVE_COUNT + 1 });
    expect(await fx.ledger(key)).toHaveLength(1);
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
    const record = await fx.record(key);
    await fx.redrive({
      v: 1,
      route: 'standard-webhooks',
      key,
      fingerprint: record?.fingerprint,
      receivedAt: record?.receivedAt,
      body: record?.body,
      bodyEncoding: 'utf8',
      headers: {},
    });
    const round = await fx.poll();
    expect(round).toMatchObject({ received: 1, deleted: 1 });
    expect(await fx.ledger(key)).toHaveLength(1);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('leaves two ledger entries and a COMPLETED record after crashAfterEffect: the double effect layer 3 repairs', async () => {
    // Prepare
    const fx = await executorFixture();
    const key = await fx.deliver({ amount: 77, simulate: { crashAfterEffect: true } });
    // Act: the first worker posts and dies; its message comes back, but the lease is live.
    const first = await fx.poll();
    await new Promise((r) => setTimeout(r, 1_100));
    const whileLeased = await fx.poll();
    // The lease runs out (the executor's clock moves past it), and the next delivery claims.
    fx.clockOffsetMs = 20_000;
    await fx.drain();
    // Assess
    expect(first).toMatchObject({ received: 1, handedBack: 1 });
    expect(whileLeased).toMatchObject({ received: 1, handedBack: 1 });
    const ledger = await fx.ledger(key);
    expect(ledger.map((e) => e.status)).toEqual(['posted', 'posted']);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
  });
});
