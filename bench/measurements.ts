/** What one benchmark run measured, in the shape the report reads. */
import type { BundleFigure } from './bundles.ts';
import type { ExecutorBenchSettings } from './executor-bench.ts';
import type { ExecutorMeasurements } from './executor-figures.ts';
import type { ReceiverName } from './receivers/receiver.ts';
import { percentile } from './stats.ts';
import type { KeyReuseResult, LoadResult, StormResult } from './workloads.ts';

export const WORKLOADS = {
  a: 'unique deliveries, sequential',
  b: 'unique deliveries, concurrency 16',
  c: '30% duplicates, concurrency 16',
  e: "retries after a lost answer, once the work is done, sequential",
} as const;
export type LoadWorkload = keyof typeof WORKLOADS;

/** A workload's rounds for one receiver, merged. */
export interface MergedLoad extends LoadResult {
  readonly rounds: number;
  /** Node CPU (user + system) of this process over the rounds, harness included. */
  readonly cpuMicros: number;
  /** Each round's p50 answer latency, in round order: the spread of a ratio between receivers. */
  readonly roundP50s: readonly number[];
}

export interface RunSettings {
  readonly quick: boolean;
  readonly rounds: number;
  readonly warmup: number;
  readonly deliveries: Readonly<Record<LoadWorkload, number>>;
  readonly concurrency: Readonly<Record<LoadWorkload, number>>;
  readonly duplicateShare: number;
  readonly bodyBytes: number;
  /** Workload e's body: the write-unit goals are set at 2 KB. */
  readonly retryBodyBytes: number;
  readonly storm: {
    readonly keys: number;
    readonly copies: number;
    readonly keyConcurrency: number;
    readonly jitterMs: number;
    readonly ladderMs: readonly number[];
    readonly effectMs: number;
  };
  readonly coldInitRuns: number;
  /** The executor against the Powertools SQS consumer, each in a process of its own. */
  readonly executors: ExecutorBenchSettings;
}

/**
 * The executor that drained a receiver's queue in workload c, in a process of its own, its figures
 * apart from the ingest's: retryproof's executor for retryproof, the Powertools SQS consumer for the peers.
 */
export interface WorkloadCExecutor {
  /** Messages it received over the receiver's rounds of c. */
  readonly received: number;
  /** Actions it ran (c's new deliveries that it took while c ran). */
  readonly executed: number;
  /** Its own process's user + system CPU over c's rounds. */
  readonly cpuMicros: number;
  readonly requests: number;
  readonly byOperation: Record<string, number>;
}

export interface Measurements {
  readonly settings: RunSettings;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly loads: Readonly<Record<LoadWorkload, Readonly<Record<ReceiverName, MergedLoad>>>>;
  readonly storm: Readonly<Record<ReceiverName, StormResult>>;
  /** retryproof's circuit-breaker notices during the storm. */
  readonly stormNotices: number;
  /** A key reused for another body, then the genuine retry. */
  readonly keyReuse: Readonly<Record<ReceiverName, KeyReuseResult>>;
  readonly bundles: readonly BundleFigure[];
  /**
   * retryproof's write units on DynamoDB Local in workload e, index copies included: a new
   * delivery's whole life (claim, lease, completion) and a duplicate once the work is done.
   */
  readonly writeUnits: { readonly newDeliveryLife: number; readonly duplicate: number; readonly deliveries: number } | undefined;
  /**
   * The Powertools pipeline's write units over a new delivery's life, metered the same way in the
   * same rounds of e: its ingest's in-progress record and completion, then the SQS consumer's.
   */
  readonly powertoolsWriteUnits: { readonly newDeliveryLife: number; readonly deliveries: number } | undefined;
  readonly executors: ExecutorMeasurements;
  readonly workloadCExecutor: Readonly<Record<ReceiverName, WorkloadCExecutor>>;
}

/** Merges rounds of one workload for one receiver. */
export function mergeLoads(results: readonly LoadResult[], cpuMicros: number): MergedLoad {
  const first = results[0];
  if (first === undefined) throw new Error('no rounds to merge');
  const sum = (pick: (r: LoadResult) => number): number => results.reduce((s, r) => s + pick(r), 0);
  const merge = (pick: (r: LoadResult) => Record<string, number>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(pick(r))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  return {
    receiver: first.receiver,
    rounds: results.length,
    deliveries: sum((r) => r.deliveries),
    newDeliveries: sum((r) => r.newDeliveries),
    duplicateDeliveries: sum((r) => r.duplicateDeliveries),
    wallMs: sum((r) => r.wallMs),
    latenciesMs: results.flatMap((r) => r.latenciesMs),
    statuses: merge((r) => r.statuses),
    errors: merge((r) => r.errors),
    requests: sum((r) => r.requests),
    requestMs: sum((r) => r.requestMs),
    byOperation: merge((r) => r.byOperation),
    executions: sum((r) => r.executions),
    cpuMicros,
    handlerCpuMicros: results.every((r) => r.handlerCpuMicros !== undefined) ? sum((r) => r.handlerCpuMicros ?? 0) : undefined,
    roundP50s: results.map((r) => percentile(r.latenciesMs, 50)),
  };
}
