/**
 * Wires the reconciler over DynamoDB and SQS, for the scheduled Lambda, the local stack
 * and the operator CLI alike. `run()` is a scheduled run: it continues the window the last
 * run left unfinished, or reconciles the configured one ending `settle` before now, through
 * the cursor (reconcile-cursor.ts). A window given by hand is reconciled from its start,
 * without the cursor.
 */
import { DynamoDbEntityOrder } from '../store/dynamodb-entity-order.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { BodiesClient } from '../config/deployment.ts';
import { bodyObjectsOf } from '../store/s3-body-objects.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import { sqsWorkQueueOf } from '../queue/routed-work-queue.ts';
import { DynamoDbExpirySweepStore } from '../store/dynamodb-expiry-sweep-store.ts';
import { DynamoDbReconcilerStore } from '../store/dynamodb-reconciler-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { reconcile } from './reconcile.ts';
import type { ReconcileOptions, ReconcileReport } from './reconcile.ts';
import { reconcileScheduled } from './reconcile-cursor.ts';
import type { ScheduledRunDeps } from './reconcile-cursor.ts';
import type { SweepOptions } from './expiry-sweep.ts';

export interface ReconcilerOptions {
  readonly dynamo: DynamoDBClient;
  readonly eventsTable: string;
  /** The ledger of each action that declares one, by action name. @default - no effects check */
  readonly ledgers?: ReadonlyMap<string, Ledger>;
  /** With queueUrl: the work queue. */
  readonly sqs?: SQSClient;
  readonly queueUrl?: string;
  /** The queue of each route with one (ownQueue), by route. @default - none */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  /** Another queue than SQS's (a benchmark's, which counts). @default - an SqsWorkQueue on sqs and queueUrl */
  readonly queue?: WorkQueue;
  /** With bodyBucket: the bucket of large bodies, whose objects a re-send keeps alive. @default - none */
  readonly s3?: BodiesClient;
  readonly bodyBucket?: string;
  readonly config: ResolvedConfig;
  readonly now?: () => number;
  /**
   * Where a first sweep of expired items starts (a deployment of several Regions sweeps:
   * expiry-sweep.ts). @default SWEEP_EPOCH_MS
   */
  readonly sweepSinceMs?: number;
}

export interface ReconcileWindow {
  /**
   * With toMs, a window chosen by hand, reconciled from its start without the cursor.
   * @default - a scheduled run: the cursor's unfinished window, or the configured one
   */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** @default 240_000, under the deployed function's budget (reconciler-budget.ts) */
  readonly budgetMs?: number;
  readonly onProgress?: ReconcileOptions['onProgress'];
  /**
   * A scheduled run that finds a window finished less than half the schedule's interval
   * (reconciliation.everyMinutes) before its own would end does nothing (reconcile-cursor.ts):
   * the schedule's runs, one per Region, set it. A person's run (the CLI) always reconciles.
   * @default false
   */
  readonly skipIfFinishedRecently?: boolean;
}

export interface Reconciler {
  run(window?: ReconcileWindow): Promise<ReconcileReport>;
}

/** The default window: [now - windowHours, now - settle]. */
/**
 * The expiry sweep of a deployment's scheduled runs: only with several Regions, whose MRSC table
 * has no TTL (expiry-sweep.ts); undefined otherwise.
 */
export function sweepOptionsOf(config: ResolvedConfig, sinceMs?: number): SweepOptions | undefined {
  if (config.regions === undefined) return undefined;
  return {
    minTtlSeconds: Math.min(...config.routes.map((r) => r.ttlSeconds)),
    clockSkewSeconds: config.clockSkewSeconds,
    ...(sinceMs === undefined ? {} : { sinceMs }),
  };
}

/** A finished window ending less than this before a scheduled run's own is not due again: half the schedule's interval. */
export function notDueGapMs(config: ResolvedConfig): number {
  return (config.reconciliation.everyMinutes * 60_000) / 2;
}

export function defaultWindow(config: ResolvedConfig, nowMs: number): { fromMs: number; toMs: number } {
  return {
    fromMs: nowMs - config.reconciliation.windowHours * 3_600_000,
    toMs: nowMs - config.reconciliation.settleSeconds * 1000,
  };
}

function queueOf(options: ReconcilerOptions): WorkQueue {
  if (options.queue !== undefined) return options.queue;
  if (options.sqs === undefined || options.queueUrl === undefined) throw new Error('createReconciler: give a queue, or sqs and queueUrl');
  const bodies = bodyObjectsOf(options.s3, options.bodyBucket);
  return sqsWorkQueueOf(
    options.sqs,
    { queueUrl: options.queueUrl, ...(options.routeQueueUrls === undefined ? {} : { routeQueueUrls: options.routeQueueUrls }) },
    bodies === undefined ? undefined : { bodies, config: options.config },
  );
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const now = options.now ?? Date.now;
  const bodies = bodyObjectsOf(options.s3, options.bodyBucket);
  // An MRSC table (several Regions) has no TTL: the scheduled runs sweep its expired items.
  const regions = options.config.regions !== undefined;
  const deps: ScheduledRunDeps = {
    ...(regions ? { expiry: new DynamoDbExpirySweepStore(options.dynamo, options.eventsTable) } : {}),
    store: new DynamoDbReconcilerStore(options.dynamo, options.eventsTable),
    ...(options.ledgers === undefined ? {} : { ledgers: options.ledgers }),
    queue: queueOf(options),
    routes: new Map(options.config.routes.map((r) => [r.name, r])),
    routeState: new DynamoDbRouteStateStore(options.dynamo, options.eventsTable),
    now,
    clockSkewSeconds: options.config.clockSkewSeconds,
    ...(bodies === undefined ? {} : { bodies }),
    order: new DynamoDbEntityOrder(options.dynamo, options.eventsTable, { clockSkewSeconds: options.config.clockSkewSeconds }),
  };
  const settings = (window: ReconcileWindow | undefined) => ({
    budgetMs: window?.budgetMs ?? 240_000,
    stuckAfterMs: options.config.reconciliation.stuckAfterSeconds * 1000,
    maxReenqueue: options.config.reconciliation.maxReenqueuePerRun,
    ...(window?.onProgress === undefined ? {} : { onProgress: window.onProgress }),
  });
  const sweep = sweepOptionsOf(options.config, options.sweepSinceMs);
  return {
    run: (window) => {
      if (window?.fromMs !== undefined && window.toMs !== undefined) {
        return reconcile(deps, { fromMs: window.fromMs, toMs: window.toMs, ...settings(window) });
      }
      const minGapMs = window?.skipIfFinishedRecently === true ? notDueGapMs(options.config) : undefined;
      return reconcileScheduled(deps, {
        current: defaultWindow(options.config, now()),
        ...settings(window),
        ...(minGapMs === undefined ? {} : { minGapMs }),
        ...(sweep === undefined ? {} : { sweep }),
      });
    },
  };
}
