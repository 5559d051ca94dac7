/**
 * Runs many seeds of the protocol simulation, and shrinks a failing schedule: operations
 * are deleted, in halves, then quarters, down to single ones, as long as the run still
 * breaks an invariant. The shrunk schedule is what `npm run simulate -- --seed S` shows.
 *
 * Each run has tables of its own on DynamoDB Local and starts at the same instant, so a seed
 * replays exactly, and several runs go at once (`concurrency`): a run spends most of its real
 * time waiting for DynamoDB Local, and two JVM threads serve two runs' requests side by side.
 */
import { MAX_STATS, OPS, emptyStats, runSchedule, scheduleOf } from './protocol-simulation.ts';
import type { Op, OpName, RunOptions, RunResult, RunStats, SimulationEnv } from './protocol-simulation.ts';

/** Operations per drawn schedule. */
export const SCHEDULE_LENGTH = 160;

export interface Failure {
  readonly seed: number;
  readonly violations: readonly string[];
  /** The smallest schedule found that still fails, and its violations. */
  readonly shrunk: readonly Op[];
  readonly shrunkViolations: readonly string[];
  readonly originalLength: number;
}

export interface SimulationSummary {
  readonly runs: number;
  readonly totals: RunStats;
  readonly failures: readonly Failure[];
  readonly durationMs: number;
}

/** Adds a run's stats to the totals: counts are summed, maxima (skew, horizon) kept. */
export function addStats(total: RunStats, run: RunStats): void {
  for (const name of Object.keys(total) as (keyof RunStats)[]) {
    total[name] = MAX_STATS.has(name) ? Math.max(total[name], run[name]) : total[name] + run[name];
  }
}

/** Deletes chunks of a failing schedule while it keeps failing. Bounded by `budgetMs`. */
export async function shrink(
  env: SimulationEnv,
  seed: number,
  ops: readonly Op[],
  budgetMs: number,
  options: RunOptions = {},
): Promise<{ ops: Op[]; result: RunResult }> {
  let best = [...ops];
  let bestResult = await runSchedule(env, seed, best, options);
  const until = Date.now() + budgetMs;
  let chunk = Math.max(1, Math.floor(best.length / 2));
  while (chunk >= 1 && Date.now() < until) {
    let removed = false;
    for (let start = 0; start < best.length && Date.now() < until; ) {
      const candidate = [...best.slice(0, start), ...best.slice(start + chunk)];
      const result = await runSchedule(env, seed, candidate, options);
      if (result.violations.length > 0) {
        best = candidate;
        bestResult = result;
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk = Math.floor(chunk / 2);
  }
  return { ops: best, result: bestResult };
}

export interface SimulateOptions extends RunOptions {
  readonly env: SimulationEnv;
  /** Seeds `firstSeed`, `firstSeed + 1`, ... */
  readonly firstSeed: number;
  readonly runs: number;
  readonly length?: number;
  /** Time spent shrinking each failure. @default 60_000 */
  readonly shrinkBudgetMs?: number;
  /** Stop at the first failure. @default true */
  readonly stopAtFirstFailure?: boolean;
  /** Runs at once. @default 3 */
  readonly concurrency?: number;
  readonly onProgress?: (done: number, failures: number) => void;
  /** Called as a seed fails, before the run goes on (its shrink comes at the end). */
  readonly onFailure?: (seed: number, violations: readonly string[]) => void;
}

export async function simulate(options: SimulateOptions): Promise<SimulationSummary> {
  const started = Date.now();
  const totals = emptyStats();
  const failed: { seed: number; ops: Op[]; violations: readonly string[] }[] = [];
  const runOptions: RunOptions = {
    ...(options.skewFactor === undefined ? {} : { skewFactor: options.skewFactor }),
    ...(options.regions === undefined ? {} : { regions: options.regions }),
    ...(options.consistency === undefined ? {} : { consistency: options.consistency }),
    ...(options.noRateLimit === undefined ? {} : { noRateLimit: options.noRateLimit }),
  };
  const stopAtFirst = options.stopAtFirstFailure ?? true;
  let next = 0;
  let runs = 0;
  const worker = async (): Promise<void> => {
    while (next < options.runs && !(stopAtFirst && failed.length > 0)) {
      const seed = options.firstSeed + next++;
      const ops = scheduleOf(seed, options.length ?? SCHEDULE_LENGTH);
      const result = await runSchedule(options.env, seed, ops, runOptions);
      runs++;
      addStats(totals, result.stats);
      if (result.violations.length > 0) {
        failed.push({ seed, ops, violations: result.violations });
        options.onFailure?.(seed, result.violations);
      }
      options.onProgress?.(runs, failed.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 3) }, worker));
  // Shrunk one at a time, lowest seed first: each shrink replays its seed many times.
  failed.sort((a, b) => a.seed - b.seed);
  const failures: Failure[] = [];
  for (const f of stopAtFirst ? failed.slice(0, 1) : failed) {
    const shrunk = await shrink(options.env, f.seed, f.ops, options.shrinkBudgetMs ?? 60_000, runOptions);
    failures.push({ seed: f.seed, violations: f.violations, shrunk: shrunk.ops, shrunkViolations: shrunk.result.violations, originalLength: f.ops.length });
  }
  return { runs, totals, failures, durationMs: Date.now() - started };
}

/** A schedule, one operation a line, as a failure report shows it. */
/**
 * Reads a schedule saved as JSON (`--save-shrunk`): an array of `{ op, a, b }`, every `op` one of
 * OPS and `a`, `b` numbers in [0, 1). Throws an Error naming the first entry that is not.
 */
export function parseSchedule(text: string): Op[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new Error('expected a non-empty JSON array of { "op", "a", "b" }');
  const names = new Set<string>(OPS);
  return parsed.map((entry: unknown, i) => {
    const { op, a, b } = (entry ?? {}) as { op?: unknown; a?: unknown; b?: unknown };
    const unit = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v < 1;
    if (typeof op !== 'string' || !names.has(op)) throw new Error(`operation ${i + 1}: "op" must be one of ${[...names].join(', ')}`);
    if (!unit(a) || !unit(b)) throw new Error(`operation ${i + 1} (${op}): "a" and "b" must be numbers from 0 up to 1`);
    return { op: op as OpName, a, b };
  });
}

export function formatSchedule(ops: readonly Op[]): string {
  return ops.map((o, i) => `  ${String(i + 1).padStart(3)}. ${o.op.padEnd(16)} a=${o.a.toFixed(3)} b=${o.b.toFixed(3)}`).join('\n');
}
