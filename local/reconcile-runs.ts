/**
 * The local form of the reconciler's hourly schedule: a timer, and runs by hand (the admin
 * call the storm makes). Runs never overlap: each waits for the one before, as the deployed
 * schedule's runs never overlap either (one run fits well within the hour).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import { lastRunOf } from '../lambdas/reconciler/reconcile-cursor.ts';
import { documentClient } from '../lambdas/store/dynamodb-event-store.ts';
import { RECONCILER_CURSOR_KEY } from '../lambdas/store/record-keys.ts';
import type { Reconciler } from '../lambdas/reconciler/create-reconciler.ts';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import { reconcileLine } from './log-lines.ts';
import type { Terminal } from './terminal-output.ts';

export interface ReconcileRequest {
  /** Records younger than this are left alone. @default the stack's settle seconds */
  readonly settleSeconds?: number;
  /** RECEIVED work not sent for this long is re-enqueued. @default the stack's stuck-after seconds */
  readonly stuckAfterSeconds?: number;
  /** @default - the configured window back from now */
  readonly fromMs?: number;
  /** @default - now, less the settle seconds */
  readonly toMs?: number;
}

export interface ReconcileRunsOptions {
  readonly config: ResolvedConfig;
  /** The reconciler over a configuration: a request's settle and stuck-after seconds change it. */
  readonly reconcilerFor: (config: ResolvedConfig) => Reconciler;
  /** Seconds between timed runs; 0 for none. */
  readonly everySeconds: number;
  readonly terminal: Terminal;
  /** Called with each run's report once it ends (the stack notes it for the console). @default - nothing */
  readonly onReport?: (report: ReconcileReport) => Promise<void>;
}

export interface ReconcileRuns {
  /** One run, once the runs before it have ended; prints its line. */
  readonly once: (request?: ReconcileRequest) => Promise<ReconcileReport>;
  /** Stops the timer; resolves when the last run has ended. */
  readonly stop: () => Promise<void>;
}

export function startReconcileRuns(options: ReconcileRunsOptions): ReconcileRuns {
  const { config, terminal } = options;
  let chain: Promise<unknown> = Promise.resolve();
  const once = (request: ReconcileRequest = {}): Promise<ReconcileReport> => {
    const run = chain.then(async () => {
      const settle = request.settleSeconds ?? config.reconciliation.settleSeconds;
      const stuckAfter = request.stuckAfterSeconds ?? config.reconciliation.stuckAfterSeconds;
      const now = Date.now();
      const reconciler = options.reconcilerFor({
        ...config,
        reconciliation: { ...config.reconciliation, settleSeconds: settle, stuckAfterSeconds: stuckAfter },
      });
      const report = await reconciler.run({
        fromMs: request.fromMs ?? now - config.reconciliation.windowHours * 3_600_000,
        toMs: request.toMs ?? now - settle * 1000,
      });
      terminal.out(reconcileLine(report.counts, report.stoppedEarly));
      await options.onReport?.(report).catch((error: unknown) => {
        terminal.err(`reconcile: its report was not noted for the console: ${(error as Error).message}`);
      });
      return report;
    });
    // A failed run is its caller's to report; the next run goes ahead.
    chain = run.catch(() => undefined);
    return run;
  };
  const timer =
    options.everySeconds > 0
      ? setInterval(() => {
          once().catch((error: unknown) => {
            terminal.err(`reconcile failed: ${(error as Error).message}`);
          });
        }, options.everySeconds * 1000)
      : undefined;
  return {
    once,
    stop: async () => {
      if (timer !== undefined) clearInterval(timer);
      await chain;
    },
  };
}

/**
 * Notes a run's report on the reconciler's cursor item, as a deployed scheduled run's release
 * writes it (reconcile-cursor.ts): the local runs reconcile a window of their own, without the
 * cursor, so this one write a run is theirs. It sets `lastRun` alone: a cursor there stays as it is.
 */
export async function noteLastRun(dynamo: DynamoDBClient, eventsTable: string, report: ReconcileReport): Promise<void> {
  await documentClient(dynamo).send(
    new UpdateCommand({ TableName: eventsTable, Key: RECONCILER_CURSOR_KEY, UpdateExpression: 'SET lastRun = :r', ExpressionAttributeValues: { ':r': lastRunOf(report, Date.now()) } }),
  );
}
