/**
 * Prints the ten slowest test files at the end of `npm test` (issue 45): what a faster CI has to
 * cut first. The duration is each file's own (its tests and hooks, vitest's `diagnostic().duration`),
 * beside the default reporter, which still prints everything else.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many files the list names. */
export const SLOWEST_LISTED = 10;

export class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const timed = testModules.map((m) => ({ file: m.relativeModuleId, seconds: m.diagnostic().duration / 1000 }));
    const slowest = timed.sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST_LISTED);
    if (slowest.length === 0) return;
    const lines = slowest.map((t, i) => `${String(i + 1).padStart(2)}. ${t.seconds.toFixed(1).padStart(6)} s  ${t.file}`);
    process.stdout.write(`\nthe ${slowest.length} slowest test files:\n${lines.join('\n')}\n`);
  }
}
