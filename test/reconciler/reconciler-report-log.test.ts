import { describe, expect, it } from 'vitest';
import { FINDINGS_QUERY } from '../../lib/stateless/observability.ts';
import { captureJsonLines, reconcilerEnvironmentOf, runReconcilerHandler } from '../observability/emf-capture.ts';
import { MAX_RECEIVE_COUNT, ROUTE } from '../support/executor-fixture.ts';
import { reconcilerFixture } from '../support/reconciler-fixture.ts';
import { testConfig } from '../support/test-config.ts';

describe('the reconciliation report in the reconciler\'s log, where the reconciler-findings alarm sends a person', () => {
  it('is a warning with the run\'s findings, under the message and the count fields the alarm\'s Logs Insights query filters on', async () => {
    // Prepare: a ledger entry no delivery explains, an orphan the run must report.
    const rf = await reconcilerFixture();
    const orphanKey = 'evt_no-record-for-this';
    await rf.fx.ledgerClient.post({ route: ROUTE, idempotencyKey: orphanKey, amount: 7, currency: 'EUR', postedAt: Date.now() - 60_000 });
    // Act: the Lambda entry point, with the log level at WARN, as an operator may set it.
    const lines = await captureJsonLines({ POWERTOOLS_LOG_LEVEL: 'WARN' }, async () => {
      await runReconcilerHandler(
        reconcilerEnvironmentOf(rf, testConfig(rf.fx.routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT }, reconciliation: { settleSeconds: 2 }, maxClockSkewSeconds: 1 })),
      );
    });
    // Assess
    const reports = lines.filter((line) => line.message === 'reconciliation report');
    expect(reports).toHaveLength(1);
    const [line] = reports as [{ level: string; report: { counts: Record<string, unknown>; needsAttention: { key: string }[] } }];
    expect(line.level).toBe('WARN');
    expect(FINDINGS_QUERY).toContain('filter message = "reconciliation report"');
    const fields = [...FINDINGS_QUERY.matchAll(/report\.counts\.(\w+)/g)].map((m) => m[1]!);
    expect(fields.sort()).toEqual(['missing', 'needsAttention', 'orphans', 'reversed']);
    for (const field of fields) expect(typeof line.report.counts[field], field).toBe('number');
    expect(line.report.counts.orphans).toBe(1);
    expect(line.report.needsAttention.map((n) => n.key)).toContain(orphanKey);
  });
});
