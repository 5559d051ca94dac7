/**
 * What the benchmark's actions record, in this process: the local stack imports the action
 * modules by path into the process that runs the benchmark, so they and bench/isolation.ts
 * share this one module and its list. Each run is recorded by the action itself, the moment it
 * starts: the rate limit's promise is about starts, so they are measured where they happen.
 */

/** One run of an action. */
export interface ActionRun {
  readonly route: string;
  readonly key: string;
  readonly attempt: number;
  /** Epoch ms, as the action began. */
  readonly startedAt: number;
  /** Epoch ms, as it returned; undefined while it runs (or if it was cut off). */
  endedAt?: number;
}

/** The benchmark's settings for its actions, and the runs they recorded. */
export const isolationRecorder = {
  /** How long the slow route's action takes. @default 20 s */
  slowActionMs: 20_000,
  runs: [] as ActionRun[],
};

/** Records a run's start; the returned function records its end. */
export function recordStart(route: string, key: string, attempt: number): () => void {
  const run: ActionRun = { route, key, attempt, startedAt: Date.now() };
  isolationRecorder.runs.push(run);
  return () => {
    run.endedAt = Date.now();
  };
}
