import { describe, expect, inject, it } from 'vitest';
import { benchMetrics } from '../../bench/receivers/retryproof.ts';
import { createMetrics, QuietMetrics } from '../../lambdas/observability/powertools.ts';
import { payloadOf, signedEvent } from '../../bench/deliveries.ts';
import type { ReceiverName } from '../../bench/receivers/receiver.ts';
import { createBenchStack } from '../../bench/stack.ts';
import type { BenchReceiver, BenchStack } from '../../bench/stack.ts';
import { SENDER_TIMEOUT_MS, runKeyReuse, runLoad, runRetries, runStorm } from '../../bench/workloads.ts';

async function stackOnLocalServices(): Promise<BenchStack> {
  return createBenchStack({ dynamo: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') });
}

function receiver(stack: BenchStack, name: ReceiverName): BenchReceiver {
  const found = stack.receivers.find((r) => r.name === name);
  if (found === undefined) throw new Error(`no receiver ${name}`);
  return found;
}

/**
 * DynamoDB requests per operation for `keys` new deliveries, then for one duplicate of each,
 * a sender's retry after it lost our answer: by then a worker has taken the work (`taken`).
 */
async function countsFor(
  r: BenchReceiver,
  keys: readonly string[],
  taken?: () => Promise<unknown>,
): Promise<{ fresh: Record<string, number>; duplicate: Record<string, number> }> {
  const bodies = keys.map((k) => payloadOf(k, 512));
  r.requests.reset();
  for (const [i, k] of keys.entries()) expect((await r.invoke(signedEvent(k, bodies[i] ?? ''))).status).toBe(202);
  const fresh = Object.fromEntries(r.requests.byOperation);
  await taken?.();
  // The duplicates are a sender's retries after its request timeout (bench/workloads.ts).
  r.senderWaits?.(SENDER_TIMEOUT_MS);
  r.requests.reset();
  for (const [i, k] of keys.entries()) expect((await r.invoke(signedEvent(k, bodies[i] ?? ''))).status).toBeLessThan(300);
  return { fresh, duplicate: Object.fromEntries(r.requests.byOperation) };
}

describe('the benchmark harness', () => {
  it('counts each receiver\'s DynamoDB requests on the wire, as its design implies', async () => {
    // Prepare
    const stack = await stackOnLocalServices();
    try {
      const keys = ['msg_count_1', 'msg_count_2', 'msg_count_3'];
      // Act
      const retryproof = await countsFor(receiver(stack, 'retryproof'), keys, () => stack.executor.drain(1, 10_000));
      const powertools = await countsFor(receiver(stack, 'powertools'), keys);
      const naive = await countsFor(receiver(stack, 'naive'), keys);
      // Assess: one conditional update per delivery: it creates a new key's record, and counts a duplicate's hit as it returns the record
      // (protocol v4: the worker's lease starts the breaker's count, so the ingest writes nothing more).
      expect(retryproof).toEqual({ fresh: { UpdateItemCommand: 3 }, duplicate: { UpdateItemCommand: 3 } });
      // Powertools: put in progress, update to completed; a duplicate only fails the put, which returns the record.
      expect(powertools).toEqual({ fresh: { PutItemCommand: 3, UpdateItemCommand: 3 }, duplicate: { PutItemCommand: 3 } });
      // Naive: read, then an unconditional write; a duplicate is only read.
      expect(naive).toEqual({ fresh: { GetItemCommand: 3, PutItemCommand: 3 }, duplicate: { GetItemCommand: 3 } });
      for (const r of stack.receivers) expect([...r.effects.perKey.values()]).toEqual([1, 1, 1]);
    } finally {
      stack.destroy();
    }
  });

  it('counts executions per key in a storm: the naive receiver runs the effect twice, retryproof exactly once', async () => {
    // Prepare: copies leave at the same instant, so every naive copy reads "absent" before any writes.
    const stack = await stackOnLocalServices();
    const storm = { keys: 4, copies: 10, keyConcurrency: 4, jitterMs: 0, ladderMs: [10], effectMs: 80, bodyBytes: 512 };
    try {
      // Act
      const naive = await runStorm(receiver(stack, 'naive'), storm);
      const retryproof = await runStorm(receiver(stack, 'retryproof'), storm, stack.executor);
      // Assess
      expect(naive.invocations).toBe(40);
      expect(naive.decided.keysMoreThanOnce).toBeGreaterThan(0);
      expect(naive.decided.total).toBeGreaterThan(4);
      expect(retryproof.statuses).toEqual({ 202: 40 });
      expect(retryproof.decided).toEqual({ total: 4, keysMoreThanOnce: 0, extra: 0, maxPerKey: 1 });
      expect(retryproof.executed).toMatchObject({ total: 4, keysMoreThanOnce: 0, extra: 0, maxPerKey: 1, messages: 4 });
      // Each delivery: one claim (40), which counts a duplicate's hit too; each copy claimed after
      // a worker's lease started the count but within the answer margin, its excuse (at most 9 a
      // key); the breaker's mark at the threshold's repeat, and at most one retry of it; and each
      // copy that finds the work not yet taken by a worker keeps the payload (at most 9 a key).
      expect(retryproof.byOperation.UpdateItemCommand).toBeGreaterThanOrEqual(40);
      expect(retryproof.byOperation.UpdateItemCommand).toBeLessThanOrEqual(40 + 36 + 4 + 4 + 36);
      expect(Object.keys(retryproof.byOperation).sort()).toEqual(['UpdateItemCommand']);
    } finally {
      stack.destroy();
    }
  });

  it('shows what each receiver does when a key is reused for another body and the genuine delivery is retried', async () => {
    // Prepare
    const stack = await stackOnLocalServices();
    try {
      // Act
      const retryproof = await runKeyReuse(receiver(stack, 'retryproof'), 256);
      const powertools = await runKeyReuse(receiver(stack, 'powertools'), 256);
      // Assess: retryproof refuses the other body with 422 and keeps the key.
      expect(retryproof).toMatchObject({ statuses: [202, 422, 202], executions: 1 });
      // Powertools refuses it too, but its onError deletes the record, so the retry runs the effect again.
      expect(powertools).toMatchObject({ statuses: [202, 500, 202], errors: ['IdempotencyValidationError'], executions: 2 });
      expect(powertools.byOperation.DeleteItemCommand).toBe(1);
    } finally {
      stack.destroy();
    }
  });

  it("times the handler calls' own CPU only when deliveries go one at a time, since concurrent calls overlap", async () => {
    // Prepare
    const stack = await stackOnLocalServices();
    try {
      const powertools = receiver(stack, 'powertools');
      // Act
      const sequential = await runLoad(powertools, { deliveries: 3, concurrency: 1, bodyBytes: 256 });
      const concurrent = await runLoad(powertools, { deliveries: 3, concurrency: 3, bodyBytes: 256 });
      // Assess
      expect(sequential.handlerCpuMicros).toBeGreaterThan(0);
      expect(concurrent.handlerCpuMicros).toBeUndefined();
    } finally {
      stack.destroy();
    }
  });

  it('measures retries after a lost answer alone: one request each, nothing run again, and each pipeline\'s write units per phase', async () => {
    // Prepare
    const stack = await stackOnLocalServices();
    const meter = stack.meterRetryproofWrites();
    try {
      // Act
      const retryproof = await runRetries(receiver(stack, 'retryproof'), {
        deliveries: 4,
        bodyBytes: 2048,
        settle: () => stack.executor.drain(1, 10_000),
        phase: (name) => {
          meter.phase(name);
        },
      });
      meter.stop();
      const powertoolsMeter = stack.meterPowertoolsWrites();
      const powertools = await runRetries(receiver(stack, 'powertools'), {
        deliveries: 4,
        bodyBytes: 2048,
        phase: (name) => {
          powertoolsMeter.phase(name);
        },
      });
      powertoolsMeter.stop();
      // Assess: only the retries are counted, each one request that finds the key; none queues or runs anything again.
      expect(retryproof).toMatchObject({ deliveries: 4, duplicateDeliveries: 4, newDeliveries: 0, statuses: { 202: 4 }, executions: 0 });
      expect(retryproof.byOperation).toEqual({ UpdateItemCommand: 4 });
      expect(retryproof.latenciesMs).toHaveLength(4);
      expect(retryproof.requestMs).toBeGreaterThan(0);
      expect(powertools).toMatchObject({ statuses: { 202: 4 }, executions: 0, byOperation: { PutItemCommand: 4 } });
      // The executor took every first delivery's work before the retries: claim, lease, completion.
      expect(stack.executor.effects.total()).toBe(4);
      // Write units, index copies included: 5 over a new delivery's life, 1 per duplicate.
      expect(meter.writeUnits('first')).toBe(4 * 5);
      expect(meter.writeUnits('retry')).toBe(4 * 1);
      // Powertools' ingest: its in-progress record and the completion; a duplicate's put is refused (DynamoDB Local reports no units for it).
      expect(powertoolsMeter.writeUnits('first')).toBe(4 * 2);
      expect(powertoolsMeter.writeUnits('retry')).toBe(0);
      // The retries go one at a time, so each handler call's own CPU is timed.
      expect(retryproof.handlerCpuMicros).toBeGreaterThan(0);
      expect(powertools.handlerCpuMicros).toBeGreaterThan(0);
    } finally {
      stack.destroy();
    }
  });
});

describe("the benchmark's retryproof", () => {
  it('counts with the Metrics class the functions deploy, so a delivery builds one EMF document as in Lambda, not one per status metric', () => {
    // A plain Metrics would take singleMetric() for Answers and RetryCause: a Metrics instance each, CPU the deployed ingest never spends.
    expect(benchMetrics('bench')).toBeInstanceOf(QuietMetrics);
    expect(createMetrics('bench').constructor).toBe(benchMetrics('bench').constructor);
  });
});
