/**
 * The pay route's rate limit, kept where the downstream feels it: no n + 1 starts of its action
 * within one unit of its limit of n per unit. The gate's slots are a step apart and each run
 * starts by its own clock at its slot, at most the tolerance after it (ports/rate-gate.ts): by
 * the starting workers' clocks, n + 1 starts span at least the unit, exactly; in true time, at
 * least the unit less twice the clock bound. And no run of its action without an admission.
 */
import type { ResolvedRateLimit } from '../../../lambdas/config/resolve-config.ts';
export function checkRateLimit(
  limit: ResolvedRateLimit | undefined,
  admissions: number,
  starts: readonly { readonly trueMs: number; readonly ownMs: number }[],
  skewBoundMs: number,
  violations: string[],
): void {
  if (limit === undefined) {
    violations.push('the pay route was drawn a rate limit, but its configuration has none');
    return;
  }
  const unitMs = limit.perSeconds * 1000;
  const spans = (instants: readonly number[], least: number, clock: string): void => {
    const sorted = [...instants].sort((x, y) => x - y);
    for (let i = limit.count; i < sorted.length; i++) {
      const span = (sorted[i] as number) - (sorted[i - limit.count] as number);
      if (span < least) {
        violations.push(`pay: ${limit.count + 1} runs started within ${span} ms ${clock} under its limit of ${limit.text} (at least ${least} ms)`);
        return;
      }
    }
  };
  spans(
    starts.map((s) => s.ownMs),
    unitMs,
    "by their workers' clocks",
  );
  spans(
    starts.map((s) => s.trueMs),
    unitMs - 2 * skewBoundMs,
    'in true time, with the clock bound',
  );
  if (starts.length > admissions) violations.push(`pay: ${starts.length} runs of its action, but only ${admissions} admitted by its rate gate`);
}
