/**
 * The budget is spent by leases alone (acquireLease adds 1 to attempts and runs; a redrive
 * resets attempts): waiting for a rate limit, a pause or a live lease never spends it.
 */
import type { KeyFacts } from './key-facts.ts';

export function checkBudgetSpentByLeases({ k, record }: KeyFacts, violations: string[]): void {
  if (record !== undefined && record.attempts > record.runs) {
    violations.push(`${k.key}: ${record.attempts} attempts spent in its budget but only ${record.runs} leases ever taken (waiting counted as an attempt)`);
  }
}
