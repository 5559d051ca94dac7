/**
 * The local stack's own calls, under `/_local/` on its gateway (loopback only): what the
 * storm and `retryproof --local wait` use to drive and watch the stack. A deployed stack
 * has none of them.
 *
 *   POST /_local/restart-executor  kill the executor's event source mid-run, start a new one
 *   POST /_local/reconcile         one reconciliation now: {settleSeconds, stuckAfterSeconds, fromMs, toMs}
 *   POST /_local/ledger            the entries of every ledger the stack's actions declare: {fromMs, toMs}
 *   GET  /_local/ingest-counts     each route's duplicates and breaker trips over the last hour and day (ingest-tally.ts)
 *   GET  /_local/status            the queues' depths and the executor's counters (each route queue's too),
 *                                  and the bucket of large bodies with the objects in it
 *
 * Each Region of a stack of several serves these on its own gateway, about its own executor and
 * queues; a reconcile there re-enqueues onto its queue. The table and the ledgers are every Region's.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { ledgerEntries as entriesOf } from '../lambdas/ledger/ledger.ts';
import type { Ledger, LedgerEntry } from '../lambdas/ledger/ledger.ts';
import type { ReconcileReport } from '../lambdas/reconciler/reconcile.ts';
import type { PollerStats } from './executor-poller.ts';
import type { AdminHandler } from './http-gateway.ts';
import type { QueuePair } from './local-services.ts';
import type { IngestCounts } from './ingest-tally.ts';
import type { ReconcileRequest } from './reconcile-runs.ts';

export interface AdminTargets {
  /** The Region these calls are about (LocalRegion.name). */
  readonly region: string;
  readonly restartExecutor: () => Promise<{ abandonedBatches: number }>;
  readonly reconcileOnce: (request: ReconcileRequest) => Promise<ReconcileReport>;
  /** The stack's ledgers, by action: those of the configuration it was started with, the demo's or a user's. */
  readonly ledgers: ReadonlyMap<string, Ledger>;
  /** Stuck-after seconds when a reconcile call names none: the stack's own. */
  readonly stuckAfterSeconds: number;
  readonly sqs: SQSClient;
  readonly queues: QueuePair;
  /** With bodyBucket: the Region's bucket of large bodies. @default - none */
  readonly s3?: S3Client;
  readonly bodyBucket?: string;
  /** The routes' own queues, each with its event source's counters. @default - none */
  readonly routeQueues?: readonly {
    readonly route: string;
    readonly queueUrl: string;
    readonly executor: () => (PollerStats & { readonly batchesInFlight: number }) | undefined;
  }[];
  readonly executor: () => PollerStats & { readonly batchesInFlight: number };
  /** The ingest's duplicates and breaker trips per route, over the last hour and day (ingest-tally.ts). @default - none */
  readonly ingestCounts?: () => Readonly<Record<string, IngestCounts>>;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

async function depth(sqs: SQSClient, queueUrl: string): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const a = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(a.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * The objects in a bucket, counted page by page (ListObjectsV2 names at most 1,000 a call: S3 API
 * Reference, ListObjectsV2, MaxKeys). A local bucket holds the large bodies of a laptop's runs.
 */
async function objectCount(s3: S3Client, bucket: string): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ...(token === undefined ? {} : { ContinuationToken: token }) }));
    count += page.KeyCount ?? page.Contents?.length ?? 0;
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return count;
}

/** Every entry of the ledgers in [fromMs, toMs), once each: actions may share a ledger. */
async function ledgerEntries(ledgers: ReadonlyMap<string, Ledger>, fromMs: number, toMs: number): Promise<LedgerEntry[]> {
  const distinct = [...new Set(ledgers.values())];
  const lists = await Promise.all(distinct.map((l) => entriesOf(l, fromMs, toMs)));
  const byId = new Map<string, LedgerEntry>();
  for (const entry of lists.flat()) byId.set(entry.entryId, entry);
  return [...byId.values()];
}

/** The admin calls, by `METHOD /path`, as the gateway serves them. */
export function adminEndpoints(targets: AdminTargets): ReadonlyMap<string, AdminHandler> {
  return new Map<string, AdminHandler>([
    ['POST /_local/restart-executor', async () => ({ status: 200, body: await targets.restartExecutor() })],
    [
      'POST /_local/reconcile',
      async (body) => {
        const b = (body ?? {}) as Record<string, unknown>;
        // A call by hand reconciles up to now unless it says otherwise: settle 0.
        const report = await targets.reconcileOnce({
          settleSeconds: numberOr(b.settleSeconds, 0),
          stuckAfterSeconds: numberOr(b.stuckAfterSeconds, targets.stuckAfterSeconds),
          ...(typeof b.fromMs === 'number' ? { fromMs: b.fromMs } : {}),
          ...(typeof b.toMs === 'number' ? { toMs: b.toMs } : {}),
        });
        return { status: 200, body: report };
      },
    ],
    [
      'POST /_local/ledger',
      async (body) => {
        const b = (body ?? {}) as Record<string, unknown>;
        const { fromMs, toMs } = b;
        if (typeof fromMs !== 'number' || typeof toMs !== 'number' || !(fromMs <= toMs)) {
          return { status: 400, body: { error: 'fromMs and toMs are required: epoch milliseconds, fromMs <= toMs' } };
        }
        return { status: 200, body: { ledgers: new Set(targets.ledgers.values()).size, entries: await ledgerEntries(targets.ledgers, fromMs, toMs) } };
      },
    ],
    ['GET /_local/ingest-counts', () => Promise.resolve({ status: 200, body: { routes: targets.ingestCounts?.() ?? {} } })],
    [
      'GET /_local/status',
      async () => ({
        status: 200,
        body: {
          pid: process.pid,
          region: targets.region,
          queue: await depth(targets.sqs, targets.queues.queueUrl),
          dlq: await depth(targets.sqs, targets.queues.dlqUrl),
          // Every event source's counters summed; each route queue's own below.
          executor: targets.executor(),
          routeQueues: await Promise.all(
            (targets.routeQueues ?? []).map(async (q) => ({ route: q.route, queueUrl: q.queueUrl, ...(await depth(targets.sqs, q.queueUrl)), executor: q.executor() })),
          ),
          ...(targets.s3 === undefined || targets.bodyBucket === undefined
            ? {}
            : { bodyBucket: { name: targets.bodyBucket, objects: await objectCount(targets.s3, targets.bodyBucket) } }),
        },
      }),
    ],
  ]);
}
