import { describe, expect, inject, it } from 'vitest';
import { runExecutorBench } from '../../bench/executor-bench.ts';
import { createBenchStack } from '../../bench/stack.ts';

describe('the executor benchmark', () => {
  it('runs each executor in its own process and counts its requests as its design implies, duplicates included', async () => {
    // Prepare
    const endpoints = { dynamo: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') };
    const stack = await createBenchStack(endpoints);
    const receiver = stack.receivers.find((r) => r.name === 'retryproof');
    if (receiver === undefined) throw new Error('no retryproof receiver');
    try {
      // Act
      const m = await runExecutorBench(
        endpoints,
        { receiver, tableName: stack.retryproofTable },
        {
          rounds: 1,
          backlog: 5,
          rest: 2,
          // Slow enough, and any answered key retried at once, that duplicates come however loaded the machine:
          // the first answer has a whole second to arrive before the storm ends.
          storm: { deliveries: 20, perSecond: 20, duplicateShare: 0.3, retryAfterMs: 0 },
          pollers: 1,
          idleMs: 5,
          bodyBytes: 256,
        },
        () => undefined,
      );
      // Assess: a backlog message costs the consumer its in-progress put and its completion; retryproof
      // its lease and its completion, and a read of the route's state at most once per ROUTE_STATE_MAX_AGE_MS.
      expect(m.backlog.powertools.byOperation).toEqual({ PutItemCommand: 5, UpdateItemCommand: 5 });
      expect(m.backlog.retryproof.byOperation.UpdateItemCommand).toBe(10);
      expect(m.backlog.retryproof.byOperation.GetItemCommand ?? 0).toBeLessThanOrEqual(5);
      // At rest every delivery is a batch of its own: no batch reads the route's state more than once.
      expect(m.rest.retryproof.byOperation.UpdateItemCommand).toBe(4);
      expect(m.rest.retryproof.byOperation.GetItemCommand ?? 0).toBeLessThanOrEqual(2);
      expect(m.rest.powertools.executed).toBe(2);
      expect(m.rest.retryproof.p50).toBeGreaterThan(0);
      // The storm: the same arrivals for both; each front answers the duplicates from its own record, so each
      // executor receives one message per key. Nothing runs twice.
      const rp = m.storm.retryproof;
      const pt = m.storm.powertools;
      expect([rp.deliveries, pt.deliveries]).toEqual([20, 20]);
      expect(pt.executed).toBeLessThan(20);
      expect(rp.executed).toBeLessThan(20);
      expect(pt.received).toBe(pt.executed);
      expect(rp.received).toBe(rp.executed);
      expect(pt.byOperation).toEqual({ PutItemCommand: pt.executed, UpdateItemCommand: pt.executed });
      expect(pt.frontRequestsPerExecuted).toBeGreaterThan(0);
      expect(rp.keysMoreThanOnce + pt.keysMoreThanOnce).toBe(0);
      // Duplicate messages: the same messages on both queues, so both receive all 20; each duplicate costs either
      // one conditional write refused because the work is done, and nothing runs twice.
      const rpResent = m.resent.retryproof;
      const ptResent = m.resent.powertools;
      expect([rpResent.received, ptResent.received]).toEqual([20, 20]);
      expect(rpResent.executed).toBeLessThan(20);
      const rpDuplicates = 20 - rpResent.executed;
      expect(rpResent.byOperation.UpdateItemCommand).toBe(2 * rpResent.executed + rpDuplicates);
      expect(rpResent.refusedWritesPerExecuted * rpResent.executed).toBeCloseTo(rpDuplicates);
      expect(ptResent.byOperation.PutItemCommand).toBe(20);
      expect(rpResent.keysMoreThanOnce + ptResent.keysMoreThanOnce).toBe(0);
      expect(rp.cpuMsPerExecuted).toBeGreaterThan(0);
      expect(pt.cpuMsPerExecuted).toBeGreaterThan(0);
    } finally {
      stack.destroy();
    }
  });
});
