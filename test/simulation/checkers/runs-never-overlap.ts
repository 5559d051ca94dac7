/**
 * No two runs of one key's action overlap: the lease (with its clock margin) keeps them apart.
 * Judged by the order of their calls, not only their instants: a run that calls at the very
 * instant another's first call is made, after it, runs beside it (two calls at one instant
 * touch in time and would pass a check of instants alone).
 */
import type { ActionRun, KeyState } from '../key-state.ts';
import { EPOCH } from '../sim-constants.ts';
export function checkOverlaps(k: KeyState, violations: string[]): void {
  const runs = k.runs.filter(
    (r): r is ActionRun & { firstCallMs: number; lastCallMs: number; firstCallSeq: number; lastCallSeq: number } =>
      r.firstCallMs !== undefined && r.lastCallMs !== undefined && r.firstCallSeq !== undefined && r.lastCallSeq !== undefined,
  );
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length; j++) {
      const a = runs[i] as (typeof runs)[number];
      const b = runs[j] as (typeof runs)[number];
      if (a.firstCallSeq < b.lastCallSeq && b.firstCallSeq < a.lastCallSeq) {
        violations.push(
          `${k.key}: runs ${a.attempt} and ${b.attempt} of its action overlap in time ` +
            `(${a.firstCallMs - EPOCH}..${a.lastCallMs - EPOCH} ms and ${b.firstCallMs - EPOCH}..${b.lastCallMs - EPOCH} ms after the start; ` +
            `by call order, run ${a.attempt} called ${a.firstCallSeq}..${a.lastCallSeq} and run ${b.attempt} ${b.firstCallSeq}..${b.lastCallSeq})`,
        );
      }
    }
  }
}
