/**
 * A month of retryproof on AWS against the benchmarked Powertools receiver behind an API
 * Gateway REST API and behind an HTTP API, from list prices, the request counts `npm run bench`
 * measures and the log bytes bench/log-bytes.ts measures. The whole bill: the requests, and
 * what a deployed receiver pays to be watched (CloudWatch Logs, metrics, alarms, the
 * dashboard, X-Ray, KMS, Secrets Manager, EventBridge Scheduler). Pure arithmetic: no AWS
 * call, no network. Every assumption is a named input or a constant with its source.
 */
import type { EventRecord } from '../lambdas/domain/event-record.ts';
import { toRecordItem } from '../lambdas/store/record-item.ts';
import { logSortKey } from '../lambdas/store/dynamodb-execution-store.ts';
import { seenKey } from '../lambdas/store/replay-memory.ts';
import { EVENTS_TABLE } from '../lambdas/store/table-schema.ts';
import { RATE_WAIT_MAX_MS } from '../lambdas/ports/rate-gate.ts';
import { bodyObjectLifeDays, CLAIM_CHECK_ABOVE_BYTES } from '../lambdas/domain/body-object.ts';
import { backstopReceiveCount, DEFAULT_MAX_ATTEMPTS } from '../lambdas/config/route-config.ts';
import { customMetricCount, LOG_FIGURE_FILES, logBytesPerDelivery, readLogFigures } from './log-figures.ts';
import type { LogBytesMeasurement, LogBytesPerDelivery, StackInventory, TrafficShape } from './log-figures.ts';

/** When the prices below were written down. They are not fetched: check them before you rely on them. */
export const PRICES_TAKEN = '2026-11-29';
/** When the observability prices (issue 26) were looked up, through the search tool's stored pages. */
export const OBSERVABILITY_PRICES_TAKEN = '2026-12-03';
/** When the S3 prices of the claim check (issue 24) were written down: us-east-1, S3 Standard, as given with the issue. */
export const CLAIM_CHECK_PRICES_TAKEN = '2026-12-04';

/** A price with where it comes from. All us-east-1, list prices as the author knew them, free tiers left out. */
export interface Price {
  readonly usd: number;
  readonly per: string;
  readonly source: string;
}

/** Tiered prices: each tier's `upTo` is cumulative units per month. */
export interface TieredPrice {
  readonly tiers: readonly { readonly upTo: number; readonly usd: number }[];
  readonly per: string;
  readonly source: string;
}

