/**
 * Runs many seeds of the protocol simulation, and shrinks a failing schedule: operations
 * are deleted, in halves, then quarters, down to single ones, as long as the run still
 * breaks an invariant. The shrunk schedule is what `npm run simulate -- --seed S` shows.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createEventsTable, createLedgerTable } from '../../local/aws-clients.ts';
import { emptyStats, runSchedule, scheduleOf } from './protocol-simulation.ts';
import type { Op, RunResult, RunStats, SimulationTables } from './protocol-simulation.ts';

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

/** Fresh tables on DynamoDB Local for a batch of runs (each run keeps to its own routes and time span). */
export async function simulationTables(dynamo: DynamoDBClient): Promise<SimulationTables> {
  const suffix = randomUUID().slice(0, 8);
  return {
    dynamo,
    eventsTable: await createEventsTable(dynamo, `sim-events-${suffix}`),
    ledgerTable: await createLedgerTable(dynamo, `sim-ledger-${suffix}`),
  };
}

function addStats(total: RunStats, run: RunStats): void {
  for (const name of Object.keys(total) as (keyof RunStats)[]) total[name] += run[name];
}

/** Deletes chunks of a failing schedule while it keeps failing. Bounded by `budgetMs`. */
export async function shrink(tables: SimulationTables, seed: number, ops: readonly Op[], budgetMs: number): Promise<{ ops: Op[]; result: RunResult }> {
  let best = [...ops];
  let bestResult = await runSchedule(tables, seed, best);
  const until = Date.now() + budgetMs;
  let chunk = Math.max(1, Math.floor(best.length / 2));
  while (chunk >= 1 && Date.now() < until) {
    let removed = false;
    for (let start = 0; start < best.length && Date.now() < until; ) {
      const candidate = [...best.slice(0, start), ...best.slice(start + chunk)];
      const result = await runSchedule(tables, seed, candidate);
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

export interface SimulateOptions {
  readonly tables: SimulationTables;
  /** Seeds `firstSeed`, `firstSeed + 1`, ... */
  readonly firstSeed: number;
  readonly runs: number;
  readonly length?: number;
  /** Time spent shrinking each failure. @default 60_000 */
  readonly shrinkBudgetMs?: number;
  /** Stop at the first failure. @default true */
  readonly stopAtFirstFailure?: boolean;
  readonly onProgress?: (done: number, failures: number) => void;
}

export async function simulate(options: SimulateOptions): Promise<SimulationSummary> {
  const started = Date.now();
  const totals = emptyStats();
  const failures: Failure[] = [];
  let runs = 0;
  for (let i = 0; i < options.runs; i++) {
    const seed = options.firstSeed + i;
    const ops = scheduleOf(seed, options.length ?? SCHEDULE_LENGTH);
    const result = await runSchedule(options.tables, seed, ops);
    runs++;
    addStats(totals, result.stats);
    if (result.violations.length > 0) {
      const shrunk = await shrink(options.tables, seed, ops, options.shrinkBudgetMs ?? 60_000);
      failures.push({
        seed,
        violations: result.violations,
        shrunk: shrunk.ops,
        shrunkViolations: shrunk.result.violations,
        originalLength: ops.length,
      });
    }
    options.onProgress?.(runs, failures.length);
    if (failures.length > 0 && (options.stopAtFirstFailure ?? true)) break;
  }
  return { runs, totals, failures, durationMs: Date.now() - started };
}

/** A schedule, one operation a line, as a failure report shows it. */
export function formatSchedule(ops: readonly Op[]): string {
  return ops.map((o, i) => `  ${String(i + 1).padStart(3)}. ${o.op.padEnd(16)} a=${o.a.toFixed(3)} b=${o.b.toFixed(3)}`).join('\n');
}
