import { describe, expect, it } from 'vitest';
import { mergeExecutorRounds } from '../../bench/executor-figures.ts';
import type { ExecutorMeasurements, ExecutorRound } from '../../bench/executor-figures.ts';
import { benchJsonOf, benchJsonText, JSON_PEERS } from '../../bench/figures-json.ts';
import type { BenchJson, JsonMeasurements, JsonPeer } from '../../bench/figures-json.ts';
import { UsageError } from '../../bench/flags.ts';
import { mergeLoads } from '../../bench/measurements.ts';
import type { MergedLoad } from '../../bench/measurements.ts';
import { benchFlagsOf } from '../../bench/run.ts';
import type { LoadResult } from '../../bench/workloads.ts';
import { executorRound } from './executor-round.ts';

/** The keys tools read, nested ones as `outer.inner`: the contract of `npm run bench -- --json`. */
const FIGURE_KEYS = [
  'ingestRequestsPerNewDelivery',
  'ingestRequestsPerDuplicate',
  'writeUnitsPerDeliveryLife',
  'ingestCpuMsPerDelivery',
  'ingestCpuMsPerDuplicate',
  'c16P50Ms',
  'executorRequestsPerMessage.rest',
  'executorRequestsPerMessage.backlog',
  'executorRequestsPerMessage.storm',
  'executorCpuMsPerMessage',
  'acceptToEffectP50Ms.rest',
  'acceptToEffectP50Ms.storm',
];

/** Every leaf of an object, by its dotted path. */
function leaves(value: unknown, path = ''): [string, unknown][] {
  if (value === null || typeof value !== 'object') return [[path, value]];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, path === '' ? k : `${path}.${k}`));
}

