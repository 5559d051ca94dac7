/**
 * The order test files start in: the longest first, then vitest's own order. On a clean clone
 * vitest knows no durations and starts the largest files first, so a long file that is small
 * (the simulation's, 1.7 kB and about 30 s) started last and ran alone on one of the two
 * workers. The list is from a CI run (seconds on two shared cores, `npm test`'s own report);
 * a file missing from it only loses its place, never its run.
 */
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'test/docs/readme-commands.test.ts', // 133 s, mostly waiting on the walk-through's timings; since issue 45 the local stack's end-to-end checks too
  'test/examples/orders-app.e2e.test.ts', // 73 s
  'test/local/stack-stop.e2e.test.ts', // 46 s
  'test/package/npm-pack.test.ts', // 40 s
  'test/simulation/protocol.simulation.test.ts', // 29 s
  'test/cli/local-stack-cli.e2e.test.ts', // 28 s
  'test/reconciler/reconciler-window.test.ts', // 26 s
  'test/reconciler/reconciler-effects.test.ts', // 24 s
  'test/ordering/ordered-route.e2e.test.ts', // 16 to 22 s alone here, not yet measured in CI
  'test/reconciler/reconciler-cursor.test.ts', // 20 s
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.findIndex((path) => spec.moduleId.replaceAll('\\', '/').endsWith(path));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    return base.map((spec, index) => ({ spec, index })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index).map(({ spec }) => spec);
  }
}
