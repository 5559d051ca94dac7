/**
 * A key's work messages are bounded: each deferral for a rate limit sends one delayed wake-up in
 * place of the message it acknowledges, and every resume, redrive and reconciler run may send one.
 */
import type { KeyState } from '../key-state.ts';
import type { RunStats } from '../run-stats.ts';

export function checkWorkSendsBounded(k: KeyState, stats: RunStats, violations: string[]): void {
  const bound = 2 + k.duplicateWindows.size + stats.reconcilerRuns + stats.resumes + stats.redrives + k.deferrals;
  if (k.sends > bound) violations.push(`${k.key}: ${k.sends} work messages sent, above the bound ${bound}`);
}
