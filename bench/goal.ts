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
  /** For a missed goal: this goal's own figures, and why, in a sentence or two. */
  readonly missed?: string;
  /** A reason several missed goals share: the report prints it once, with the first of them. */
  readonly why?: string;
}

/**
 * One short paragraph per missed goal, as markdown list items: its own figures, then the
 * reason it shares with other goals, written out at the first of them and named after that.
 */
export function missedParagraphs(goals: readonly Goal[]): string[] {
  const firstWith = new Map<string, string>();
  return goals
    .filter((g) => !g.met)
    .map((g) => {
      const first = g.why === undefined ? undefined : firstWith.get(g.why);
      if (g.why !== undefined && first === undefined) firstWith.set(g.why, g.figure);
      const shared = g.why === undefined ? '' : first === undefined ? ` ${g.why}` : ` Why: as for ${first}.`;
      return `- **${g.figure}.** ${g.missed ?? ''}${shared}`;
    });
}

/** One decimal, or '-' for a figure the run could not give. */
export const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
/** Two decimals, or '-'. */
export const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
/** Three decimals, or '-'. */
export const f3 = (n: number): string => (Number.isFinite(n) ? n.toFixed(3) : '-');
/** A ratio, `1.23x`, or '-'. */
export const x = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
