import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first-sequencer.ts';
import { SlowestFilesReporter } from './test/support/slowest-files-reporter.ts';

export default defineConfig({
  resolve: {
    // Code that imports the package by its name (the examples, the template action) gets its
    // sources: the package's "exports" name dist/, which a checkout has not built. Exact names
    // only, the longer first. Node and esbuild get the same two: examples/self-reference.ts,
    // lib/stateless/retryproof-function.ts.
    alias: [
      { find: /^retryproof\/actions$/, replacement: fileURLToPath(new URL('./lambdas/actions/index.ts', import.meta.url)) },
      { find: /^retryproof$/, replacement: fileURLToPath(new URL('./lib/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // DynamoDB Local runs in one JVM beside the workers; two cores are shared by both.
    maxWorkers: 2,
    // The longest files first, so that none starts last and runs alone (longest-first-sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // The default report, then the ten slowest files (slowest-files-reporter.ts).
    reporters: ['default', new SlowestFilesReporter()],
    // CDK synths and the end-to-end storm are slow on two shared cores; a hung test still fails.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Handlers log and emit EMF to stdout; tests that assert on them capture them explicitly.
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