/** One round of a workload, as runLoad and runRetries report it. */
function round(receiver: JsonPeer, over: Partial<LoadResult>): LoadResult {
  return {
    receiver,
    deliveries: 10,
    newDeliveries: 10,
    duplicateDeliveries: 0,
    wallMs: 100,
    latenciesMs: [4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    statuses: { 202: 10 },
    errors: {},
    requests: 20,
    requestMs: 10,
    byOperation: { UpdateItemCommand: 20 },
    executions: 10,
    ...over,
  };
}


/** Two rounds of each workload per peer, merged by the run's own code; a Powertools pipeline a little cheaper. */
function measurements(over: Partial<JsonMeasurements> = {}): JsonMeasurements {
  const merged = (make: (peer: JsonPeer) => Partial<LoadResult>): Record<JsonPeer, MergedLoad> => ({
    retryproof: mergeLoads([round('retryproof', make('retryproof')), round('retryproof', make('retryproof'))], 50_000),
    powertools: mergeLoads([round('powertools', make('powertools')), round('powertools', make('powertools'))], 40_000),
  });
  const scenario = (rp: Partial<ExecutorRound>, pt: Partial<ExecutorRound>): ExecutorMeasurements['backlog'] => ({
    retryproof: mergeExecutorRounds([executorRound(rp), executorRound(rp)]),
    powertools: mergeExecutorRounds([executorRound(pt), executorRound(pt)]),
  });
  const backlog = scenario({ requests: 21, cpuMicros: 25_000 }, {});
  return {
    loads: {
      // One at a time: the handler calls' CPU is timed.
      a: merged((p) => ({ handlerCpuMicros: p === 'retryproof' ? 12_000 : 10_000 })),
      b: merged((p) => ({ requests: p === 'retryproof' ? 10 : 20, latenciesMs: p === 'retryproof' ? [30, 40, 50] : [20, 25, 30] })),
      e: merged((p) => ({ newDeliveries: 0, duplicateDeliveries: 10, requests: 10, handlerCpuMicros: p === 'retryproof' ? 3_000 : 2_000 })),
    },
    writeUnits: { newDeliveryLife: 6, duplicate: 1, deliveries: 20 },
    powertoolsWriteUnits: { newDeliveryLife: 4, deliveries: 20 },
    executors: {
      backlog,
      rest: scenario({ latenciesMs: [9, 10, 11] }, { latenciesMs: [4, 5, 6] }),
      storm: scenario({ latenciesMs: [50, 60, 70] }, { latenciesMs: [10, 20, 30] }),
      resent: backlog,
    },
    ...over,
  };
}

const at = (json: BenchJson, part: keyof BenchJson, path: string): unknown => leaves(json[part]).find(([p]) => p === path)?.[1];

describe('the JSON of npm run bench -- --json', () => {
  it('holds retryproof, Powertools and their ratios, each with the same keys, nested ones included', () => {
    // Act
    const json = benchJsonOf(measurements());
    // Assess
    expect(Object.keys(json)).toEqual(['retryproof', 'powertools', 'ratios']);
    for (const part of ['retryproof', 'powertools', 'ratios'] as const) expect(leaves(json[part]).map(([path]) => path)).toEqual(FIGURE_KEYS);
  });

  it('gives each figure as a finite number or null, and each ratio as retryproof over Powertools, key by key', () => {
    // Act
    const json = benchJsonOf(measurements());
    // Assess
    for (const path of FIGURE_KEYS) {
      const [rp, pt, ratio] = (['retryproof', 'powertools', 'ratios'] as const).map((part) => at(json, part, path));
      for (const v of [rp, pt, ratio]) expect(v === null || (typeof v === 'number' && Number.isFinite(v)), `${path}: ${String(v)}`).toBe(true);
      if (typeof rp === 'number' && typeof pt === 'number') expect(ratio).toBeCloseTo(rp / pt, 9);
    }
  });

  it('reads each figure from the workload the report reads it from', () => {
    // Prepare
    const m = measurements();
    // Act
    const json = benchJsonOf(m);
    // Assess: b's requests per new delivery and p50, e's requests per duplicate, a's handler CPU (1.2 ms over 10 deliveries twice), e's (0.3 ms).
    expect(json.retryproof).toMatchObject({ ingestRequestsPerNewDelivery: 1, ingestRequestsPerDuplicate: 1, ingestCpuMsPerDelivery: 1.2, ingestCpuMsPerDuplicate: 0.3, c16P50Ms: 40 });
    expect(json.ratios.ingestCpuMsPerDuplicate).toBeCloseTo(1.5, 9);
    expect(json.powertools).toMatchObject({ ingestRequestsPerNewDelivery: 2, ingestCpuMsPerDelivery: 1, c16P50Ms: 25, writeUnitsPerDeliveryLife: 4 });
    // The executor's figures: requests per message in three scenarios, CPU in the backlog, accept-to-effect p50 at rest and in the storm.
    expect(json.retryproof.executorRequestsPerMessage).toEqual({
      rest: m.executors.rest.retryproof.requestsPerExecuted,
      backlog: 2.1,
      storm: m.executors.storm.retryproof.requestsPerExecuted,
    });
    expect(json.retryproof.executorCpuMsPerMessage).toBe(m.executors.backlog.retryproof.cpuMsPerExecuted);
    expect(json.ratios.acceptToEffectP50Ms).toEqual({ rest: 2, storm: 3 });
  });

  it('gives null, and a null ratio, where the run has no figure or Powertools has none to divide by', () => {
    // Prepare: no Powertools write units, a's calls overlapped (no handler CPU), and a Powertools p50 of 0.
    const base = measurements();
    const overlapped = mergeLoads([round('powertools', {})], 1);
    const m = measurements({
      powertoolsWriteUnits: undefined,
      loads: {
        ...base.loads,
        a: { ...base.loads.a, powertools: overlapped },
        b: { ...base.loads.b, powertools: { ...base.loads.b.powertools, latenciesMs: [0, 0, 0] } },
      },
    });
    // Act
    const json = benchJsonOf(m);
    // Assess
    expect(json.powertools.writeUnitsPerDeliveryLife).toBeNull();
    expect(json.ratios.writeUnitsPerDeliveryLife).toBeNull();
    expect(json.powertools.ingestCpuMsPerDelivery).toBeNull();
    expect(json.ratios.ingestCpuMsPerDelivery).toBeNull();
    expect(json.powertools.c16P50Ms).toBe(0);
    expect(json.ratios.c16P50Ms).toBeNull();
    expect(json.retryproof.writeUnitsPerDeliveryLife).toBe(6);
  });

  it('prints one JSON object, six significant digits a number, that parses back to the same keys', () => {
    // Prepare
    const json = benchJsonOf(measurements());
    // Act
    const text = benchJsonText(json);
    // Assess
    const parsed = JSON.parse(text) as BenchJson;
    expect(text.endsWith('}\n')).toBe(true);
    expect(leaves(parsed).map(([path]) => path)).toEqual(leaves(json).map(([path]) => path));
    expect(parsed.ratios.ingestCpuMsPerDelivery).toBe(1.2);
    for (const peer of JSON_PEERS) expect(parsed[peer].executorCpuMsPerMessage).toBeCloseTo(json[peer].executorCpuMsPerMessage ?? Number.NaN, 5);
  });
});

describe('the bench flags', () => {
  it('takes --quick and --json, in any order, and neither by default', () => {
    expect(benchFlagsOf([])).toEqual({ quick: false, json: false });
    expect(benchFlagsOf(['--json', '--quick'])).toEqual({ quick: true, json: true });
    expect(benchFlagsOf(['--quick'])).toEqual({ quick: true, json: false });
  });

  it('refuses an unknown flag, a value given to a switch and an argument', () => {
    expect(() => benchFlagsOf(['--jsn'])).toThrow(new UsageError('unknown flag --jsn'));
    expect(() => benchFlagsOf(['--json=yes'])).toThrow(new UsageError('--json takes no value'));
    expect(() => benchFlagsOf(['quick'])).toThrow(new UsageError('unexpected argument "quick"'));
  });
});
