import { describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE, RECONCILER_METRIC, SERVICE } from '../../lambdas/observability/metric-catalogue.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { captureEmf, loadReconcilerHandler, reconcilerEnvironmentOf } from '../observability/emf-capture.ts';
import type { EmittedMetric, ReconcilerEnvironment } from '../observability/emf-capture.ts';
import { MAX_RECEIVE_COUNT } from '../support/executor-fixture.ts';
import { reconcilerFixture } from '../support/reconciler-fixture.ts';
import { testConfig } from '../support/test-config.ts';

/** The reconciler's Lambda entry point, run on its own tables as the hourly schedule runs it. */
async function runScheduled(environment: ReconcilerEnvironment): Promise<{ rows: EmittedMetric[]; error: unknown }> {
  let error: unknown;
  const rows = await captureEmf(async () => {
    const { handler, restore } = await loadReconcilerHandler(environment);
    try {
      await handler({}, lambdaContext('retryproof-reconciler'));
    } catch (err) {
      error = err;
    } finally {
      restore();
    }
  });
  return { rows, error };
}

describe('the reconciler heartbeat (ReconcilerRuns), which the reconciler-no-run alarm waits for', () => {
  const environment = async (overrides: Partial<ReconcilerEnvironment> = {}): Promise<ReconcilerEnvironment> => {
    const rf = await reconcilerFixture();
    const config = testConfig(rf.fx.routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT }, reconciliation: { settleSeconds: 2 }, maxClockSkewSeconds: 1 });
    return { ...reconcilerEnvironmentOf(rf, config), ...overrides };
  };

  it('is 1 for a completed run, under the reconciler service alone, beside the counts the findings alarm adds up', async () => {
    // Prepare
    const env = await environment();
    // Act
    const { rows, error } = await runScheduled(env);
    // Assess
    expect(error).toBeUndefined();
    const runs = rows.filter((r) => r.name === RECONCILER_METRIC.runs);
    expect(runs).toEqual([
      { namespace: METRICS_NAMESPACE, name: 'ReconcilerRuns', unit: 'Count', value: 1, dimensions: { service: SERVICE.reconciler } },
    ]);
    for (const name of [RECONCILER_METRIC.reversed, RECONCILER_METRIC.missing, RECONCILER_METRIC.orphans, RECONCILER_METRIC.needsAttention]) {
      expect(rows.filter((r) => r.name === name).map((r) => [r.value, r.dimensions]), name).toEqual([[0, { service: SERVICE.reconciler }]]);
    }
  });

  it('is not emitted by a run that fails, so silence is what a crashing reconciler looks like', async () => {
    // Prepare: an events table that does not exist, so the window's first Query fails.
    const env = await environment({ eventsTable: 'no-such-table' });
    // Act
    const { rows, error } = await runScheduled(env);
    // Assess
    expect(String(error)).toMatch(/ResourceNotFound|non-existent table|not found/i);
    expect(rows.filter((r) => r.name === RECONCILER_METRIC.runs)).toEqual([]);
  });
});