export const PRICES = {
  httpApiRequests: {
    tiers: [
      { upTo: 300e6, usd: 1.0 / 1e6 },
      { upTo: Number.POSITIVE_INFINITY, usd: 0.9 / 1e6 },
    ],
    per: 'request (HTTP API; metered in 512 KB increments)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
  },
  restApiRequests: {
    tiers: [
      { upTo: 333e6, usd: 3.5 / 1e6 },
      { upTo: 1e9, usd: 2.8 / 1e6 },
      { upTo: 20e9, usd: 2.38 / 1e6 },
      { upTo: Number.POSITIVE_INFINITY, usd: 1.51 / 1e6 },
    ],
    per: 'request (REST API)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
  },
  lambdaArmGbSecond: {
    tiers: [
      { upTo: 7.5e9, usd: 0.0000133334 },
      { upTo: 18.75e9, usd: 0.0000120001 },
      { upTo: Number.POSITIVE_INFINITY, usd: 0.0000106667 },
    ],
    per: 'GB-second (arm64)',
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  lambdaRequests: { usd: 0.2 / 1e6, per: 'invocation', source: 'https://aws.amazon.com/lambda/pricing/' },
  dynamoWriteUnit: {
    usd: 0.625 / 1e6,
    per: 'write request unit (on demand, 1 KB; each GSI write counts too)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamoReadUnit: {
    usd: 0.125 / 1e6,
    per: 'read request unit (on demand: 4 KB strongly consistent, or 8 KB eventually consistent; a Query sums its items)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamoStorage: { usd: 0.25, per: 'GB-month (Standard table class)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  dynamoPitr: { usd: 0.2, per: 'GB-month of continuous backup (PITR)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  sqsRequests: {
    usd: 0.4 / 1e6,
    per: 'request (standard queue; each 64 KB chunk of a payload is one request)',
    source: 'https://aws.amazon.com/sqs/pricing/',
  },
  // Issue 26, looked up 2026-12-03. CloudWatch: AWS's pricing page as quoted by
  // factualminds.com (2026-06-13: logs $0.50/GB, dashboards $3), signoz.io (2026-02-15: $0.30 a
  // custom metric for the first 10,000) and cloudburn.io ("sourced from the official pricing page
  // as of February 2026"); the search tool holds no copy of aws.amazon.com/cloudwatch/pricing itself.
  logsIngestion: {
    usd: 0.5,
    per: 'GB ingested (Standard log class; EMF lines are log lines and ingest the same)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  logsStorage: { usd: 0.03, per: 'GB-month archived (compressed)', source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  customMetric: {
    usd: 0.3,
    per: 'custom metric-month (first 10,000; each namespace, name and dimension values; EMF makes no PutMetricData call)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  alarmMetric: {
    usd: 0.1,
    per: 'standard-resolution alarm metric-month (a metric-math alarm pays for each metric it reads)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  dashboard: { usd: 3, per: 'dashboard-month (beyond the free 3)', source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  // X-Ray: "5 USD pro Million aufgezeichnete Ablaufverfolgungen" (aws.amazon.com/de/xray/pricing, stored copy).
  xrayTraces: { usd: 5 / 1e6, per: 'trace recorded', source: 'https://aws.amazon.com/xray/pricing/' },
  kmsKey: { usd: 1, per: 'customer-managed KMS key-month', source: 'https://aws.amazon.com/kms/pricing/' },
  // Secrets Manager: $0.40 a secret-month and $0.05 per 10,000 API calls (hivebook.wiki's summary, 2026).
  secret: { usd: 0.4, per: 'secret-month', source: 'https://aws.amazon.com/secrets-manager/pricing/' },
  secretsApiCall: { usd: 0.05 / 10_000, per: 'API call (GetSecretValue)', source: 'https://aws.amazon.com/secrets-manager/pricing/' },
  schedulerInvocation: { usd: 1 / 1e6, per: 'EventBridge Scheduler invocation (beyond the free 14 M)', source: 'https://aws.amazon.com/eventbridge/pricing/' },
  // Issue 24, the S3 claim check: S3 Standard in us-east-1, written down 2026-12-04. A PUT that
  // If-None-Match refuses (412, a duplicate's) is assumed billed as a PUT. Lifecycle expirations
  // cost nothing, and no transfer is charged between the functions and a bucket of their own
  // Region (the pricing page's data transfer section: transfer in is free, and so is transfer out
  // to a service in the same Region). Storage is counted in byte-hours, GB = 2^30 bytes (S3 FAQ),
  // and not after an object's expiration time even when the lifecycle deletes it later
  // (https://repost.aws/knowledge-center/s3-lifecycle-rule-delay).
  s3PutRequest: {
    usd: 0.005 / 1000,
    per: 'PUT, COPY, POST or LIST request (S3 Standard; a PUT refused 412 assumed billed as one)',
    source: 'https://aws.amazon.com/s3/pricing/',
  },
  s3GetRequest: { usd: 0.0004 / 1000, per: 'GET, SELECT or other request, HEAD included (S3 Standard)', source: 'https://aws.amazon.com/s3/pricing/' },
  s3Storage: {
    usd: 0.023,
    per: 'GB-month (S3 Standard, first 50 TB; billed by the byte-hour, no minimum duration, nothing after an object\'s expiration date)',
    source: 'https://aws.amazon.com/s3/pricing/',
  },
} as const satisfies Record<string, Price | TieredPrice>;

/**
 * Hosted webhook gateways, for scale: their own price per million at 10 M a month where one is
 * published. Looked up 2026-12-03 through the search tool; a gateway with no stored price says so.
 */
export const HOSTED_GATEWAYS = [
  {
    name: 'Svix',
    usdPerMillion: 100,
    basis: 'Professional from $490/month with 50,000 messages, then $0.0001 a message ($100 per million); Svix sends webhooks, it is not a receiver',
    source: 'https://www.svix.com/pricing/ as transcribed 2026-09-20 (github.com/api-evangelist/svix, plans/svix-plans-pricing.yml)',
  },
  {
    name: 'Hookdeck',
    usdPerMillion: undefined,
    basis: 'Team from $39/month with 10,000 events, then metered; the stored page gives no per-event price (only discarded requests, $2.50 per million)',
    source: 'https://hookdeck.com/pricing as transcribed 2026-09-20 (github.com/api-evangelist/hookdeck, plans/hookdeck-plans-pricing.yml)',
  },
  {
    name: 'Convoy',
    usdPerMillion: undefined,
    basis: 'no price found: the search tool holds no Convoy pricing page',
    source: 'https://getconvoy.io (not found 2026-12-03)',
  },
] as const;

/** The cost of `units` at a tiered price. */
export function tiered(price: TieredPrice, units: number): number {
  let cost = 0;
  let floor = 0;
  for (const tier of price.tiers) {
    if (units <= floor) break;
    cost += (Math.min(units, tier.upTo) - floor) * tier.usd;
    floor = tier.upTo;
  }
  return cost;
}

/**
 * An SQS event source's pollers while its queue is empty. "For standard queues, Lambda uses long
 * polling to poll a queue until it becomes active"; it works with five concurrent batches and "can
 * optimize to as few as 2 concurrent batches to reduce the SQS calls and corresponding costs.
 * However, this optimization is not available when you enable the maximum concurrency setting"
 * (Lambda Developer Guide, "Configuring scaling behavior for SQS event source mappings",
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html). Every retryproof event
 * source sets maximum concurrency, so 5 pollers poll each work queue all month, busy or idle.
 */
export const IDLE_POLLERS_PER_QUEUE = 5;
/**
 * A long poll waits at most 20 s (SQS API Reference, ReceiveMessage, WaitTimeSeconds), so an
 * idle poller makes at least 3 ReceiveMessage calls a minute; each is a billed request whether it
 * returns a message or not (https://aws.amazon.com/sqs/pricing/).
 */
export const LONG_POLL_SECONDS = 20;

const MINUTES_PER_MONTH = 60 * 24 * 30.4375;

/** ReceiveMessage calls an idle work queue's event source makes in a month: 657,450. */
export const IDLE_POLLS_PER_QUEUE_MONTH = IDLE_POLLERS_PER_QUEUE * (60 / LONG_POLL_SECONDS) * MINUTES_PER_MONTH;

/**
 * CloudWatch alarm metrics of one route queue: its oldest-message alarm (1), and for a rate-limited
 * route its backlog alarm, a metric-math alarm over visible, in-flight and delayed messages (3)
 * (lib/stateless/receiver-alarms.ts).
 */
export const ROUTE_QUEUE_ALARM_METRICS = { oldestMessage: 1, backlog: 3 } as const;

export interface CostInputs {
  readonly deliveriesPerMonth: number;
  /** Share of the deliveries that are duplicates of an earlier one, 0 to <1. */
  readonly duplicateShare: number;
  /** @default 2048 */
  readonly bodyBytes: number;
  /** Memory of each function; the stack's default is 512. */
  readonly memoryMb: number;
  /** Time the route's action takes, billed in the executor (both stacks queue it). @default 200 */
  readonly actionMs: number;
  /** One DynamoDB request in-region. @default 5 */
  readonly dynamoMs: number;
  /** One SQS SendMessage in-region. @default 8 */
  readonly sqsMs: number;
  /** Handler time besides requests (verification, middy, JSON). @default 3 */
  readonly overheadMs: number;
  /** How long keys are kept; both stacks keep them as long. @default 35 */
  readonly ttlDays: number;
  /** Messages per executor invocation (the SQS event source's batches at your traffic). @default 5 */
  readonly batchFill: number;
  /**
   * SQS receives one event source makes on its queue while it is empty: 5 pollers, 20 s long polls
   * ({@link IDLE_POLLS_PER_QUEUE_MONTH}). Each work queue pays it, the shared one and each route's own.
   */
  readonly idlePollsPerMonth: number;
  // --- protocol v3 (issue 21, ingest): the replay memory ---
  /**
   * Share of the new deliveries on routes whose scheme signs no timestamp (GitHub, Shopify,
   * hmac-sha256): the ingest reads one replay-memory item (a strongly consistent GetItem) and
   * the executor writes it after its lease (lambdas/store/replay-memory.ts). @default 0
   */
  readonly replayMemoryShare: number;
  /** Months of such deliveries the memory holds: its items never expire, so it grows by a month's worth each month. @default 12 */
  readonly replayMemoryMonths: number;
  // --- issue 23: the bulk redrive's sparse failed index ---
  /**
   * Share of the new deliveries that fail for good (FAILED): each enters the sparse `failed`
   * index (an ALL copy: the payload is kept), and leaves it when redriven. @default 0.001
   */
  readonly failureShare: number;
  // --- issue 26: what a deployed receiver pays to be watched ---
  /** Days every log group keeps its lines (the config's logRetentionDays; peers keep theirs as long). @default 30 */
  readonly logRetentionDays: number;
  /**
   * Ingest instances alive at once through the month: each fetches each route's secret once a
   * minute (the SecretsProvider's 60 s cache, lambdas/secrets/secrets-manager-source.ts). @default 2
   */
  readonly warmIngestInstances: number;
  // --- issue 23: per-route isolation (rateLimit, concurrency, ownQueue) ---
  /**
   * Routes with a queue of their own: each is one more SQS queue whose event source polls it all
   * month, busy or idle, and one more alarm (its oldest message). @default 0 (npm run cost: 1)
   */
  readonly isolatedRoutes: number;
  /**
   * Of those, the routes with a rate limit: each has a backlog alarm too, a metric-math alarm on
   * 3 queue metrics. At most isolatedRoutes. @default 0 (npm run cost: 1)
   */
  readonly rateLimitedRoutes: number;
  /**
   * Share of the new deliveries on rate-limited routes: each run passes the route's gate (one
   * conditional write on the route's gate item), and each refusal pays the gate's failed write,
   * the record's defer write and a delayed wake-up message. @default 0 (npm run cost: 0.01)
   */
  readonly rateLimitedShare: number;
  /**
   * Refusals per admitted run on a rate-limited route: 0 when the route runs under its limit, more
   * the further its traffic is over it (each wake-up that finds its turn still taken is deferred
   * again). @default 1
   */
  readonly deferralsPerRun: number;
  // --- issue 24: the S3 claim check ---
  /**
   * Share of the deliveries (duplicates included) whose body is above the route's
   * claimCheckAboveBytes (128 KiB by default): each copy PUTs it to the bucket, and each new one
   * leaves an object there for the bucket's whole lifecycle. @default 0 (npm run cost: 0.02)
   */
  readonly largeBodyShare: number;
  /** The average size of those bodies, in MiB (at most what the receiver accepts, about 4.48). @default 1 */
  readonly largeBodyMib: number;
  /**
   * Share of the large bodies' objects renewed once (CopyObject onto itself) because their record
   * lives past its TTL: parked, or failed and redriven late. Rare. @default 0.01
   */
  readonly largeRenewalShare: number;
  /**
   * One S3 PutObject or GetObject of a large body in-region, in the ingest's or the executor's
   * invocation. S3 gives "median latencies ... often in the tens of milliseconds range" for
   * requests under 512 KB ("Timeouts and Retries for Latency-Sensitive Applications", Best
   * Practices Design Patterns: Optimizing Amazon S3 Performance); a 1 MiB body takes somewhat
   * longer: an assumption, not a measurement. @default 50
   */
  readonly s3Ms: number;
}

export const DEFAULT_INPUTS: Omit<CostInputs, 'deliveriesPerMonth' | 'duplicateShare'> = {
  bodyBytes: 2048,
  memoryMb: 512,
  actionMs: 200,
  dynamoMs: 5,
  sqsMs: 8,
  overheadMs: 3,
  ttlDays: 35,
  batchFill: 5,
  idlePollsPerMonth: IDLE_POLLS_PER_QUEUE_MONTH,
  replayMemoryShare: 0,
  replayMemoryMonths: 12,
  failureShare: 0.001,
  logRetentionDays: 30,
  warmIngestInstances: 2,
  // The receiver the benchmarks compare (bench/goals.ts, bench/report.ts) has no isolated route;
  // `npm run cost` prices one by default (COST_COMMAND_DEFAULTS), so its lines show.
  isolatedRoutes: 0,
  rateLimitedRoutes: 0,
  rateLimitedShare: 0,
  deferralsPerRun: 1,
  // The benchmarked receiver's bodies are 2 KB; `npm run cost` prices 2% large ones by default.
  largeBodyShare: 0,
  largeBodyMib: 1,
  largeRenewalShare: 0.01,
  s3Ms: 50,
};

/**
 * What `npm run cost` adds to DEFAULT_INPUTS unless told otherwise: one route on a queue of its
 * own, rate-limited, carrying 1% of the deliveries, each of its runs deferred once; and 2% of the
 * deliveries with a body large enough for the S3 claim check (1 MiB on average).
 */
export const COST_COMMAND_DEFAULTS = {
  isolatedRoutes: 1,
  rateLimitedRoutes: 1,
  rateLimitedShare: 0.01,
  deferralsPerRun: 1,
  largeBodyShare: 0.02,
} as const satisfies Partial<CostInputs>;

/** DynamoDB's item size rules, closely enough for write units: names and values in bytes. */
export function itemBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace('.', '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, v) => sum + itemBytes(v) + 1, 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value as Record<string, unknown>).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + itemBytes(v) + 1, 0);
  }
  return 0;
}

const KB = 1024;
const GB = 1024 ** 3;
/** DynamoDB adds this much to every stored item (and to every index copy). */
const ITEM_OVERHEAD_BYTES = 100;
const DAYS_PER_MONTH = 30.4375;
const units = (bytes: number): number => Math.max(1, Math.ceil(bytes / KB));

/** The sample key of the model's records: a Stripe-like event id. */
const SAMPLE_KEY = 'msg_2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b';

/** The record at each point of its life for a body of `bodyBytes`: as the claim writes it, leased, completed. */
function recordItemsOf(bodyBytes: number): {
  claimed: Record<string, unknown>;
  leased: Record<string, unknown>;
  completed: Record<string, unknown>;
} {
  const now = Date.UTC(2026, 0, 1);
  const claimed = claimedRecordItem(bodyBytes);
  // Protocol v4: the lease of the new delivery's message starts the breaker's count (repeatBase, answeredAt).
  const leased = { ...claimed, repeatBase: 1, answeredAt: now, status: 'EXECUTING', leaseUntil: now, leaseToken: SAMPLE_KEY, claimedAt: now, attempts: 1, runs: 1 };
  const { leaseUntil: _leaseUntil, ...released } = leased;
  // The completing attempt is logged on the record: its operation fingerprint and request id (no log item).
  const completed = {
    ...released,
    status: 'COMPLETED',
    completedAt: now,
    result: '{"ok":true}',
    operationFingerprint: 'f'.repeat(64),
    requestId: '2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b',
  };
  return { claimed, leased, completed };
}

/**
 * The record as ingest's claim writes it for a body of `bodyBytes`: without the body, which
 * travels in the work message (only its size is kept). The record keeps the payload on rare
 * paths only (a failed send, a copy racing the first send, parked or failed work, a retried
 * run), which this model of the happy path leaves out.
 */
function claimedRecordItem(bodyBytes: number): Record<string, unknown> {
  const now = Date.UTC(2026, 0, 1);
  const key = SAMPLE_KEY;
  const record: EventRecord = {
    route: 'orders',
    key,
    status: 'RECEIVED',
    fingerprint: 'f'.repeat(64),
    bodyBytes,
    receivedAt: now,
    expiresAt: Math.floor(now / 1000) + 35 * 86_400,
    answer: { status: 202, body: JSON.stringify({ id: `orders/${key}`, status: 'accepted' }) },
    hits: 1,
    attempts: 0,
    runs: 0,
    redrives: 0,
    lastEnqueuedAt: now,
  };
  // The claim writes no repeatBase (the worker's lease does) and carries its claimId nonce.
  const { repeatBase: _leaseSetsIt, ...item } = toRecordItem(record);
  return { ...item, claimId: '2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b' };
}

/**
 * A FAILED record as fail leaves it (lambdas/store/record-transitions.ts): the payload kept, the
 * last error, the dead-letter copy's id, the retry partition's and the failed index's keys.
 * The failed index (ALL) copies all of it.
 */
export function failedRecordBytes(bodyBytes: number): number {
  const now = Date.UTC(2026, 0, 1);
  const { leaseUntil: _lease, leaseToken: _token, ...leased } = recordItemsOf(bodyBytes).leased;
  return itemBytes({
    ...leased,
    status: 'FAILED',
    body: 'x'.repeat(bodyBytes),
    bodyEncoding: 'utf8',
    headers: { 'content-type': 'application/json' },
    lastError: `PermanentActionError: ${'e'.repeat(120)}`,
    lastErrorAt: now,
    failedAt: now,
    deadLetterId: SAMPLE_KEY,
    gsi2pk: 'RETRY#orders',
    gsi2sk: `${new Date(now).toISOString()}#${SAMPLE_KEY}`,
    gsi3pk: 'FAILED#orders#7',
    gsi3sk: `${new Date(now).toISOString()}#${SAMPLE_KEY}`,
  });
}

/**
 * A RECEIVED record as the rate gate's defer leaves it: as the ingest answered it, with when its
 * wake-up is due and how many times it was deferred. The payload travels in the wake-up message,
 * not on the record. Nothing the byTime index projects changes, so the defer writes no index copy.
 */
export function deferredRecordBytes(bodyBytes: number): number {
  const now = Date.UTC(2026, 0, 1);
  return itemBytes({ ...recordItemsOf(bodyBytes).claimed, deferredUntil: now, deferrals: 1, lastEnqueuedAt: now });
}

/** The item of a completed retryproof record for a body of `bodyBytes`. */
export function retryproofRecordBytes(bodyBytes: number): number {
  return itemBytes(recordItemsOf(bodyBytes).completed);
}

/** The byTime index's copy of an item: its keys and the projected attributes, never the body. */
function indexCopyOf(item: Record<string, unknown>): Record<string, unknown> {
  const index = EVENTS_TABLE.byTimeIndex;
  const kept = new Set<string>([EVENTS_TABLE.partitionKey, EVENTS_TABLE.sortKey, index.partitionKey, index.sortKey, ...index.projection]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
}

/** The byTime index's copy of a completed record. */
export function retryproofIndexBytes(bodyBytes: number): number {
  return itemBytes(indexCopyOf(recordItemsOf(bodyBytes).completed));
}

/** Write units of one call: on the table, and on its index copies. */
export interface PhaseUnits {
  readonly table: number;
  readonly index: number;
}

/** Write units of a delivery's life, phase by phase, and what one duplicate costs. */
export interface WriteUnitModel {
  readonly phases: {
    readonly claim: PhaseUnits;
    readonly lease: PhaseUnits;
    readonly completion: PhaseUnits;
    readonly duplicate: PhaseUnits;
  };
  /** A new delivery from its claim to its completion, index copies included (the completing attempt needs no log item). */
  readonly newDeliveryLife: number;
  readonly duplicate: number;
}

/**
 * What DynamoDB charges each write of a delivery's life, by its rules: a write costs 1 unit
 * per KB of the larger of the item before and after it; an index copy is written (1 unit per
 * KB of the copy) when the item enters the index or a projected attribute changes, and not
 * at all when neither happens. test/bench/write-units.test.ts measures the same phases on
 * DynamoDB Local.
 */
export function retryproofWriteUnits(
  bodyBytes: number,
  /** Protocol v3 (issue 21): on a route that signs no timestamp the worker also writes its replay-memory item after its lease. @default false */
  options: { readonly replayMemory?: boolean } = {},
): WriteUnitModel {
  const { claimed, leased, completed } = recordItemsOf(bodyBytes);
  const write = (before: Record<string, unknown> | undefined, after: Record<string, unknown>): PhaseUnits => {
    const table = units(Math.max(before === undefined ? 0 : itemBytes(before), itemBytes(after)));
    const copyBefore = before === undefined ? undefined : JSON.stringify(indexCopyOf(before));
    const index = copyBefore === JSON.stringify(indexCopyOf(after)) ? 0 : units(itemBytes(indexCopyOf(after)));
    return { table, index };
  };
  // A duplicate's claim adds 1 to hits (not projected) and sets nothing that is absent.
  const duplicateOf = { ...completed, hits: 2 };
  const phases = {
    claim: write(undefined, claimed),
    lease: ((lease) => ({ table: lease.table + (options.replayMemory === true ? units(replayMemoryBytes()) : 0), index: lease.index }))(write(claimed, leased)),
    completion: write(leased, completed),
    duplicate: write(completed, duplicateOf),
  };
  const sum = (p: PhaseUnits): number => p.table + p.index;
  return {
    phases,
    newDeliveryLife: sum(phases.claim) + sum(phases.lease) + sum(phases.completion),
    duplicate: sum(phases.duplicate),
  };
}

/** DynamoDB requests per delivery, as counted on the wire (test/ingest/ingest-request-count.test.ts and the bench). */
export const RETRYPROOF_REQUESTS = {
  /** The claim alone: the worker's lease starts the breaker's count (protocol v4). */
  newDelivery: 1,
  /** The same claim: it finds the record, counts the hit and returns the answer. */
  duplicate: 1,
  /** The executor: the lease and the fenced completion, which logs the attempt on the record. */
  execution: 2,
} as const;

/** The reconciler as the stack runs it by default: every hour over the last 24 hours, the byTime index in 8 shards per hour. */
const RECONCILER = { everyHours: 1, windowHours: 24, timeShards: EVENTS_TABLE.timeShards } as const;
const QUERY_KB = 4;

/** Read units a month, and where they go. */
export interface ReadUnitModel {
  /** Each hourly run reads the whole window again: a record is read windowHours / everyHours times (its index copy only). */
  readonly windowReadsPerDelivery: number;
  /** Each window read of one record: its index copy, eventually consistent, 0.5 unit per 4 KB a Query returns. */
  readonly windowReadUnitsPerRecordRead: number;
  /** The executor reads each route's state once per batch (strongly consistent, 1 unit). */
  readonly routeStateReadsPerBatch: number;
  /** The least each run's Queries cost however little they find: one per hour bucket and shard, 0.5 unit each. */
  readonly fixedUnitsPerRun: number;
  readonly runsPerMonth: number;
}

/** The read units of the design: reads are not metered on the hot path at all, but the reconciler reads every window again each hour. */
export function retryproofReadUnits(bodyBytes: number): ReadUnitModel {
  const copy = itemBytes(indexCopyOf(recordItemsOf(bodyBytes).completed));
  return {
    windowReadsPerDelivery: RECONCILER.windowHours / RECONCILER.everyHours,
    windowReadUnitsPerRecordRead: (copy / (QUERY_KB * KB)) * 0.5,
    routeStateReadsPerBatch: 1,
    fixedUnitsPerRun: (RECONCILER.windowHours + 1) * RECONCILER.timeShards * 0.5,
    runsPerMonth: (24 / RECONCILER.everyHours) * DAYS_PER_MONTH,
  };
}

/**
 * Protocol v3 (issue 21): one replay-memory item, as store/replay-memory.ts writes it for a route
 * that signs no timestamp: its key (route and the body's SHA-256) and the generation's receivedAt.
 */
export function replayMemoryBytes(): number {
  return itemBytes({ ...seenKey('orders', 'f'.repeat(64)), takenAt: Date.UTC(2026, 0, 1) });
}

/** An execution-log entry (one per attempt): keys, times, outcome and the operation fingerprint. */
export function logEntryBytes(): number {
  const now = Date.UTC(2026, 0, 1);
  const entry = {
    route: 'orders',
    key: 'msg_2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b',
    receivedAt: now,
    kind: 'execution' as const,
    attempt: 1,
    startedAt: now,
    endedAt: now,
    outcome: 'completed',
    operationFingerprint: 'f'.repeat(64),
    expiresAt: Math.floor(now / 1000),
    requestId: '2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b',
  };
  return itemBytes({ pk: `EVT#orders#${entry.key}`, sk: logSortKey(entry, '0a1b2c3d'), ...entry });
}

/** A Powertools idempotency record: hashed key, status, expiries, payload hash and the stored answer. */
export function powertoolsRecordBytes(): number {
  return itemBytes({
    id: 'bench-ingest#' + 'A'.repeat(24),
    expiration: 1_800_000_000,
    in_progress_expiration: 1_800_000_000_000,
    status: 'COMPLETED',
    validation: 'A'.repeat(24),
    data: { statusCode: 202, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'orders/msg_2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b', status: 'accepted' }) },
  });
}


/** What per-route isolation adds to a month (issue 23): route queues, their alarms, and the rate gate. */
export interface IsolationCost {
  /** Route queues, each polled by its event source all month. */
  readonly queues: number;
  /** ReceiveMessage calls of those pollers. */
  readonly pollsPerMonth: number;
  /** Alarm metrics of the route queues' alarms. */
  readonly alarmMetrics: number;
  readonly gate: {
    /** Admitted runs on rate-limited routes. */
    readonly admissions: number;
    readonly refusals: number;
    /** Write units of one refusal's defer of the record. */
    readonly deferUnits: number;
    /** Admissions, failed gate updates and defers, in write units. */
    readonly writeUnits: number;
    readonly delayedSends: number;
    /** The wake-ups' receive and delete calls, in batches. */
    readonly wakeUpSqsCalls: number;
    readonly executorInvocations: number;
    readonly executorGbSeconds: number;
    /** All of it, in dollars a month. */
    readonly usd: number;
  };
}

/** What an admitted run of an idle gate waits for its slot: its lead (lambdas/executor/start-lead.ts). */
const IDLE_SLOT_WAIT_MS = 100;

/**
 * The rate gate as the executor runs it (lambdas/store/dynamodb-rate-gate.ts). Under its limit a
 * run's admission is one conditional UpdateItem of the route's gate item (1 unit: the item is
 * tiny), and the run waits its lead for its slot (~100 ms). A route with a backlog (deferrals
 * above 0) has a busy gate: an admission is the idle form failing (still 1 unit: DynamoDB
 * charges a write whose condition fails) and the busy form taking the slot (1), and the run waits
 * in its invocation for its slot, half the 2 s window on average; a refusal is the idle form
 * failing (1), the return slot's reservation (1), one conditional UpdateItem deferring the record
 * (by the record's size), and one SendMessage with DelaySeconds of the wake-up, which later comes
 * back through the event source (its share of a receive, a delete and an invocation, in batches
 * of batchFill, each invocation as long as a refusal: 3 DynamoDB calls and a send). A slot
 * given up (deferLeased: a lease write answered past it) is rare and not priced.
 */
function isolationOf(inputs: CostInputs, fresh: number, gbs: (invocations: number, durationMs: number) => number): IsolationCost {
  const admissions = fresh * inputs.rateLimitedShare;
  const refusals = admissions * inputs.deferralsPerRun;
  const busy = inputs.deferralsPerRun > 0;
  const deferUnits = units(deferredRecordBytes(inputs.bodyBytes));
  const writeUnits = admissions * (busy ? 2 : 1) + refusals * (2 + deferUnits);
  const delayedSends = refusals;
  const wakeUpSqsCalls = (2 * refusals) / inputs.batchFill;
  const executorInvocations = refusals / inputs.batchFill;
  const slotWaitMs = busy ? RATE_WAIT_MAX_MS / 2 : IDLE_SLOT_WAIT_MS;
  const executorGbSeconds = gbs(executorInvocations, inputs.overheadMs + 3 * inputs.dynamoMs + inputs.sqsMs) + gbs(admissions, slotWaitMs);
  const usd =
    writeUnits * PRICES.dynamoWriteUnit.usd +
    (delayedSends + wakeUpSqsCalls) * PRICES.sqsRequests.usd +
    executorInvocations * PRICES.lambdaRequests.usd +
    tiered(PRICES.lambdaArmGbSecond, executorGbSeconds);
  return {
    queues: inputs.isolatedRoutes,
    pollsPerMonth: inputs.isolatedRoutes * inputs.idlePollsPerMonth,
    alarmMetrics: inputs.isolatedRoutes * ROUTE_QUEUE_ALARM_METRICS.oldestMessage + inputs.rateLimitedRoutes * ROUTE_QUEUE_ALARM_METRICS.backlog,
    gate: { admissions, refusals, deferUnits, writeUnits, delayedSends, wakeUpSqsCalls, executorInvocations, executorGbSeconds, usd },
  };
}

/** What the S3 claim check adds to a month (issue 24): requests to the bucket, their time, and the objects' storage. */
export interface ClaimCheckCost {
  /** Deliveries with a large body, duplicates included: each copy makes one conditional PUT. */
  readonly largeDeliveries: number;
  /** Objects a month: one per new large delivery (a duplicate's PUT is refused 412 and writes none). */
  readonly objects: number;
  /** The average large body, in bytes. */
  readonly bodyBytes: number;
  /** The bucket's lifecycle at the TTL: bodyObjectLifeDays (lambdas/domain/body-object.ts). */
  readonly lifeDays: number;
  /** What an object is billed for: the lifecycle, and half a day for S3's rounding of its expiry to the next midnight UTC. */
  readonly billedLifeDays: number;
  readonly requests: { readonly put: number; readonly get: number; readonly head: number; readonly copy: number };
  /** GB-months a month in steady state: the objects of billedLifeDays of traffic, renewals' longer lives included. */
  readonly storedGb: number;
  /** The ingest's PUTs and the executor's GETs, waited for in their invocations. */
  readonly lambdaGbSeconds: number;
  /** All in dollars a month; `requests` is put + get + head + copy + lambda. */
  readonly usd: {
    readonly put: number;
    readonly get: number;
    readonly head: number;
    readonly copy: number;
    readonly lambda: number;
    readonly requests: number;
    readonly storage: number;
    readonly total: number;
  };
}

const MIB = 1024 ** 2;
/** Dollars in a line's basis: four decimals, so a part worth a fraction of a cent still shows. */
const usd4 = (v: number): string => `$${v.toFixed(4)}`;
/** S3 rounds an object's expiry up to the next midnight UTC: over a day's uploads, half a day on average. */
const EXPIRY_ROUNDING_DAYS = 0.5;

/**
 * The S3 claim check as the code runs it (lambdas/domain/body-object.ts, store/s3-body-objects.ts,
 * queue/fresh-body-work-queue.ts), for the receives and re-sends this model counts:
 * - PUT: every copy of a large delivery, before its claim; the first creates the object, a
 *   duplicate's is refused 412 (assumed billed as a PUT).
 * - GET: every receive of a message that points to a body, before anything else: each new
 *   delivery's first run, each rate-gate wake-up, and on a failure its further attempts (up to
 *   maxAttempts), its dead-letter copy's receives until the queue moves it (handed back each
 *   time, maxReceiveCount of them) and the receive of its redrive.
 * - HEAD: a re-send by a sender that does not know the object's age. The ingest (which just wrote
 *   it) and the executor (which just read it: its wake-ups and dead-letter copies) know it; of the
 *   re-sends the model counts, that leaves the bulk redrive of each failure.
 * - COPY: a renewal, for records that live past their TTL: a stated share of the objects, each
 *   renewed once, living at most a whole lifecycle more (priced at that).
 * - storage: each object for the bucket's lifecycle at the TTL, completed or not; expiry is free.
 * SQS duplicates of messages, locked hand-backs, the reconciler's re-sends and a route's resume are
 * not in the model's receives or re-sends, so not here either.
 */
function claimCheckOf(
  inputs: CostInputs,
  traffic: { readonly deliveries: number; readonly fresh: number; readonly refusals: number; readonly failures: number },
  gbs: (invocations: number, durationMs: number) => number,
): ClaimCheckCost {
  const share = inputs.largeBodyShare;
  const largeDeliveries = traffic.deliveries * share;
  const objects = traffic.fresh * share;
  const largeFailures = traffic.failures * share;
  const failureReceives = DEFAULT_MAX_ATTEMPTS - 1 + backstopReceiveCount(DEFAULT_MAX_ATTEMPTS) + 1;
  const requests = {
    put: largeDeliveries,
    get: objects + traffic.refusals * share + largeFailures * failureReceives,
    head: largeFailures,
    copy: objects * inputs.largeRenewalShare,
  };
  const bodyBytes = inputs.largeBodyMib * MIB;
  const lifeDays = bodyObjectLifeDays(inputs.ttlDays * 86_400);
  const billedLifeDays = lifeDays + EXPIRY_ROUNDING_DAYS;
  const storedGb = ((objects + requests.copy) * (billedLifeDays / DAYS_PER_MONTH) * bodyBytes) / GB;
  // A batch's records run concurrently: counting each GET's wait in full is an upper bound.
  const lambdaGbSeconds = gbs(requests.put, inputs.s3Ms) + gbs(requests.get, inputs.s3Ms);
  const put = requests.put * PRICES.s3PutRequest.usd;
  const get = requests.get * PRICES.s3GetRequest.usd;
  const head = requests.head * PRICES.s3GetRequest.usd;
  const copy = requests.copy * PRICES.s3PutRequest.usd;
  const lambda = tiered(PRICES.lambdaArmGbSecond, lambdaGbSeconds);
  const storage = storedGb * PRICES.s3Storage.usd;
  const requestsUsd = put + get + head + copy + lambda;
  return {
    largeDeliveries,
    objects,
    bodyBytes,
    lifeDays,
    billedLifeDays,
    requests,
    storedGb,
    lambdaGbSeconds,
    usd: { put, get, head, copy, lambda, requests: requestsUsd, storage, total: requestsUsd + storage },
  };
}

export interface CostLine {
  readonly item: string;
  readonly retryproof: number;
  /** The Powertools receiver behind a REST API (the benchmarked peer). */
  readonly powertools: number;
  /** The same Powertools receiver behind an HTTP API. */
  readonly powertoolsHttp: number;
  readonly basis: string;
  /** A line of what the receiver pays to be watched (issue 26), not of its requests. */
  readonly observability: boolean;
}

export interface Totals {
  readonly retryproof: number;
  readonly powertools: number;
  readonly powertoolsHttp: number;
}

/** The measured figures the observability lines are priced from: as committed, and as before the cut of issue 26. */
export interface LogFigures {
  readonly current: LogBytesMeasurement;
  readonly beforeCut: LogBytesMeasurement;
}

export interface CostReport {
  readonly inputs: CostInputs;
  readonly lines: readonly CostLine[];
  /** The whole bill a month: requests and observability. */
  readonly totals: Totals;
  /** The requests alone (the bill before issue 26 priced observability). */
  readonly core: Totals;
  /** Observability alone, and its share of the whole bill. */
  readonly observability: Totals & { readonly retryproofShare: number };
  readonly perMillionDeliveries: Totals;
  /** The ratios of the whole bill: retryproof to each peer, both operated. */
  readonly ratios: { readonly toPowertoolsRest: number | null; readonly toPowertoolsHttp: number | null };
  /** The goal of issue 26: no dearer than HTTP API + Powertools, both operated. */
  readonly goalRatioToPowertoolsHttp: number;
  /** retryproof's whole bill with the log bytes measured before the cut, beside today's. */
  readonly logCut: {
    readonly before: { readonly bill: number; readonly logBytesPerDelivery: LogBytesPerDelivery };
    readonly after: { readonly bill: number; readonly logBytesPerDelivery: LogBytesPerDelivery };
  };
  /** A peer's log bytes per delivery, operated as a team would. */
  readonly peerLogBytesPerDelivery: { readonly ingest: number; readonly consumer: number; readonly access: number; readonly total: number };
  readonly metrics: { readonly customMetrics: number; readonly alarmMetrics: number; readonly tracesPerMonth: number; readonly secretsApiCalls: number };
  readonly stack: StackInventory;
  readonly hostedGateways: typeof HOSTED_GATEWAYS;
  readonly usage: Record<string, { readonly retryproof: number; readonly powertools: number }>;
  readonly itemBytes: { readonly retryproofRecord: number; readonly retryproofLog: number; readonly powertoolsRecord: number };
  /** Issue 23: what route queues and rate limits add (their lines: SQS route queues, Rate gate, CloudWatch alarms, route queues). */
  readonly isolation: IsolationCost;
  /** Issue 24: what the S3 claim check adds (its lines: S3 claim check requests, S3 claim check storage). */
  readonly claimCheck: ClaimCheckCost;
}

/** The committed figures (bench/log-bytes.json and the figures from before the cut). */
export function committedLogFigures(): LogFigures {
  return { current: readLogFigures(LOG_FIGURE_FILES.current), beforeCut: readLogFigures(LOG_FIGURE_FILES.beforeCut) };
}

const SECONDS_PER_MONTH = DAYS_PER_MONTH * 86_400;

/**
 * Traces X-Ray records a month for a function with active tracing under the default sampling
 * rule: "the first request each second, and five percent of any additional requests" (X-Ray
 * Developer Guide, "Configuring sampling rules", https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html;
 * oneuptime.com, 2026-02-12). With the invocations spread evenly over the month, the most it can
 * be; bursty traffic fills fewer seconds' reservoirs.
 */
export function tracesRecorded(invocationsPerMonth: number): number {
  const reservoir = Math.min(invocationsPerMonth, SECONDS_PER_MONTH);
  return reservoir + 0.05 * (invocationsPerMonth - reservoir);
}

/**
 * A peer operated as a team would, no less and no more (issue 26): Lambda's platform lines,
 * one Powertools Logger line per invocation at INFO in Powertools' own format (the size
 * measured of ours before the cut, which is that format with the same route, key and status),
 * the API's access log (the same line as ours), and alarms on the ingest's and the consumer's
 * errors and throttles and on the DLQ: 5 alarm metrics. No custom metrics, no dashboard, no
 * X-Ray, no customer-managed key, no secret.
 */
export function peerLogBytesPerDelivery(figures: LogFigures, t: TrafficShape): CostReport['peerLogBytesPerDelivery'] {
  const m = figures.beforeCut;
  // Lambda's lines as today's figures model them, untraced: no peer runs X-Ray.
  const { start, end, report } = figures.current.platform;
  const platform = start.bytes + end.bytes + report.bytes;
  const ingest = platform + m.functions.ingestNew.powertools.bytes;
  const consumer = ((1 - t.duplicateShare) * (platform + m.functions.executorMessage.powertools.bytes)) / t.batchFill;
  const access = figures.current.accessLog.bytes;
  return { ingest, consumer, access, total: ingest + consumer + access };
}
const PEER_ALARM_METRICS = 5;

/**
 * Prices a month. Both stacks verify, claim the key, queue the work and run the action in
 * an SQS consumer; they differ in the API, in what each write carries and in how many
 * writes there are:
 * - retryproof: HTTP API; ingest makes 1 conditional UpdateItem per delivery, new or duplicate
 *   (RETRYPROOF_REQUESTS); the write units of each phase of a delivery's life are
 *   retryproofWriteUnits', checked against DynamoDB Local by test/bench/write-units.test.ts.
 *   Reads: the hourly reconciler reads its whole 24 h window again on every run, so each
 *   record's index copy is read 24 times (retryproofReadUnits), and the executor reads the
 *   route's state once per batch.
 * - Powertools: REST API; PutItem (in progress) and UpdateItem (completed) per new delivery, one
 *   failed conditional PutItem per duplicate (its docs count this as a read; DynamoDB charges a
 *   failed conditional write as a write). Its consumer is made idempotent the way its docs show
 *   for batches: the same two writes per message, on a small record.
 */
export function priceMonth(inputs: CostInputs, figures: LogFigures = committedLogFigures()): CostReport {
  const n = inputs.deliveriesPerMonth;
  const dup = n * inputs.duplicateShare;
  const fresh = n - dup;
  const rec = retryproofRecordBytes(inputs.bodyBytes);
  const idx = retryproofIndexBytes(inputs.bodyBytes);
  const writeUnits = retryproofWriteUnits(inputs.bodyBytes);
  const readUnits = retryproofReadUnits(inputs.bodyBytes);
  const req = RETRYPROOF_REQUESTS;
  const log = logEntryBytes();
  const pt = powertoolsRecordBytes();
  const ms = (d: number): number => Math.ceil(d);
  const gbs = (invocations: number, durationMs: number): number => (invocations * ms(durationMs) * inputs.memoryMb) / 1024 / 1000;

  // Protocol v3 (issue 21): the replay memory, per new delivery on a no-timestamp route one
  // strongly consistent read (the ingest's) and one small write (the worker's), kept for good.
  const remembered = fresh * inputs.replayMemoryShare;
  // Issue 23: FAILED records in the sparse failed index, a month's failures held for the TTL at most.
  const failures = fresh * inputs.failureShare;
  const failedBytes = failedRecordBytes(inputs.bodyBytes);
  const failedIndexStoredGb = (failures * (inputs.ttlDays / DAYS_PER_MONTH) * (failedBytes + ITEM_OVERHEAD_BYTES)) / GB;
  const memoryItem = replayMemoryBytes();
  const memoryStoredGb = (remembered * inputs.replayMemoryMonths * (memoryItem + ITEM_OVERHEAD_BYTES)) / GB;
  const memoryWrites = remembered * units(memoryItem);
  // A strongly consistent read of an item under 4 KB is one read unit.
  const memoryReads = remembered;

  // Invocations and GB-seconds.
  const rpIngestGbs =
    gbs(fresh - remembered, inputs.overheadMs + req.newDelivery * inputs.dynamoMs + inputs.sqsMs) +
    gbs(remembered, inputs.overheadMs + (req.newDelivery + 1) * inputs.dynamoMs + inputs.sqsMs) +
    gbs(dup, inputs.overheadMs + req.duplicate * inputs.dynamoMs);
  const ptIngestGbs = gbs(fresh, inputs.overheadMs + 2 * inputs.dynamoMs + inputs.sqsMs) + gbs(dup, inputs.overheadMs + inputs.dynamoMs);
  const batches = fresh / inputs.batchFill;
  // Records of a batch run concurrently: an invocation lasts about one record's time.
  const rpExecutorGbs = gbs(batches, inputs.overheadMs + req.execution * inputs.dynamoMs + inputs.actionMs);
  const ptExecutorGbs = gbs(batches, inputs.overheadMs + 2 * inputs.dynamoMs + inputs.actionMs);

  // Write request units, GSI copies included: each phase of a new delivery's life, and each duplicate.
  const rpWrites = fresh * writeUnits.newDeliveryLife + dup * writeUnits.duplicate;
  const ptWrites = fresh * 2 * units(pt) + dup * units(pt) + fresh * 2 * units(pt);
  // Read request units: the reconciler's window, read again every run, and the executor's route-state reads.
  const rpReads =
    fresh * readUnits.windowReadsPerDelivery * readUnits.windowReadUnitsPerRecordRead +
    batches * readUnits.routeStateReadsPerBatch +
    readUnits.runsPerMonth * readUnits.fixedUnitsPerRun;

  // Storage over the TTL: the record and its small index copy (a completed delivery has no log item); PITR on retryproof's table.
  const keptMonths = inputs.ttlDays / DAYS_PER_MONTH;
  const rpStoredGb = (fresh * keptMonths * (rec + idx + 2 * ITEM_OVERHEAD_BYTES)) / GB;
  const ptStoredGb = (fresh * keptMonths * 2 * (pt + ITEM_OVERHEAD_BYTES)) / GB;

  // SQS: one send per new delivery; the event source receives and deletes in batches, and polls when idle.
  const sqsRequests = fresh + 2 * batches + inputs.idlePollsPerMonth;
  // Issue 23: what routes on queues of their own, and rate limits, add.
  const isolation = isolationOf(inputs, fresh, gbs);
  // Issue 24: the S3 claim check of the large bodies.
  const claimCheck = claimCheckOf(inputs, { deliveries: n, fresh, refusals: isolation.gate.refusals, failures }, gbs);
  const largePercent = `${(inputs.largeBodyShare * 100).toFixed(1)}%`;
  const largeSize = `${inputs.largeBodyMib.toFixed(2)} MiB`;

  const coreLines: Omit<CostLine, 'powertoolsHttp' | 'observability'>[] = [
    {
      item: 'API Gateway',
      retryproof: tiered(PRICES.httpApiRequests, n),
      powertools: tiered(PRICES.restApiRequests, n),
      basis: 'every delivery, duplicates included: HTTP API vs REST API',
    },
    {
      item: 'Lambda requests',
      retryproof: (n + batches) * PRICES.lambdaRequests.usd,
      powertools: (n + batches) * PRICES.lambdaRequests.usd,
      basis: 'ingest per delivery, executor per batch',
    },
    {
      item: 'Lambda GB-seconds (arm64)',
      retryproof: tiered(PRICES.lambdaArmGbSecond, rpIngestGbs + rpExecutorGbs),
      powertools: tiered(PRICES.lambdaArmGbSecond, ptIngestGbs + ptExecutorGbs),
      basis: `${inputs.memoryMb} MB; durations from request counts x in-region request times, plus the action`,
    },
    {
      item: 'DynamoDB writes',
      retryproof: rpWrites * PRICES.dynamoWriteUnit.usd,
      powertools: ptWrites * PRICES.dynamoWriteUnit.usd,
      basis:
        `1 KB units; retryproof ${writeUnits.newDeliveryLife} per new delivery's life, ${writeUnits.duplicate} per duplicate ` +
        `(record ${rec} B, its GSI copy ${idx} B; log items only for attempts that did not complete); Powertools ${4 * units(pt)} and ${units(pt)} (record ${pt} B)`,
    },
    {
      item: 'DynamoDB reads',
      retryproof: rpReads * PRICES.dynamoReadUnit.usd,
      powertools: 0,
      basis:
        `retryproof: the hourly reconciler reads each record's ${idx} B index copy ${readUnits.windowReadsPerDelivery} times ` +
        `(${(readUnits.windowReadsPerDelivery * readUnits.windowReadUnitsPerRecordRead).toFixed(2)} units), the executor a route state per batch; Powertools reads nothing`,
    },
    {
      item: 'DynamoDB storage (+PITR)',
      retryproof: rpStoredGb * (PRICES.dynamoStorage.usd + PRICES.dynamoPitr.usd),
      powertools: ptStoredGb * PRICES.dynamoStorage.usd,
      basis: `steady state over a ${inputs.ttlDays}-day TTL; TTL deletes are free`,
    },
    {
      // Protocol v3 (issue 21): the replay memory of the routes that sign no timestamp, a line of its own.
      item: 'DynamoDB replay memory',
      retryproof: memoryWrites * PRICES.dynamoWriteUnit.usd + memoryReads * PRICES.dynamoReadUnit.usd + memoryStoredGb * (PRICES.dynamoStorage.usd + PRICES.dynamoPitr.usd),
      powertools: 0,
      basis:
        `${(inputs.replayMemoryShare * 100).toFixed(0)}% of new deliveries on GitHub/Shopify/hmac-sha256 routes: 1 read unit (the ingest's check) and 1 write unit (the worker's) each, ` +
        `${memoryItem + ITEM_OVERHEAD_BYTES} B kept for good (no TTL; +PITR), ${inputs.replayMemoryMonths} months held (${memoryStoredGb.toFixed(3)} GB); Powertools keeps none`,
    },
    {
      // Issue 23: the bulk redrive's index. Failures only: the hot path never writes it.
      item: 'DynamoDB failed index',
      retryproof:
        failures * 2 * units(failedBytes) * PRICES.dynamoWriteUnit.usd + failedIndexStoredGb * (PRICES.dynamoStorage.usd + PRICES.dynamoPitr.usd),
      powertools: 0,
      basis:
        `${(inputs.failureShare * 100).toFixed(2)}% of new deliveries fail for good (${Math.round(failures).toLocaleString('en-US')} a month): each enters the sparse failed index ` +
        `(an ALL copy of ${failedBytes} B, ${units(failedBytes)} write units) and leaves it when redriven (as many again); held for the TTL at most (${failedIndexStoredGb.toFixed(3)} GB); ` +
        'the hot path writes none of it; Powertools keeps no such index',
    },
    {
      item: 'SQS requests',
      retryproof: sqsRequests * PRICES.sqsRequests.usd,
      powertools: sqsRequests * PRICES.sqsRequests.usd,
      basis: `send per new delivery, receive+delete per batch of ${inputs.batchFill}, idle long polls`,
    },
    {
      // Issue 23: each route queue's event source polls it all month, as the shared queue's does.
      item: 'SQS route queues',
      retryproof: isolation.pollsPerMonth * PRICES.sqsRequests.usd,
      powertools: 0,
      basis:
        `${inputs.isolatedRoutes} route${inputs.isolatedRoutes === 1 ? '' : 's'} on a queue of its own, each polled by its event source all month, busy or idle: ` +
        `${IDLE_POLLERS_PER_QUEUE} pollers (maximum concurrency is set, so Lambda's idle optimisation to 2 is off) x ${60 / LONG_POLL_SECONDS} long polls of ${LONG_POLL_SECONDS} s a minute = ` +
        `${Math.round(inputs.idlePollsPerMonth).toLocaleString('en-US')} receives a queue; their work's own receives are in the line above (a quieter queue's batches fill less: left out); peers none`,
    },
    {
      // Issue 23: the rate gate of the rate-limited routes (the executor's; lambdas/executor).
      item: 'Rate gate',
      retryproof: isolation.gate.usd,
      powertools: 0,
      basis:
        `${(inputs.rateLimitedShare * 100).toFixed(1)}% of new deliveries on rate-limited routes (${Math.round(isolation.gate.admissions).toLocaleString('en-US')} runs), ` +
        `${inputs.deferralsPerRun} refusal${inputs.deferralsPerRun === 1 ? '' : 's'} per run: each run ${inputs.deferralsPerRun > 0 ? '2 write units (the idle form failing, charged, and the busy form taking its slot) and a wait of 1 s for its slot' : '1 write unit (the gate\'s conditional update) and a wait of its lead for its slot'}, each refusal ` +
        `2 (the gate's failed update, charged, and the return slot's reservation) + ${isolation.gate.deferUnits} (the record's defer, ${deferredRecordBytes(inputs.bodyBytes)} B, no index copy) write units, ` +
        `1 delayed SendMessage and its wake-up's share of receive+delete and of an executor invocation (batches of ${inputs.batchFill}): ` +
        `${Math.round(isolation.gate.writeUnits).toLocaleString('en-US')} write units, ${Math.round(isolation.gate.delayedSends).toLocaleString('en-US')} delayed sends; peers none`,
    },
    {
      // Issue 24: the bucket's requests, and the ingest's and the executor's waits for them.
      item: 'S3 claim check requests',
      retryproof: claimCheck.usd.requests,
      powertools: 0,
      basis:
        `${largePercent} of deliveries with a body above ${CLAIM_CHECK_ABOVE_BYTES / 1024} KiB (${largeSize} on average): ` +
        `${Math.round(claimCheck.requests.put).toLocaleString('en-US')} PUTs (every copy, a duplicate's refused 412) ${usd4(claimCheck.usd.put)}, ` +
        `${Math.round(claimCheck.requests.get).toLocaleString('en-US')} GETs (every receive: first runs, wake-ups, a failure's attempts, dead-letter hand-backs and redrive) ${usd4(claimCheck.usd.get)}, ` +
        `${Math.round(claimCheck.requests.head).toLocaleString('en-US')} HEADs (redrives) ${usd4(claimCheck.usd.head)}, ` +
        `${Math.round(claimCheck.requests.copy).toLocaleString('en-US')} renewal COPYs (${(inputs.largeRenewalShare * 100).toFixed(1)}% of objects) ${usd4(claimCheck.usd.copy)}, ` +
        `Lambda waiting ${inputs.s3Ms} ms for each PUT and GET ${usd4(claimCheck.usd.lambda)}; in-Region transfer free; peers none (their work message carries at most SQS's 256 KiB: such a body needs a claim check of its own, not priced)`,
    },
    {
      item: 'S3 claim check storage',
      retryproof: claimCheck.usd.storage,
      powertools: 0,
      basis:
        `${Math.round(claimCheck.objects).toLocaleString('en-US')} objects a month (one per new large delivery) of ${largeSize}, each kept the bucket's lifecycle of ` +
        `${claimCheck.lifeDays} days at a ${inputs.ttlDays}-day TTL (+0.5 for S3's rounding to midnight UTC), completed or not: ${claimCheck.storedGb.toFixed(1)} GB-months, S3 Standard; expiry is free`,
    },
  ];
  const lines: CostLine[] = coreLines.map((l) => ({
    ...l,
    powertoolsHttp: l.item === 'API Gateway' ? tiered(PRICES.httpApiRequests, n) : l.powertools,
    observability: false,
  }));

  // Issue 26: what the receiver pays to be watched, from the measured log bytes (bench/log-bytes.json).
  const traffic: TrafficShape = {
    deliveriesPerMonth: n,
    duplicateShare: inputs.duplicateShare,
    batchFill: inputs.batchFill,
    reconcilerRunsPerMonth: readUnits.runsPerMonth,
  };
  const stack = figures.current.stack;
  if (stack === undefined) throw new Error('bench/log-bytes.json has no stack inventory: run npx node bench/log-bytes.ts --write');
  const observabilityLines = (m: LogBytesMeasurement): CostLine[] => {
    const bytes = logBytesPerDelivery(m, traffic);
    const peer = peerLogBytesPerDelivery(figures, traffic);
    const retentionMonths = inputs.logRetentionDays / DAYS_PER_MONTH;
    const ingestGb = (b: number): number => (b * n) / 1e9;
    // CloudWatch Logs keeps a month's lines for the retention, compressed (gzip of the measured lines stands in for its ratio).
    const storedGb = (b: number): number => ingestGb(b) * retentionMonths * m.compressionRatio;
    const customMetrics = customMetricCount(m, stack.routes);
    const invocations = { ingest: n, executor: batches, reconciler: readUnits.runsPerMonth };
    const tracesIfTraced = tracesRecorded(invocations.ingest) + tracesRecorded(invocations.executor) + tracesRecorded(invocations.reconciler);
    const traces = stack.tracedFunctions === 0 ? 0 : tracesIfTraced;
    const secretCalls = stack.secrets * inputs.warmIngestInstances * (SECONDS_PER_MONTH / 60);
    const share = (source: string): string =>
      bytes.shares
        .filter((x) => x.source === source)
        .map((x) => `${x.kind} ${x.bytesPerDelivery.toFixed(x.bytesPerDelivery < 1 ? 2 : 0)}`)
        .join(', ');
    return [
      {
        item: 'CloudWatch Logs ingestion',
        retryproof: ingestGb(bytes.total) * PRICES.logsIngestion.usd,
        powertools: ingestGb(peer.total) * PRICES.logsIngestion.usd,
        powertoolsHttp: ingestGb(peer.total) * PRICES.logsIngestion.usd,
        basis:
          `measured bytes per delivery (bench/log-bytes.json, ${m.measuredOn}): retryproof ${bytes.total.toFixed(0)} = ` +
          `ingest ${bytes.bySource.ingest.toFixed(0)} (${share('ingest')}), executor ${bytes.bySource.executor.toFixed(0)} (${share('executor')}), ` +
          `reconciler ${bytes.bySource.reconciler.toFixed(2)}, access log ${bytes.bySource.api.toFixed(0)}; ` +
          `peers ${peer.total.toFixed(0)} (Lambda's lines + one Powertools line per invocation + the access log)`,
        observability: true,
      },
      {
        item: 'CloudWatch Logs storage',
        retryproof: storedGb(bytes.total) * PRICES.logsStorage.usd,
        powertools: storedGb(peer.total) * PRICES.logsStorage.usd,
        powertoolsHttp: storedGb(peer.total) * PRICES.logsStorage.usd,
        basis: `${inputs.logRetentionDays}-day retention (every log group, peers too), compressed to ${(m.compressionRatio * 100).toFixed(1)}% (gzip of the measured lines)`,
        observability: true,
      },
      {
        item: 'CloudWatch custom metrics',
        retryproof: customMetrics * PRICES.customMetric.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis:
          `${customMetrics} metric streams the functions emitted on the happy path (${stack.routes} route${stack.routes === 1 ? '' : 's'}; ` +
          `streams seen only in some hours, such as 4xx answers or DLQ arrivals, are billed by the hour and left out); peers emit none`,
        observability: true,
      },
      {
        item: 'CloudWatch alarms',
        retryproof: stack.alarmMetrics * PRICES.alarmMetric.usd,
        powertools: PEER_ALARM_METRICS * PRICES.alarmMetric.usd,
        powertoolsHttp: PEER_ALARM_METRICS * PRICES.alarmMetric.usd,
        basis: `${stack.alarms} alarms reading ${stack.alarmMetrics} metrics (the synthesized template); peers ${PEER_ALARM_METRICS}: errors and throttles of both functions, the DLQ`,
        observability: true,
      },
      {
        // Issue 23: the alarms of the route queues, beyond the stack inventory's (which has none).
        item: 'CloudWatch alarms, route queues',
        retryproof: isolation.alarmMetrics * PRICES.alarmMetric.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis:
          `${inputs.isolatedRoutes} oldest-message alarm${inputs.isolatedRoutes === 1 ? '' : 's'} (${ROUTE_QUEUE_ALARM_METRICS.oldestMessage} metric each) ` +
          `and ${inputs.rateLimitedRoutes} backlog alarm${inputs.rateLimitedRoutes === 1 ? '' : 's'} of rate-limited routes (${ROUTE_QUEUE_ALARM_METRICS.backlog} metrics each): ` +
          `${isolation.alarmMetrics} alarm metrics; their dashboard widgets cost nothing more; peers none`,
        observability: true,
      },
      {
        item: 'CloudWatch dashboard',
        retryproof: stack.dashboards * PRICES.dashboard.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis: `${stack.dashboards} dashboard; peers none`,
        observability: true,
      },
      {
        item: 'X-Ray traces',
        retryproof: traces * PRICES.xrayTraces.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis:
          stack.tracedFunctions === 0
            ? `tracing off (the default); \`tracing: true\` traces the 3 functions under the default sampling (1 a second + 5%): ` +
              `${(tracesIfTraced / 1e6).toFixed(2)} M traces, $${(tracesIfTraced * PRICES.xrayTraces.usd).toFixed(2)} a month, traffic spread evenly (an upper bound); peers none`
            : `${stack.tracedFunctions} functions with active tracing, default sampling (1 a second + 5%): ${(traces / 1e6).toFixed(2)} M traces, ` +
              `traffic spread evenly (an upper bound); peers none`,
        observability: true,
      },
      {
        item: 'KMS',
        retryproof: stack.kmsKeys * PRICES.kmsKey.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis: `${stack.kmsKeys} customer-managed key (the alarm topic's); its requests (alarm notifications) and the AWS-managed table key's are left out`,
        observability: true,
      },
      {
        item: 'Secrets Manager',
        retryproof: stack.secrets * PRICES.secret.usd + secretCalls * PRICES.secretsApiCall.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis: `${stack.secrets} route secret, read once a minute by each of ${inputs.warmIngestInstances} warm ingest instances (60 s cache): ${Math.round(secretCalls).toLocaleString('en-US')} calls`,
        observability: true,
      },
      {
        item: 'EventBridge Scheduler',
        retryproof: stack.schedules * readUnits.runsPerMonth * PRICES.schedulerInvocation.usd,
        powertools: 0,
        powertoolsHttp: 0,
        basis: `${Math.round(readUnits.runsPerMonth)} reconciler runs a month`,
        observability: true,
      },
    ];
  };
  const observed = observabilityLines(figures.current);
  const sum = (ls: readonly CostLine[], key: keyof Totals): number => ls.reduce((total, l) => total + l[key], 0);
  const totalsOf = (ls: readonly CostLine[]): Totals => ({ retryproof: sum(ls, 'retryproof'), powertools: sum(ls, 'powertools'), powertoolsHttp: sum(ls, 'powertoolsHttp') });
  const core = totalsOf(lines);
  const obs = totalsOf(observed);
  const totals = totalsOf([...lines, ...observed]);
  const beforeCutBill = core.retryproof + sum(observabilityLines(figures.beforeCut), 'retryproof');
  const perMillion = (v: number): number => (n === 0 ? 0 : (v / n) * 1e6);
  const customMetrics = customMetricCount(figures.current, stack.routes);
  const tracesPerMonth = stack.tracedFunctions === 0 ? 0 : tracesRecorded(n) + tracesRecorded(batches) + tracesRecorded(readUnits.runsPerMonth);
  return {
    inputs,
    lines: [...lines, ...observed],
    totals,
    core,
    observability: { ...obs, retryproofShare: totals.retryproof === 0 ? 0 : obs.retryproof / totals.retryproof },
    perMillionDeliveries: { retryproof: perMillion(totals.retryproof), powertools: perMillion(totals.powertools), powertoolsHttp: perMillion(totals.powertoolsHttp) },
    ratios: {
      toPowertoolsRest: totals.powertools === 0 ? null : totals.retryproof / totals.powertools,
      toPowertoolsHttp: totals.powertoolsHttp === 0 ? null : totals.retryproof / totals.powertoolsHttp,
    },
    goalRatioToPowertoolsHttp: 1,
    logCut: {
      before: { bill: beforeCutBill, logBytesPerDelivery: logBytesPerDelivery(figures.beforeCut, traffic) },
      after: { bill: totals.retryproof, logBytesPerDelivery: logBytesPerDelivery(figures.current, traffic) },
    },
    peerLogBytesPerDelivery: peerLogBytesPerDelivery(figures, traffic),
    metrics: {
      customMetrics,
      alarmMetrics: stack.alarmMetrics,
      tracesPerMonth,
      secretsApiCalls: stack.secrets * inputs.warmIngestInstances * (SECONDS_PER_MONTH / 60),
    },
    stack,
    hostedGateways: HOSTED_GATEWAYS,
    usage: {
      apiRequests: { retryproof: n, powertools: n },
      lambdaInvocations: { retryproof: n + batches, powertools: n + batches },
      lambdaGbSeconds: { retryproof: rpIngestGbs + rpExecutorGbs, powertools: ptIngestGbs + ptExecutorGbs },
      dynamoWriteUnits: { retryproof: rpWrites + memoryWrites, powertools: ptWrites },
      dynamoReadUnits: { retryproof: rpReads + memoryReads, powertools: 0 },
      dynamoStoredGb: { retryproof: rpStoredGb + memoryStoredGb, powertools: ptStoredGb },
      sqsRequests: { retryproof: sqsRequests, powertools: sqsRequests },
    },
    itemBytes: { retryproofRecord: rec, retryproofLog: log, powertoolsRecord: pt },
    isolation,
    claimCheck,
  };
}
