/**
 * A benchmark goal as the report prints it, and the number formats every goal and table of
 * BENCHMARKS.md uses: the ingest's goals (goals.ts) and the executor's (executor-figures.ts)
 * are rows of one table.
 */
export interface Goal {
  readonly figure: string;
  readonly goal: string;
  readonly retryproof: string;
  readonly powertools: string;
  /** retryproof / Powertools. */
  readonly ratio: string;
  /** How far the figure moved within the run, or why it cannot move. */
  readonly spread: string;
  readonly met: boolean;
  /** For a missed goal: why, and what it would take. */
  readonly missed?: string;
}

/** One decimal, or '-' for a figure the run could not give. */
export const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
/** Two decimals, or '-'. */
export const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
/** Three decimals, or '-'. */
export const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : '-');
/** A ratio, `1.23x`, or '-'. */
export const x = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
