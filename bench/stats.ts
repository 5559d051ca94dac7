/** Small statistics for the benchmark: nearest-rank percentiles and medians. */

/** The p-th percentile (0-100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Adds `n` to `counts[name]`. */
export function tally(counts: Record<string, number>, name: string, n = 1): void {
  counts[name] = (counts[name] ?? 0) + n;
}
