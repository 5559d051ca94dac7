import { beforeAll, describe, expect, inject, it } from 'vitest';
import { measureLogBytes } from '../../bench/log-bytes.ts';
import { LOG_FIGURE_FILES, logBytesPerDelivery, readLogFigures } from '../../bench/log-figures.ts';
import type { LineKind, LogBytesMeasurement, MeasuredFunctions } from '../../bench/log-figures.ts';

/** The cost model's traffic: 10 M deliveries a month, 5% duplicates, 5 messages a batch, an hourly reconciler. */
const TRAFFIC = { deliveriesPerMonth: 10_000_000, duplicateShare: 0.05, batchFill: 5, reconcilerRunsPerMonth: 24 * 30.4375 };
const KINDS: readonly LineKind[] = ['powertools', 'emf', 'other'];

describe('the log bytes each function writes, measured from the real handlers under the deployed configuration', () => {
  let measured: LogBytesMeasurement;
  const committed = readLogFigures(LOG_FIGURE_FILES.current);
  const beforeCut = readLogFigures(LOG_FIGURE_FILES.beforeCut);

  beforeAll(async () => {
    // Act: the same measurement as `npx node bench/log-bytes.ts`, on the suite's DynamoDB Local and fauxqs.
    measured = await measureLogBytes({ services: { dynamoEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') } });
  });

  it('matches the figures committed in bench/log-bytes.json, which npm run cost prices (re-run bench/log-bytes.ts --write after a logging change)', () => {
    for (const unit of Object.keys(committed.functions) as (keyof MeasuredFunctions)[]) {
      for (const kind of KINDS) {
        const now = (measured.functions[unit])[kind];
        const then = (committed.functions[unit])[kind];
        // A run's keys, ids and durations differ by a few characters; a changed line differs by more.
        expect(Math.abs(now.bytes - then.bytes), `${unit} ${kind}: measured ${now.bytes} B, committed ${then.bytes} B`).toBeLessThanOrEqual(Math.max(8, then.bytes * 0.03));
        expect(Math.abs(now.lines - then.lines), `${unit} ${kind} lines`).toBeLessThanOrEqual(0.05);
      }
    }
    expect(measured.accessLog).toEqual(committed.accessLog);
    expect(measured.metricStreams).toEqual(committed.metricStreams);
    expect(measured.stack).toEqual(committed.stack);
  });

  it('writes at most half the log bytes per delivery it wrote before the cut, summed over all functions, measured the same way', () => {
    // Assess: both the functions' own lines and everything CloudWatch Logs ingests (with Lambda's lines and the access log).
    const before = logBytesPerDelivery(beforeCut, TRAFFIC);
    const after = logBytesPerDelivery(measured, TRAFFIC);
    expect(after.functionsOwn).toBeLessThanOrEqual(before.functionsOwn / 2);
    expect(after.total).toBeLessThanOrEqual(before.total / 2);
  });

  it('logs one line per delivery per function at INFO, with the route, the key and the outcome, and none of the invocation context; a duplicate only its metric document', () => {
    const f = measured.functions;
    expect(f.ingestNew.powertools.lines).toBe(1);
    expect(f.ingestDuplicate.powertools.lines).toBe(0);
    expect(f.executorMessage.powertools.lines).toBeCloseTo(1, 5);
    expect(f.executorInvocation.powertools.lines).toBeCloseTo(0, 5);
    const ingest = JSON.parse(measured.samples['ingestNew.powertools'] ?? '{}') as Record<string, unknown>;
    const executor = JSON.parse(measured.samples['executor.powertools'] ?? '{}') as Record<string, unknown>;
    expect(ingest).toMatchObject({ level: 'INFO', message: 'delivery accepted', route: 'stripe', status: 202 });
    expect(executor).toMatchObject({ level: 'INFO', message: 'execution', route: 'stripe', attempt: 1, outcome: 'completed' });
    for (const line of [ingest, executor]) {
      expect(typeof line.key).toBe('string');
      expect(Object.keys(line).filter((k) => /^(function_|cold_start|sampling_rate|xray_trace_id|service|timestamp)/.test(k))).toEqual([]);
    }
  });

  it('writes one metric document per delivery from the ingest, its answer by status and a duplicate\'s retry cause included', () => {
    expect(measured.functions.ingestNew.emf.lines).toBe(1);
    expect(measured.functions.ingestDuplicate.emf.lines).toBe(1);
    // A duplicate's facts ride in its document, where Logs Insights finds the key (docs/architecture.md#log-lines).
    const duplicate = JSON.parse(measured.samples['ingestDuplicate.emf'] ?? '{}') as Record<string, unknown>;
    expect(duplicate).toMatchObject({ route: 'stripe', status: '202', previousStatus: '202', duplicate: 'replayed', hits: '2' });
    expect(typeof duplicate.key).toBe('string');
  });

  it('writes no per-invocation metric document for a batch with nothing to count beyond its executions: one per batch, whatever its size', () => {
    // The per-route document with the lease shares, its executions per outcome a directive of it.
    expect(measured.functions.executorInvocation.emf.lines).toBeCloseTo(1, 1);
    expect(measured.functions.executorMessage.emf.lines).toBeCloseTo(0, 1);
    expect(measured.metricStreams.some((s) => s.includes('RecordsReceived'))).toBe(false);
  });
});
