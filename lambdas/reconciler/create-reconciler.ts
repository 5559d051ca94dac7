/**
 * Wires the reconciler over DynamoDB and SQS, for the scheduled Lambda, the local stack
 * and the operator CLI alike. `run()` reconciles the configured window ending `settle`
 * before now; a window can also be given by hand.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { SqsWorkQueue } from '../queue/sqs-work-queue.ts';
import { DynamoDbReconcilerStore } from '../store/dynamodb-reconciler-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { reconcile } from './reconcile.ts';
import type { ReconcileOptions, ReconcileReport } from './reconcile.ts';

export interface ReconcilerOptions {
  readonly dynamo: DynamoDBClient;
  readonly eventsTable: string;
  /** The ledger of each action that declares one, by action name. @default - no effects check */
  readonly ledgers?: ReadonlyMap<string, Ledger>;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly config: ResolvedConfig;
  readonly now?: () => number;
}

export interface ReconcileWindow {
  readonly fromMs: number;
  readonly toMs: number;
  /** @default 240_000, under the function's 5 minute timeout */
  readonly budgetMs?: number;
  readonly onProgress?: ReconcileOptions['onProgress'];
}

export interface Reconciler {
  run(window?: ReconcileWindow): Promise<ReconcileReport>;
}

/** The default window: [now - windowHours, now - settle]. */
export function defaultWindow(config: ResolvedConfig, nowMs: number): { fromMs: number; toMs: number } {
  return {
    fromMs: nowMs - config.reconciliation.windowHours * 3_600_000,
    toMs: nowMs - config.reconciliation.settleSeconds * 1000,
  };
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const now = options.now ?? Date.now;
  const deps = {
    store: new DynamoDbReconcilerStore(options.dynamo, options.eventsTable),
    ...(options.ledgers === undefined ? {} : { ledgers: options.ledgers }),
    queue: new SqsWorkQueue(options.sqs, options.queueUrl),
    routes: new Map(options.config.routes.map((r) => [r.name, r])),
    routeState: new DynamoDbRouteStateStore(options.dynamo, options.eventsTable),
    now,
  };
  return {
    run: (window) => {
      const { fromMs, toMs } = window ?? defaultWindow(options.config, now());
      return reconcile(deps, {
        fromMs,
        toMs,
        budgetMs: window?.budgetMs ?? 240_000,
        stuckAfterMs: options.config.reconciliation.stuckAfterSeconds * 1000,
        maxReenqueue: options.config.reconciliation.maxReenqueuePerRun,
        ...(window?.onProgress === undefined ? {} : { onProgress: window.onProgress }),
      });
    },
  };
}
