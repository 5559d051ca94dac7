/**
 * A month of retryproof on AWS against the benchmarked Powertools receiver behind an API
 * Gateway REST API, from list prices and the request counts `npm run bench` measures.
 * Pure arithmetic: no AWS call, no network. Every assumption is a named input or a
 * constant with its source.
 */
import type { EventRecord } from '../lambdas/domain/event-record.ts';
import { toRecordItem } from '../lambdas/store/record-item.ts';
import { logSortKey } from '../lambdas/store/dynamodb-execution-store.ts';
import { seenKey } from '../lambdas/store/replay-memory.ts';
import { EVENTS_TABLE } from '../lambdas/store/table-schema.ts';

/** When the prices below were written down. They are not fetched: check them before you rely on them. */
export const PRICES_TAKEN = '2026-11-29';

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
} as const satisfies Record<string, Price | TieredPrice>;

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
  /** SQS receives the event source makes while the queue is empty: 5 pollers, 20 s long polls. */
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
  idlePollsPerMonth: 5 * 3 * 60 * 24 * 30.4375,
  replayMemoryShare: 0,
  replayMemoryMonths: 12,
};

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
  answered: Record<string, unknown>;
  leased: Record<string, unknown>;
  completed: Record<string, unknown>;
} {
  const now = Date.UTC(2026, 0, 1);
  const claimed = claimedRecordItem(bodyBytes);
  // Protocol v3 (issue 21): markAnswered, the last write before the 202, starts the breaker's count.
  const answered = { ...claimed, repeatBase: 1, answeredAt: now };
  const leased = { ...answered, status: 'EXECUTING', leaseUntil: now, leaseToken: SAMPLE_KEY, claimedAt: now, attempts: 1, runs: 1 };
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
  return { claimed, answered, leased, completed };
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
  // Protocol v3 (issue 21): the claim writes no repeatBase (markAnswered does) and carries its claimId nonce.
  const { repeatBase: _markedLater, ...item } = toRecordItem(record);
  return { ...item, claimId: '2f1c7e0a-5b9d-4a51-9f3e-1c2d3e4f5a6b' };
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
  const { claimed, answered, leased, completed } = recordItemsOf(bodyBytes);
  const write = (before: Record<string, unknown> | undefined, after: Record<string, unknown>): PhaseUnits => {
    const table = units(Math.max(before === undefined ? 0 : itemBytes(before), itemBytes(after)));
    const copyBefore = before === undefined ? undefined : JSON.stringify(indexCopyOf(before));
    const index = copyBefore === JSON.stringify(indexCopyOf(after)) ? 0 : units(itemBytes(indexCopyOf(after)));
    return { table, index };
  };
  // A duplicate's claim adds 1 to hits (not projected) and sets nothing that is absent.
  const duplicateOf = { ...completed, hits: 2 };
  // Protocol v3 (issue 21): a new delivery's ingest makes two writes, the claim and markAnswered; one phase.
  const claim = write(undefined, claimed);
  const mark = write(claimed, answered);
  const phases = {
    claim: { table: claim.table + mark.table, index: claim.index + mark.index },
    lease: ((lease) => ({ table: lease.table + (options.replayMemory === true ? units(replayMemoryBytes()) : 0), index: lease.index }))(write(answered, leased)),
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
  /** The claim, and markAnswered before the 202 (protocol v3, issue 21: the breaker counts only copies after an answer). */
  newDelivery: 2,
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


export interface CostLine {
  readonly item: string;
  readonly retryproof: number;
  readonly powertools: number;
  readonly basis: string;
}

export interface CostReport {
  readonly inputs: CostInputs;
  readonly lines: readonly CostLine[];
  readonly totals: { readonly retryproof: number; readonly powertools: number };
  readonly perMillionDeliveries: { readonly retryproof: number; readonly powertools: number };
  readonly usage: Record<string, { readonly retryproof: number; readonly powertools: number }>;
  readonly itemBytes: { readonly retryproofRecord: number; readonly retryproofLog: number; readonly powertoolsRecord: number };
}

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
export function priceMonth(inputs: CostInputs): CostReport {
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

  const lines: CostLine[] = [
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
      item: 'SQS requests',
      retryproof: sqsRequests * PRICES.sqsRequests.usd,
      powertools: sqsRequests * PRICES.sqsRequests.usd,
      basis: `send per new delivery, receive+delete per batch of ${inputs.batchFill}, idle long polls`,
    },
  ];
  const totals = {
    retryproof: lines.reduce((s, l) => s + l.retryproof, 0),
    powertools: lines.reduce((s, l) => s + l.powertools, 0),
  };
  return {
    inputs,
    lines,
    totals,
    perMillionDeliveries: {
      retryproof: n === 0 ? 0 : (totals.retryproof / n) * 1e6,
      powertools: n === 0 ? 0 : (totals.powertools / n) * 1e6,
    },
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
  };
}
