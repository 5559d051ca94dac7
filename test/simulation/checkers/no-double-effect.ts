/**
 * A key's action takes effect once: more effects than runs that lost the record after theirs
 * (or than charges a downstream's contract breach excuses, key-facts.ts) are double effects.
 */
import type { RunStats } from '../run-stats.ts';
import type { KeyFacts } from './key-facts.ts';

export function checkNoDoubleEffect({ k, unbookedCharges }: KeyFacts, stats: RunStats, violations: string[]): void {
  if (k.effects > 1 + Math.max(k.excused, unbookedCharges.length)) {
    stats.doubleEffects++;
    violations.push(`${k.key}: ${k.effects} charges made, but only ${k.excused} runs lost the record after theirs`);
  }
}
