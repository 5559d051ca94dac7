/**
 * The reconciler Lambda, invoked hourly by EventBridge Scheduler. The construct generates
 * its entry at synth: it imports each ledger module the actions declare and calls
 * {@link reconcilerLambda} with them (with none, the effects check has nothing to read). An
 * event `{"fromMs": ..., "toMs": ...}` reconciles a chosen window instead (started by
 * hand, e.g. `aws lambda invoke`), from its start and without the cursor; a scheduled run
 * continues the window the last one left unfinished (reconcile-cursor.ts). The report goes to the logs as structured JSON, the
 * `reconciliation report` line the reconciler-findings alarm names; every completed run
 * counts itself in ReconcilerRuns, the heartbeat the reconciler-no-run alarm waits for.
 */
import middy from '@middy/core';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { bodiesClient } from '../store/s3-body-objects.ts';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { ledgersOf } from '../actions/action-modules.ts';
import type { ModulesByAction } from '../actions/action-modules.ts';
import { SERVICE } from '../observability/metric-catalogue.ts';
import { createLogger, createMetrics } from '../observability/powertools.ts';
import { deploymentFromEnv } from '../config/deployment.ts';
import { createReconciler } from './create-reconciler.ts';
import type { ReconcileReport } from './reconcile.ts';
import { REPORT_RESERVE_MS } from './reconciler-budget.ts';
import { recordReconcileReport } from './reconciler-metrics.ts';

interface ManualWindow {
  readonly fromMs?: unknown;
  readonly toMs?: unknown;
}

/** @param ledgerModules each ledger module, by the name of the action it belongs to */
export function reconcilerLambda(ledgerModules: ModulesByAction) {
  const { config, eventsTable, queueUrl, routeQueueUrls, bodyBucket } = deploymentFromEnv();
  const logger = createLogger(SERVICE.reconciler);
  const metrics = createMetrics(SERVICE.reconciler);
  const reconciler = createReconciler({
    dynamo: new DynamoDBClient({}),
    eventsTable,
    ledgers: ledgersOf(ledgerModules),
    sqs: new SQSClient({}),
    queueUrl,
    ...(routeQueueUrls === undefined ? {} : { routeQueueUrls }),
    ...(bodyBucket === undefined ? {} : { s3: bodiesClient(), bodyBucket }),
    config,
  });
  return middy<ManualWindow | undefined, ReconcileReport>()
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics))
  .handler(async (event, context) => {
    // Keep the reserve for the report, the metrics and the cursor's release after the budget runs out.
    const budgetMs = Math.max(1_000, context.getRemainingTimeInMillis() - REPORT_RESERVE_MS);
    const manual = typeof event?.fromMs === 'number' && typeof event.toMs === 'number' && event.fromMs < event.toMs;
    // A scheduled run goes through the cursor: it continues a window the last run left unfinished.
    // Another Region's run that finished a moment ago makes this one not due (reconcile-cursor.ts).
    const report = await reconciler.run(manual ? { fromMs: event.fromMs, toMs: event.toMs, budgetMs } : { budgetMs, skipIfFinishedRecently: true });
    recordReconcileReport(metrics, report);
    // The report the reconciler-findings alarm sends people to is a warning whenever that alarm
    // fires on it (needsAttention counts missing effects and orphans too), so WARN keeps it.
    // One line per run (amortized, 0.1 byte a delivery at 10 M a month): the run's whole report,
    // what the findings alarm's Logs Insights query (FINDINGS_QUERY) reads.
    if (report.counts.needsAttention > 0 || report.counts.reversed > 0) logger.warn('reconciliation report', { report });
    else logger.info('reconciliation report', { report });
    return report;
  });
}
