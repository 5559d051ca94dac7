/**
 * "Did you mean ...?": the known word nearest a mistyped flag or command, when it is near
 * enough to be a slip of the fingers rather than another word altogether.
 */

/**
 * The edit distance with adjacent transpositions (optimal string alignment): `--jsno` is
 * one slip from `--json`, not two, because a swapped pair is the commonest typo.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] ?? [];
      const up = d[i - 1] ?? [];
      let best = Math.min((up[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (up[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (d[i - 2]?.[j - 2] ?? 0) + 1);
      row[j] = best;
    }
  }
  return d[a.length]?.[b.length] ?? Math.max(a.length, b.length);
}

/**
 * The candidate nearest `typed`, or undefined when none is near: a prefix of at least three
 * characters (`--win` for `--window`), or within one edit per four characters (at least
 * one, at most two; none for words under three characters).
 */
export function nearest(typed: string, candidates: readonly string[]): string | undefined {
  const bare = (word: string): string => word.replace(/^-+/, '').toLowerCase();
  const t = bare(typed);
  if (t === '') return undefined;
  const prefixed = candidates.filter((c) => t.length >= 3 && bare(c).startsWith(t));
  if (prefixed.length === 1) return prefixed[0];
  // A one- or two-letter word is one edit from too many others for a guess to help.
  const limit = t.length < 3 ? 0 : Math.min(2, Math.max(1, Math.floor(t.length / 4)));
  let best: { word: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(t, bare(candidate));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { word: candidate, distance };
  }
  return best?.word;
}
