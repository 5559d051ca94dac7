/**
 * A deterministic simulation of the whole execution protocol: the real ingestDelivery,
 * executor handler, reconciler and route control, on DynamoDB Local, with a simulated clock
 * and a simulated SQS (simulated-sqs.ts). A seed draws a schedule of operations: deliveries
 * and duplicates (one at a time and in bursts), executor invocations, interleavings at every
 * port call, crashes at any of them, clock steps and jumps, reconciler runs, pauses and
 * resumes, DLQ redrives (the console's move task and the CLI's receive-send-delete) and SQS
 * outages. After the schedule, faults stop, the system settles, and invariants are checked.
 * Senders behave as webhook senders do: a key none of whose copies got a 2xx is sent again
 * while settling (a claimed record nobody was answered 2xx for is not accepted yet).
 *
 * The schedule is a list of operations that do not depend on the state (an operation that
 * does not apply is skipped), so a failing schedule shrinks by deleting operations.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { DeleteItemCommand, DeleteTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DeserializeHandler, DeserializeHandlerArguments, HandlerExecutionContext, MetadataBearer } from '@smithy/types';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { SQSEvent, SQSRecord, Context } from 'aws-lambda';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedConfig, ResolvedRateLimit, ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import {
  CLOCK_SKEW_SECONDS,
  COMPLETION_MARGIN_SECONDS,
  DLQ_RETENTION_SECONDS,
  OUTAGE_HORIZON_SECONDS,
  ROUTE_STATE_MAX_AGE_MS,
  backstopReceiveCount,
  dependencyBackoffSeconds,
  leaseMarginSeconds,
  outageReceiveCount,
  takeoverMarginMs,
} from '../../lambdas/config/route-config.ts';
import { SQS_MAX_MESSAGE_BYTES, deadLetterReserveBytes } from '../../lambdas/domain/queue-limits.ts';
import { INGEST_TIMEOUT_SECONDS } from '../../lambdas/config/route-config.ts';
import type { RateLimit, RouteConfig } from '../../lambdas/config/route-config.ts';
import { RECORD_STATUS, deliveryId } from '../../lambdas/domain/event-record.ts';
import type { EventRecord, WorkMessage } from '../../lambdas/domain/event-record.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import { RoutePauseCache } from '../../lambdas/executor/route-pauses.ts';
import { PauseReach } from './pause-reach.ts';
import { ingestDelivery } from '../../lambdas/ingest/ingest-delivery.ts';
import type { IngestDeps } from '../../lambdas/ingest/ingest-delivery.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import type { Ledger } from '../../lambdas/ledger/ledger.ts';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createLogger } from '../../lambdas/observability/powertools.ts';
import { METRICS_NAMESPACE } from '../../lambdas/observability/metric-catalogue.ts';
import { ClaimFailedError } from '../../lambdas/ports/event-store.ts';
import type { IngestEventStore } from '../../lambdas/ports/event-store.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import { defaultWindow, notDueGapMs, sweepOptionsOf } from '../../lambdas/reconciler/create-reconciler.ts';
import { reconcileScheduled } from '../../lambdas/reconciler/reconcile-cursor.ts';
import { DEPLOYED_BUDGET_MS } from '../../lambdas/reconciler/reconciler-budget.ts';
import { bulkRedrive } from '../../lambdas/routes/bulk-redrive.ts';
import { routeControl } from '../../lambdas/routes/route-control.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbExpirySweepStore } from '../../lambdas/store/dynamodb-expiry-sweep-store.ts';
import { DynamoDbFailedRecords } from '../../lambdas/store/dynamodb-failed-records.ts';
import { DynamoDbParkedRecords } from '../../lambdas/store/dynamodb-parked-records.ts';
import { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { createEventsTable } from '../../local/aws-clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { seededRandom } from '../../scripts/storm/storm-plan.ts';
import { countRequests, emptyDynamoFaultStats, faultyDynamoDb } from './faulty-dynamodb.ts';
import type { DynamoFaultPlan } from './faulty-dynamodb.ts';
import { Scheduler } from './scheduler.ts';
import { SimDownstream, SimLedger } from './sim-downstream.ts';
import type { SimLedgerEntry } from './sim-downstream.ts';
import { SimTimers } from './sim-timers.ts';
import type { Actor } from './scheduler.ts';
import { SimInvalidParameterValue, SimMessageVisibility, SimWorkQueue, SimulatedQueue } from './simulated-sqs.ts';
import { FreshBodyWorkQueue } from '../../lambdas/queue/fresh-body-work-queue.ts';
import { bodyObjectLifeDays, bodyObjectRenewAfterSeconds, longestTtlSeconds } from '../../lambdas/domain/body-object.ts';
import { SimBuckets } from './sim-body-objects.ts';
import { type ObservedPlace, ObservedPlaces, checkAcceptedOrder, checkLines, customerOf } from './sim-ordering.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import type { EntityOrder } from '../../lambdas/ports/entity-order.ts';
import type { BodyFaultPlan } from './sim-body-objects.ts';
import type { SimReceivedMessage } from './simulated-sqs.ts';
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import { RoutedWorkQueue } from '../../lambdas/queue/routed-work-queue.ts';
import { DynamoDbRateGate } from '../../lambdas/store/dynamodb-rate-gate.ts';
import type { RateGate } from '../../lambdas/ports/rate-gate.ts';

// ---------------------------------------------------------------------------------------
// The schedule

export const OPS = [
  'deliver',
  'duplicate',
  'burst',
  'poll',
  'step',
  'crash',
  'tick',
  'wait',
  'jump',
  'stall',
  'leap',
  'reconcile',
  'pause',
  'resume',
  'redrive-console',
  'redrive-cli',
  'redrive-bulk',
  'sqs-outage',
  'ddb-brownout',
  'sqs-duplicate',
  'unseen-receive',
  'replay',
  'ttl',
  'edge',
  'slow-lease',
  'crash-after-post',
  'late-redrive',
  'isolate',
] as const;
export type OpName = (typeof OPS)[number];

/** One operation; `a` and `b` in [0, 1) pick among whatever the state offers when it runs. */
export interface Op {
  readonly op: OpName;
  readonly a: number;
  readonly b: number;
}

const WEIGHTS: Readonly<Record<OpName, number>> = {
  deliver: 8,
  duplicate: 9,
  burst: 2.5,
  poll: 20,
  step: 40,
  crash: 3,
  tick: 9,
  wait: 2,
  jump: 1,
  stall: 1,
  leap: 0.15,
  reconcile: 1.2,
  pause: 0.6,
  resume: 0.9,
  'redrive-console': 0.6,
  'redrive-cli': 0.5,
  'redrive-bulk': 0.5,
  'sqs-outage': 0.6,
  'ddb-brownout': 0.6,
  'sqs-duplicate': 3,
  'unseen-receive': 1.5,
  replay: 1.2,
  ttl: 0.5,
  edge: 1.5,
  'slow-lease': 1,
  'crash-after-post': 1,
  'late-redrive': 1.5,
  isolate: 0.6,
};

/** Errors no function may fail with: they are bugs in our code, not what the world did to it. */
const PROGRAMMING_ERRORS = [TypeError, ReferenceError, RangeError, SyntaxError] as const;

/** The writes the eventually consistent control replicates (the protocol makes no batch or transaction writes). */
const WRITE_COMMANDS: ReadonlySet<string> = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

/** The storm's seedable PRNG (mulberry32). */
export const prng = seededRandom;

/** The schedule a seed draws. */
export function scheduleOf(seed: number, length: number): Op[] {
  const random = prng(seed);
  const total = Object.values(WEIGHTS).reduce((s, w) => s + w, 0);
  const ops: Op[] = [];
  for (let i = 0; i < length; i++) {
    let pick = random() * total;
    let op: OpName = 'step';
    for (const name of OPS) {
      pick -= WEIGHTS[name];
      if (pick < 0) {
        op = name;
        break;
      }
    }
    ops.push({ op, a: random(), b: random() });
  }
  return ops;
}

/**
 * The pay route's rate limits a seed may draw: a start every 0.5 s (slots within the window a
 * run waits in its invocation, so most wait there, and a slow write or a clock leap makes one
 * late), every 15, 60 or 120 s, against actions of up to 15 s, or every 30 minutes, past SQS's
 * longest delay (900 s), where waiting work comes back and is deferred again several times
 * before its turn.
 */
const RATE_LIMITS: readonly RateLimit[] = [{ perSecond: 2 }, { perMinute: 4 }, { perMinute: 1 }, { perHour: 30 }, { perHour: 2 }];

/** Per-run settings drawn from the seed: some runs have a visibility timeout shorter than the lease, as the local stack does. */
export interface RunShape {
  /** The pay route's rate limit and whether its work has a queue of its own; undefined: no limit. */
  readonly rate?: { readonly limit: RateLimit; readonly ownQueue: boolean };
  readonly visibilityTimeoutSeconds: number;
  readonly keys: number;
  readonly moveTaskResetsReceiveCount: boolean;
  /** DynamoDB's faults per attempt, as the SDK meets them; a brownout raises them for a while. */
  readonly dynamo: DynamoFaultPlan;
  /** The chance that a poll's receive may also hand out a message another worker holds. */
  readonly concurrentReceive: number;
  /** The event source's batch size (the stack's default is 10). */
  readonly batchSize: number;
  /**
   * A run of weeks: each `leap` is days to weeks long, and the run lasts past 40 days, past the
   * records' TTL (35 days, or 19 with shortTtl) and the queues' retention (14 days). A tenth of
   * the seeds, and a quarter of the others that draw shortTtl.
   */
  readonly long: boolean;
  /**
   * Receivers in this many Regions, each with its own queues and functions, on one table (or,
   * in the eventually consistent control, a table each): 1 or 2, drawn apart from the rest.
   */
  readonly regions: number;
  /** The eventually consistent control's replication lag, ms ("typically within a second"). */
  readonly replicationLagMs: number;
  /**
   * The S3 claim check (issue 24): every route sends every body to the bucket (`all`), or only
   * bodies over 128 KiB and those SQS cannot carry; and S3's failures, per call.
   */
  readonly claimCheck: { readonly all: boolean; readonly faults: BodyFaultPlan };
  /**
   * Every route's TTL is the shortest whole number of days its cover allows (the check synth
   * applies: sender retry window + DLQ retention + reconciliation window + lease; 19 days for
   * the Standard Webhooks route), not the default 35. The bucket's lifecycle and the renewal
   * threshold are computed from the longest TTL (domain/body-object.ts), so in a run of weeks
   * objects reach the ages where they are renewed, and where they expire, within its horizon.
   */
  readonly shortTtl: boolean;
  /**
   * In a run of weeks, the person at the DLQ comes on the last day of its oldest copy, each time,
   * through the quiet weeks at its end (not only now and then): work that fails again after each
   * redrive makes a new copy, and a chain of them spans the whole run, each read of its body
   * object 13 or 14 days after the last. Each redrive is the console's move task or the CLI's
   * receive-send-delete, drawn per redrive.
   */
  readonly lastDayRedrives: boolean;
  /** The run is long only for its short TTL (see shapeOf): noRateLimit makes it short again. */
  readonly longForShortTtl: boolean;
  /**
   * The pay route is ordered per entity (issue 24): `orderBy: '{body:/customer}'`, its keys shared
   * among SIM_CUSTOMERS customers, so lines form behind heads that retry, fail, park and are redriven.
   */
  readonly ordered: boolean;
  /**
   * The byTime index's partitions an hour (record-keys.ts): a deployment's 8 in a quarter of the
   * seeds, 2 in a quarter and 1 in half. The protocol is the same for any count (the writers and
   * the reader agree on it); only the number of window Queries changes, and with 8 they were 88 %
   * of a seed's DynamoDB requests (25 hours × 8 shards a reconciler run, nearly all empty), so a
   * seed costs about half as much with 1. The 8 of a deployment keep a quarter of the seeds and
   * the reconciler's own tests (test/reconciler/reconciler-window.test.ts).
   */
  readonly timeShards: number;
  /**
   * In a run of weeks with an ordered pay route: that route is paused from the start to the
   * settle, longer than its records' TTL, so every place its work took must outlive the pause
   * (issue 43, defect 2). The schedule's own pauses and resumes then touch the other route.
   */
  readonly longPause: boolean;
}

/** A DynamoDB brownout: most attempts throttled, failing or slow, so some calls exhaust the SDK's attempts. */
const BROWNOUT: DynamoFaultPlan = { ambiguous: 0.08, throttle: 0.45, beforeCommit: 0.15, slow: 0.25 };
/**
 * An isolated Region: its replica cannot reach the others, so its writes and strongly consistent
 * reads fail (an MRSC replica cut off from the quorum serves only eventually consistent reads,
 * Developer Guide, "How DynamoDB global tables work"); a few commit on the quorum and lose their answer.
 */
const ISOLATED: DynamoFaultPlan = { ambiguous: 0.05, throttle: 0, beforeCommit: 0.9, slow: 0.05 };

export function shapeOf(seed: number): RunShape {
  const random = prng(seed ^ 0x5eed);
  const level = (values: readonly number[]): number => values[Math.floor(random() * values.length)] ?? 0;
  const shape = {
    visibilityTimeoutSeconds: random() < 0.5 ? 1 + Math.floor(random() * 5) : 150,
    keys: 4 + Math.floor(random() * 8),
    moveTaskResetsReceiveCount: random() < 0.7,
    dynamo: { ambiguous: level([0.01, 0.03, 0.08, 0.15]), throttle: level([0, 0.02, 0.06]), beforeCommit: level([0, 0.01, 0.03]) },
    concurrentReceive: level([0, 0.05, 0.15]),
    batchSize: level([1, 3, 10, 10]),
    long: random() < 0.1,
  };
  // Drawn last, so that every other part of a seed's shape is what it was before slow answers.
  const slow = level([0, 0.01, 0.03, 0.06]);
  // Regions from a stream of their own: the rest of a seed's shape is what it was before them.
  const regional = prng(seed ^ 0x2e610);
  const regions = regional() < 0.6 ? 2 : 1;
  const replicationLagMs = [500, 1_000, 5_000][Math.floor(regional() * 3)] ?? 1_000;
  // Writes of two Regions to one item meet now and then: a conflict the SDK retries.
  const conflict = regions > 1 ? [0.005, 0.02][Math.floor(regional() * 2)] ?? 0.005 : 0;
  // A rate limit from a stream of its own too: half the seeds limit the pay route, half of those
  // give it a queue of its own (issue 23).
  const rated = prng(seed ^ 0x7a7e);
  const rate = rated() < 0.5 ? { limit: RATE_LIMITS[Math.floor(rated() * RATE_LIMITS.length)] ?? { perMinute: 4 }, ownQueue: rated() < 0.5 } : undefined;
  // The claim check from a stream of its own too (issue 24).
  const checked = prng(seed ^ 0xb0d7);
  const claimCheck = {
    all: checked() < 0.5,
    faults: { fails: [0, 0.02, 0.06][Math.floor(checked() * 3)] ?? 0, lostAnswer: [0, 0.02, 0.05][Math.floor(checked() * 3)] ?? 0 },
  };
  // The TTL and the last-day redrives from a stream of their own too: the rest of a seed's shape
  // and its schedule are what they were before them. A seed with the short TTL runs for weeks
  // more often (a quarter of those that would not): the ages where its objects are renewed and
  // expire come within weeks, and only a run of weeks gets there.
  const aged = prng(seed ^ 0x77d1);
  const shortTtl = aged() < 0.4;
  const lastDayRedrives = aged() < 0.6;
  const longForShortTtl = !shape.long && shortTtl && aged() < 0.25;
  const long = shape.long || longForShortTtl;
  // Ordering per entity from a stream of its own too: a seed that does not draw it is as it was.
  const ordered = prng(seed ^ 0x0de7)() < 0.5;
  // And the byTime partitions.
  const timeShards = [1, 1, 2, EVENTS_TABLE.timeShards][Math.floor(prng(seed ^ 0x7135)() * 4)] ?? 1;
  // And the pause longer than a place lives.
  const longPause = long && ordered && prng(seed ^ 0x1a05e)() < 0.4;
  return { ...shape, long, dynamo: { ...shape.dynamo, slow, conflict }, regions, replicationLagMs, rate, claimCheck, shortTtl, lastDayRedrives, longForShortTtl, ordered, timeShards, longPause };
}

// ---------------------------------------------------------------------------------------
// The world of one run

/** Where the runs' tables live: DynamoDB Local. Each run creates its own tables there, and drops them. */
export interface SimulationEnv {
  readonly endpoint: string;
}

/** How unkind a run's world is beyond what the seed draws. */
export interface RunOptions {
  /**
   * Each actor's clock is off true time by up to this many times the protocol's bound
   * (CLOCK_SKEW_SECONDS). Above 1 the bound is broken, and an invariant must break. @default 1
   */
  readonly skewFactor?: number;
  /** Regions, 1 to 3, instead of the seed's draw. */
  readonly regions?: number;
  /**
   * The events table across the Regions. 'strong': one linearizable table, as MRSC gives (the
   * design). 'eventual': the control, MREC as DynamoDB documents it: a table per Region, each
   * write replicated to the others after a lag, conflicts settled by last writer wins. The
   * control must show double effects: the evidence for refusing MREC at synth. @default 'strong'
   */
  readonly consistency?: 'strong' | 'eventual';
  /**
   * Leaves the pay route unlimited, every route at the default TTL (a run long for its short TTL
   * only is short again) and no last-day redrives, whatever the seed draws: for seeds picked
   * before rate limits and short TTLs were drawn (the skew test's), whose schedules then run as
   * they were picked. @default false
   */
  readonly noRateLimit?: boolean;
}

interface SimulationTables {
  readonly dynamo: DynamoDBClient;
  /** Region 0's table: the observer's and the invariants' (the tables agree once replicated). */
  readonly eventsTable: string;
  /** Each Region's table: one table for all under strong consistency. */
  readonly regionTables: readonly string[];
}

let tableCounter = 0;

/** A client on DynamoDB Local whose requests the scheduler counts per actor. */
function simulationClient(env: SimulationEnv, sched: Scheduler): DynamoDBClient {
  const client = new DynamoDBClient({ endpoint: env.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  countRequests(client, sched);
  return client;
}

export interface RunStats {
  steps: number;
  deliveries: number;
  executions: number;
  crashes: number;
  /** Runs whose ordered pay route was paused from the start to the settle (RunShape.longPause). */
  longPauses: number;
  /** Action errors whose text held a character SQS refuses. */
  refusedCharErrors: number;
  /** Ingests killed after their send and before their place in an ordered line. */
  killedBeforePlace: number;
  /** Keys marked as having tripped the circuit breaker (each checked against its first 2xx). */
  breakerTrips: number;
  timeouts: number;
  redrives: number;
  reconcilerRuns: number;
  /** Reconciler runs that went on with a window an earlier run left unfinished (the cursor). */
  reconcilerResumes: number;
  /** Reconciler runs that found the cursor held by another run and did nothing. */
  reconcilerSkips: number;
  pauses: number;
  resumes: number;
  /** Runs with a rate-limited route (1), and those whose route had a queue of its own (1). */
  rateLimitedRuns: number;
  ownQueueRuns: number;
  /** The rate gate's admissions, and the runs it deferred (a delayed wake-up each). */
  rateAdmissions: number;
  rateDeferrals: number;
  /** Admitted runs ready too late for their start slot, which gave it up (deferLeased). */
  rateSlotsMissed: number;
  /** Runs whose every route sends every body to the bucket (claimCheckAboveBytes 0) (1). */
  claimCheckAllRuns: number;
  /** Bodies stored in a bucket (the S3 claim check), reads of them by workers, renewals, and S3's failures met. */
  bodyObjectsStored: number;
  bodyReads: number;
  bodyRenewals: number;
  bodyFaults: number;
  /**
   * Workers' reads of a body object last written longer ago than the routes' longest TTL, and the
   * oldest object read, in days (a maximum over runs): how far past the TTL the runs reach the
   * bucket's lifecycle, which must cover every message that points to an object.
   */
  bodyReadsPastTtl: number;
  oldestBodyReadDays: number;
  /** Runs whose routes have the shortest TTL their cover allows (1). */
  shortTtlRuns: number;
  /** Runs whose table has a deployment's byTime partitions an hour (EVENTS_TABLE.timeShards) (1). */
  deployedShardRuns: number;
  /** Runs whose pay route is ordered per entity (1); lines with two records that ran, and pairs of them checked for order. */
  orderedRuns: number;
  linesChecked: number;
  orderedPairs: number;
  /** Records parked in their line to wait for their turn (the executor's waiting-turn outcome). */
  waitingTurns: number;
  /** A person's bulk redrives (`retryproof redrive`), and the records they took back. */
  bulkRedrives: number;
  bulkRedriven: number;
  outages: number;
  clockJumps: number;
  /** Stalls of every parked invocation past a lease, within the Lambda timeout. */
  stalls: number;
  /** DynamoDB writes that committed and then answered an error the SDK retried. */
  ambiguousWrites: number;
  /** DynamoDB attempts throttled. */
  throttles: number;
  /** DynamoDB attempts answered seconds after the table acted (or given up on by an abortSignal). */
  slowAnswers: number;
  /** Second copies of an SQS message stored (at-least-once delivery). */
  sqsDuplicates: number;
  /** SQS messages handed to a worker while another held them. */
  concurrentDeliveries: number;
  /** SQS receives nobody saw, that still counted. */
  unseenReceives: number;
  /** Executor batches answered with some, not all, records failed. */
  partialBatches: number;
  /** The largest offset of any actor's clock from true time (a maximum over runs, not a sum). */
  maxClockSkewMs: number;
  /** The run's simulated span in days (a maximum over runs). */
  horizonDays: number;
  /** Captured deliveries re-posted, at any age. */
  replays: number;
  /** Items TTL deleted (late, as DynamoDB does). */
  ttlDeletions: number;
  /** Deliveries whose key header a proxy padded with whitespace. */
  paddedKeyHeaders: number;
  /** Deliveries of bodies at a size limit (the route's, or SQS's once escaped). */
  bodiesAtLimits: number;
  /** Deliveries answered 413 (too large for the route, or for SQS with its dead-letter reserve). */
  refusedTooLarge: number;
  /** Retries re-signed by their sender with a fresh timestamp (Standard Webhooks, Stripe). */
  resignedRetries: number;
  /** Clock moves to within twice the skew bound of a held lease's end, with a second worker polling. */
  edges: number;
  /** Lease writes answered late on purpose, just before a takeover boundary (the slow-lease operation). */
  slowLeases: number;
  /** Workers killed between a ledger post and the effect it was posted for (the crash-after-post operation). */
  cutsAfterPost: number;
  /** Redrives on the last day of a dead-letter copy's retention (the late-redrive operation, and a long run's last-day redrives). */
  lateRedrives: number;
  /** Action runs whose ledger post was apart from the effect (before it, or failed after it). */
  ledgerApartFromEffect: number;
  /** Runs with receivers in several Regions. */
  multiRegionRuns: number;
  /** Deliveries that landed in another Region than the key's first delivery. */
  crossRegionCopies: number;
  /** Writes refused with ReplicatedWriteConflictException (another Region's write met them). */
  replicatedConflicts: number;
  /** Regions cut off from the others for a while. */
  isolations: number;
  /** Writes copied to another Region's table (the eventually consistent control only). */
  replicatedWrites: number;
  /** Keys whose action took effect more often than runs that lost their record can excuse. */
  doubleEffects: number;
  /** Record generations that two runs each took to COMPLETED. */
  doubleCompletions: number;
  /** Claims that created a record while another Region's table held a live one of the key (the control only). */
  doubleClaims: number;
  /** Scheduled runs that found the window finished a moment ago (by another Region's run) and did nothing. */
  reconcilerNotDue: number;
  /** Expired items the reconciler's sweep deleted (several Regions: no TTL). */
  sweptItems: number;
}

/** Stats combined over runs by their maximum; every other one is summed. */
export const MAX_STATS: ReadonlySet<keyof RunStats> = new Set(['maxClockSkewMs', 'horizonDays', 'oldestBodyReadDays']);

/** All counters at zero. */
export function emptyStats(): RunStats {
  return {
    steps: 0,
    deliveries: 0,
    executions: 0,
    crashes: 0,
    longPauses: 0,
    refusedCharErrors: 0,
    killedBeforePlace: 0,
    breakerTrips: 0,
    timeouts: 0,
    redrives: 0,
    reconcilerRuns: 0,
    reconcilerResumes: 0,
    reconcilerSkips: 0,
    pauses: 0,
    resumes: 0,
    rateLimitedRuns: 0,
    ownQueueRuns: 0,
    rateAdmissions: 0,
    rateDeferrals: 0,
    rateSlotsMissed: 0,
    claimCheckAllRuns: 0,
    bodyObjectsStored: 0,
    bodyReads: 0,
    bodyRenewals: 0,
    bodyFaults: 0,
    bodyReadsPastTtl: 0,
    oldestBodyReadDays: 0,
    shortTtlRuns: 0,
    deployedShardRuns: 0,
    orderedRuns: 0,
    linesChecked: 0,
    orderedPairs: 0,
    waitingTurns: 0,
    bulkRedrives: 0,
    bulkRedriven: 0,
    outages: 0,
    clockJumps: 0,
    stalls: 0,
    ambiguousWrites: 0,
    throttles: 0,
    slowAnswers: 0,
    sqsDuplicates: 0,
    concurrentDeliveries: 0,
    unseenReceives: 0,
    partialBatches: 0,
    maxClockSkewMs: 0,
    horizonDays: 0,
    replays: 0,
    ttlDeletions: 0,
    paddedKeyHeaders: 0,
    bodiesAtLimits: 0,
    refusedTooLarge: 0,
    resignedRetries: 0,
    edges: 0,
    slowLeases: 0,
    cutsAfterPost: 0,
    lateRedrives: 0,
    ledgerApartFromEffect: 0,
    multiRegionRuns: 0,
    crossRegionCopies: 0,
    replicatedConflicts: 0,
    isolations: 0,
    replicatedWrites: 0,
    doubleEffects: 0,
    doubleCompletions: 0,
    doubleClaims: 0,
    reconcilerNotDue: 0,
    sweptItems: 0,
  };
}

export interface RunResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly stats: RunStats;
}

const SECRET = 'sim-shared-secret';
/** Standard Webhooks secrets are `whsec_` and base64 (standard-webhooks-keys.ts). */
const SW_SECRET = `whsec_${Buffer.from('sim-standard-webhooks-secret').toString('base64')}`;
const HMAC = { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'hex' } as const;
/** The alerting route's body limit: bodies just under, at and over it are sent. */
const SMALL_BODY_LIMIT = 2048;
/**
 * The pay route's body limit: over the claim check's 128 KiB, so its bodies at the limit go to
 * the bucket while those at SQS's edge may stay in the message (the receiver's hard maximum,
 * 4.5 MiB, would only make the runs slower, not the protocol's paths more).
 */
const PAY_BODY_LIMIT = 160 * 1024;
const ACTION_TIME_SECONDS = 5;
/**
 * The Stripe route's action time by destination: a lease of 6, 15 or (any other, or none) 9 s.
 * Every lease up to 20 s has the same margin (2 s, leaseMarginSeconds), the one the takeover
 * edge reckons from the route's longest lease.
 */
const ST_ACTION_TIME = { field: 'destination', seconds: { EU: 2, LATAM: ACTION_TIME_SECONDS }, otherwise: 3 } as const;

/** The destination of the i-th key's payout on the Stripe route: one the table names, one it does not, or none. */
function destinationOf(i: number): Readonly<Record<string, unknown>> {
  const destination = ['EU', 'LATAM', 'APAC', undefined][Math.floor(i / 5) % 4];
  return destination === undefined ? {} : { destination };
}
const MAX_ATTEMPTS = 3;
const STUCK_AFTER_SECONDS = 900;
/** The deployed functions' timeouts (lib/retryproof-stack.ts): an actor stepped after its own is killed, as Lambda would. */
const INGEST_TIMEOUT_MS = INGEST_TIMEOUT_SECONDS * 1000;
const RECONCILER_TIMEOUT_MS = 5 * 60_000;
const SETTLE_SECONDS = 60;
/** A long run lasts at least this long (then up to 3 days more). */
const LONG_RUN_MS = 41 * 24 * 3_600_000;
/** DynamoDB deletes an expired item up to this long after its expiry (see ttlSweep). */
const TTL_MAX_LAG_SECONDS = 48 * 3600;

/** The seeded lag of one item's TTL deletion, 0..48 h. */
function ttlLagSeconds(seed: number, pk: string, sk: string, expiresAt: number): number {
  const digest = createHash('sha256').update(`${seed}|${pk}|${sk}|${expiresAt}`).digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * TTL_MAX_LAG_SECONDS);
}

/** A number in [0, 1) the seed draws once, apart from every stream of the run. */
function a0(seed: number): number {
  return prng(seed ^ 0x10a9)();
}
const HOUR = 3_600_000;
/** Every run starts at the same instant: each has tables of its own, so a seed replays exactly. */
const EPOCH = Date.UTC(2030, 0, 1);
const DAY = 24 * HOUR;
/** The longest the simulation's clock moves with no reconciler run (leapTo): half its 24 h window. */
const RECONCILER_GAP_MS = 12 * HOUR;
const quiet = (): void => undefined;
const SIM_LOGGER = createLogger('retryproof-simulation');
const SIM_METRICS = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: 'retryproof-simulation',
  logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
});

/**
 * One run of a key's action: the true instants of its first and last call, if it made any, and
 * their places in the order every action call of the run was made (two calls may share an instant).
 */
interface ActionRun {
  readonly attempt: number;
  /** On an ordered route: the place at which the record's turn came for this run. */
  readonly place?: ObservedPlace;
  /** The record's generation and redrives when it ran: runs of one budget share it. */
  readonly budget: string;
  readonly actor: number;
  firstCallMs?: number;
  lastCallMs?: number;
  firstCallSeq?: number;
  lastCallSeq?: number;
}

/** Every action call of every run, numbered in the order they are made. */
let actionCallSeq = 0;

interface KeyState {
  readonly route: string;
  /** The business event: the order the body names. The protocol's key should follow from it alone. */
  readonly order: string;
  /** Every downstream charge its action runs made or met. */
  readonly chargeIds: Set<string>;
  /** Its downstream keeps idempotency keys (rule 4 of the contract); one key in five meets one that keeps none. */
  readonly idempotentDownstream: boolean;
  /** Every key the protocol ran its action under (one, unless a key is derived differently per copy). */
  readonly protocolKeys: Set<string>;
  /** Every run of its action, in order. */
  readonly runs: ActionRun[];
  readonly key: string;
  readonly body: Buffer;
  /** Every action run always fails retryably: the budget runs out. */
  readonly hopeless: boolean;
  /** Hopeless until a person fixes its downstream (before a bulk redrive, at the settle): then it runs. */
  readonly fixable: boolean;
  /**
   * Its first `stutters` runs fail retryably (a downstream slow to warm up), then it runs: on an
   * ordered route, a head that retries while later work of its entity waits behind it.
   */
  readonly stutters: number;
  /** Action runs since the last redrive (or since acceptance). */
  runsInBudget: number;
  effects: number;
  /** Runs whose worker lost the record after its effect (killed, timed out, fenced out): a double effect is excused, and must be reversed. */
  excused: number;
  failed: boolean;
  sends: number;
  /** Deferrals for the route's rate limit this key won: each sends one delayed wake-up. */
  deferrals: number;
  /** Work messages ingest sent for this key, by resend window (floor(t / window)). */
  readonly ingestSends: Map<number, number>;
  /** Windows (floor(t / resend window)) in which a duplicate of this key arrived. */
  readonly duplicateWindows: Set<number>;
  delivered: number;
  /** The event number (see `arrivals`) of the first 2xx answer one of its deliveries got. */
  answeredSeq?: number;
  /**
   * The event number as the send began of the first ingest of it that died after its send began:
   * an answer it could have given, for the circuit breaker's checks only (killActor).
   */
  diedAfterSendSeq?: number;
  /** When its sender first sent it, true time: the sender retries within its retry window only. */
  firstSentAt?: number;
  /** The event number (see `arrivals`) of its first delivery's arrival. */
  firstArrivalSeq?: number;
  /** The event numbers of all its deliveries' arrivals. */
  arrivalSeqs?: number[];
  /** Hits of copies whose excuse (excuseRacingCopy) failed or never came: the design lets a count include them. */
  unexcusedHits?: number;
  /** Its creating delivery was answered 202 with no place taken in its line (placeFailed): it is placed later, by a worker. */
  placeFailed?: boolean;
  /** The first delivery's headers as signed then: what a replayer captured. */
  captured?: Record<string, string>;
  /** Its record went FAILED at some point: a person was told (the DLQ, the report). */
  everFailed: boolean;
  /** The deadLetterId of the last fail or failExhausted an executor wrote (or tried to) on its record. */
  lastDeadLetterId?: string;
  /** How its action posts the ledger entry beside the effect (contract for user code). */
  readonly ledgerMode: 'after' | 'after-post-fails' | 'before';
  /** A delivery of the key got a 2xx answer: its sender stops retrying. */
  answered: boolean;
  /** True time of the last 2xx answer a delivery of it got: a record generation claimed after it holds no answer of it. */
  lastAnsweredAt?: number;
  /** The receivedAt of the record generation a worker last leased. */
  generation?: number;
  /**
   * The record's redrive count (its `redrives`) as far as the simulation has accounted for it.
   * A redrive can commit and still answer false: its answer lost, the SDK's retry refused, and
   * another write between (a lease) took the nonce that would have recognised it. The count
   * on the record says it happened all the same.
   */
  redrivesSeen: number;
  /**
   * A person's copy of it went straight back to the DLQ unseen (see neverHanded): its record
   * may then expire with its work in the DLQ, and no code of ours could have known (seed 97).
   */
  bouncedUnseen?: boolean;
  /** The token of the last lease a worker took on the key's record. */
  leaseToken?: string;
  /** That lease's run count (the record's `runs` after it): leases commit in this order. */
  leaseRuns?: number;
  /** That lease's end, by its taker's clock, and the actor that took it. */
  lease?: { readonly untilMs: number; readonly holder: number };
  /** Deliveries of the key in flight now. */
  inFlight: number;
  /** Two deliveries of the key were ever in flight at once: one may read the other's 2xx claim. */
  concurrent: boolean;
  /** The Region its first delivery lands in; its copies alternate between the Regions from there. */
  readonly home: number;
  /** Completions that landed (complete answered true), by the generation (receivedAt) they completed. */
  readonly completions: Map<number, number>;
}

/**
 * `target` with one async method watched: `before` sees each call's arguments, `after` its
 * result as well. Every other member passes through untouched.
 */
function watchCalls<T extends object>(
  target: T,
  method: string,
  before?: (args: unknown[]) => void,
  after?: (args: unknown[], out: unknown) => void,
): T {
  return new Proxy(target, {
    get(object, prop, receiver) {
      const value: unknown = Reflect.get(object, prop, receiver);
      if (typeof value !== 'function') return value;
      const call = value as (...args: unknown[]) => Promise<unknown>;
      if (prop !== method) return call.bind(object);
      return async (...args: unknown[]) => {
        before?.(args);
        const out = await call.apply(object, args);
        after?.(args, out);
        return out;
      };
    },
  });
}

function workKey(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

/**
 * Runs one schedule and checks the invariants. Never throws for a violation: it returns them.
 * @param ops the schedule; `scheduleOf(seed, n)` or a shrunk one
 */
export async function runSchedule(env: SimulationEnv, seed: number, ops: readonly Op[], options: RunOptions = {}): Promise<RunResult> {
  const drawn = shapeOf(seed);
  const { rate: _rate, ...unlimited } = drawn;
  const shape: RunShape = options.noRateLimit === true ? { ...unlimited, long: drawn.long && !drawn.longForShortTtl, shortTtl: false, lastDayRedrives: false, longForShortTtl: false, ordered: false, longPause: false } : drawn;
  const random = prng(seed ^ 0xa11ce);
  let nowMs = EPOCH;
  const startMs = nowMs;
  /** SQS's clock, and the scheduler's shared instant: true time. */
  const clock = { now: () => nowMs };
  const violations: string[] = [];
  /** Every place the ordered route's records were given, as the protocol's calls returned them (sim-ordering.ts). */
  const observedPlaces = new ObservedPlaces();
  const stats = emptyStats();

  // Each actor's clock: true time plus an offset within the bound (times the skew factor), drawn
  // at its spawn; half of them sit at the bound, where a margin is tested.
  const skewBoundMs = CLOCK_SKEW_SECONDS * 1000 * (options.skewFactor ?? 1);
  const skewRandom = prng(seed ^ 0xc10c);
  const sched = new Scheduler({
    now: () => nowMs,
    skewOf: () => {
      const sign = skewRandom() < 0.5 ? -1 : 1;
      return sign * (skewRandom() < 0.5 ? skewBoundMs : skewRandom() * skewBoundMs);
    },
  });
  /** The protocol's clock: the calling actor's own. */
  const now = (): number => sched.now();
  const timers = new SimTimers(() => nowMs, () => sched.current() !== undefined);
  /** Moves true time on (never back), and fires the timers whose time came. */
  const setNow = (ms: number): void => {
    nowMs = Math.max(nowMs, Math.round(ms));
    timers.fire();
  };
  /** SIM_TRACE=1: every operation, step and kill on stderr, for reading one seed's run. */
  const trace = process.env.SIM_TRACE === '1' ? (line: string): void => void process.stderr.write(`[${((nowMs - EPOCH) / 1000).toFixed(3)} s] ${line}\n`) : undefined;
  const dynamoStats = emptyDynamoFaultStats();

  const observerClient = simulationClient(env, sched);
  const suffix = `${seed}-${tableCounter++}`;
  const regionCount = options.regions ?? shape.regions;
  const eventual = options.consistency === 'eventual' && regionCount > 1;
  const eventsTable = await createEventsTable(observerClient, `sim-events-${suffix}`);
  const regionTables = [eventsTable];
  for (let r = 1; r < regionCount; r++) regionTables.push(eventual ? await createEventsTable(observerClient, `sim-events-${suffix}-r${r}`) : eventsTable);
  const tables: SimulationTables = { dynamo: observerClient, eventsTable, regionTables };
  const uninstallTimers = timers.install();
  try {
    return await runWorld();
  } finally {
    uninstallTimers();
    for (const table of new Set(regionTables)) await observerClient.send(new DeleteTableCommand({ TableName: table }));
    observerClient.destroy();
  }

  async function runWorld(): Promise<RunResult> {

    // Routes: two on a scheme that signs no timestamp (hmac-sha256, the key from the signed
    // body), one pausing on a storm of one key, one only alerting; and two whose senders re-sign
    // every retry with a fresh timestamp: Standard Webhooks (key: the webhook-id header, which
    // proxies may pad with whitespace) and Stripe (key: the body's id).
    const routeNames = { pay: 'pay', alt: 'alt', sw: 'sw', st: 'st' };
    const common = {
      action: 'simpay',
      actionTimeSeconds: ACTION_TIME_SECONDS,
      maxAttempts: MAX_ATTEMPTS,
      ...(shape.claimCheck.all ? { claimCheckAboveBytes: 0 } : {}),
    } as const;
    const { actionTimeSeconds: _one, ...untimed } = common;
    const routeConfigs: RouteConfig[] = [
      // The body signs the order id, so the key comes from it (a header would be unsigned).
      {
        ...common,
        name: routeNames.pay,
        signature: HMAC,
        key: '{body:/order}',
        secretName: 'sim/pay',
        breakerThreshold: 6,
        breakerReaction: 'pause',
        maxBodyBytes: PAY_BODY_LIMIT,
        ...(shape.rate === undefined ? {} : { rateLimit: shape.rate.limit, ownQueue: shape.rate.ownQueue }),
        ...(shape.ordered ? { orderBy: '{body:/customer}' } : {}),
      },
      // The alerting route trips on a third delivery, so outages and repeats often meet there.
      { ...common, name: routeNames.alt, signature: HMAC, key: '{body:/order}', secretName: 'sim/alt', breakerThreshold: 2, breakerReaction: 'alert', maxBodyBytes: SMALL_BODY_LIMIT },
      { ...common, name: routeNames.sw, signature: { scheme: 'standard-webhooks' }, secretName: 'sim/sw', breakerThreshold: 3, breakerReaction: 'pause' },
      // Stripe's route leases by the payout's destination (6, 9 or 15 s): each record its own,
      // the longest the same as the other routes', so the executor's timeout is theirs too.
      { ...untimed, name: routeNames.st, signature: { scheme: 'stripe' }, secretName: 'sim/st', breakerThreshold: 3, breakerReaction: 'alert', actionTime: ST_ACTION_TIME },
    ];
    const configOf = (routes: readonly RouteConfig[]): ResolvedConfig =>
      resolveConfig({
        routes: [...routes],
        reconciliation: { stuckAfterSeconds: STUCK_AFTER_SECONDS, settleSeconds: SETTLE_SECONDS },
        // Several Regions on one MRSC table: no TTL, so the scheduled runs sweep expired items.
        ...(regionCount > 1 ? { regions: { replicas: ['us-east-1', 'us-east-2'], witness: 'us-west-2' } } : {}),
      });
    // A short TTL: the shortest whole number of days that passes every route's cover check, as
    // resolveConfig applies it at synth (a TTL below a route's cover throws there).
    const shortTtlSeconds = (resolved: ResolvedConfig): number => {
      const daySeconds = DAY / 1000;
      return Math.ceil(Math.max(...resolved.routes.map((r) => r.coverSeconds)) / daySeconds) * daySeconds;
    };
    const defaults = configOf(routeConfigs);
    const resolved = shape.shortTtl ? configOf(routeConfigs.map((r) => ({ ...r, ttlSeconds: shortTtlSeconds(defaults) }))) : defaults;
    const config: ResolvedConfig = {
      ...resolved,
      queue: {
        ...resolved.queue,
        visibilityTimeoutSeconds: shape.visibilityTimeoutSeconds,
        resendAfterSeconds: shape.visibilityTimeoutSeconds + 60,
        // Sized for this visibility timeout, as resolveConfig sizes it for the deployed one: a
        // backstop plus the receives a day-long outage spends at the dependency backoff, which
        // doubles from the visibility timeout (15 to 17 receives from 1 to 5 s, 10 from 150 s).
        maxReceiveCount:
          Math.max(...resolved.routes.map((r) => backstopReceiveCount(r.maxAttempts))) +
          outageReceiveCount(OUTAGE_HORIZON_SECONDS, shape.visibilityTimeoutSeconds, resolved.executorTimeoutSeconds),
      },
    };
    const routes = new Map<string, ResolvedRoute>(config.routes.map((r) => [r.name, r]));
    const resendAfterMs = config.queue.resendAfterSeconds * 1000;

    // SQS, simulated: each Region has its own work queue and DLQ, as each Region's stack deploys them.
    // Both queues keep a message 14 days from its enqueue timestamp, as the stack deploys them
    // (lib/stateful: DLQ_RETENTION_SECONDS, and the work queue's 14 days); a copy moved to the
    // DLQ keeps its original timestamp (simulated-sqs.ts [D5]).
    /** SQS's own choices (order, which copy, which message a lost receive takes), from the seed. */
    const sqsRandom = prng(seed ^ 0x5a5);
    let sqsDown = false;
    /** A person fixed the downstream of the fixable hopeless keys (see KeyState.fixable). */
    let downstreamFixed = false;
    const keys = new Map<string, KeyState>();
    const beforeSend = (message: WorkMessage): void => {
      if (sqsDown) throw new Error('simulated SQS outage');
      // SQS's size limit, body and attributes together ("All parts of the message attribute,
      // including Name, Type, and Value, are part of the message size restriction", SQS API
      // Reference, MessageAttributeValue). Whatever the receiver accepted must fit, copies too.
      const bytes = sqsBytesOf(message);
      if (bytes > SQS_MAX_MESSAGE_BYTES) {
        violations.push(`${message.key}: SQS refused a ${message.deadLetterId === undefined ? 'work message' : 'dead-letter copy'} of ${bytes} B (over ${SQS_MAX_MESSAGE_BYTES} B) for accepted work`);
        throw new SimInvalidParameterValue(`One or more parameters are invalid. Reason: Message must be shorter than ${SQS_MAX_MESSAGE_BYTES} bytes.`);
      }
      if (message.deadLetterId === undefined) {
        const k = keys.get(workKey(message.route, message.key));
        if (k === undefined) return;
        k.sends++;
        if (sched.current()?.kind === 'ingest') {
          const window = Math.floor(nowMs / resendAfterMs);
          k.ingestSends.set(window, (k.ingestSends.get(window) ?? 0) + 1);
        }
      }
    };
    const regionQueues = Array.from({ length: regionCount }, (_, r) => {
      const tag = r === 0 ? '' : `-r${r}`;
      const dlq = new SimulatedQueue({
        name: `dlq${tag}`,
        clock,
        visibilityTimeoutSeconds: shape.visibilityTimeoutSeconds,
        moveTaskResetsReceiveCount: shape.moveTaskResetsReceiveCount,
        retentionSeconds: DLQ_RETENTION_SECONDS,
      });
      const queue = new SimulatedQueue({
        name: `work${tag}`,
        clock,
        visibilityTimeoutSeconds: shape.visibilityTimeoutSeconds,
        redrive: { deadLetterQueue: dlq, maxReceiveCount: config.queue.maxReceiveCount },
        retentionSeconds: DLQ_RETENTION_SECONDS,
      });
      const shared = new SimWorkQueue(queue, { beforeSend });
      // The pay route's own queue (ownQueue), dead-lettering into the same DLQ, as the stack deploys it.
      const own = shape.rate?.ownQueue === true
        ? new SimulatedQueue({
            name: `work-pay${tag}`,
            clock,
            visibilityTimeoutSeconds: shape.visibilityTimeoutSeconds,
            redrive: { deadLetterQueue: dlq, maxReceiveCount: config.queue.maxReceiveCount },
            retentionSeconds: DLQ_RETENTION_SECONDS,
          })
        : undefined;
      const workQueue = own === undefined ? shared : new RoutedWorkQueue(shared, new Map([[routeNames.pay, new SimWorkQueue(own, { beforeSend })]]));
      return { dlq, queue, own, workQueue };
    });
    /** Every work queue of every Region: the shared ones and the pay route's own. */
    const allWorkQueues = regionQueues.flatMap((q) => (q.own === undefined ? [q.queue] : [q.queue, q.own]));
    /** The work queues of a Region; with a route queue, which one `roll` picks first (each has its event source). */
    const workQueuesOf = (region: number, roll: number): SimulatedQueue[] => {
      const r = regionQueues[region];
      if (r === undefined) return [];
      if (r.own === undefined) return [r.queue];
      return roll < 0.5 ? [r.queue, r.own] : [r.own, r.queue];
    };
    /** The queue a message of `route` goes to in a Region: what RoutedWorkQueue picks. */
    const queueForRoute = (region: number, route: string | undefined): SimulatedQueue => {
      const r = regionQueues[region] as (typeof regionQueues)[number];
      return route === routeNames.pay && r.own !== undefined ? r.own : r.queue;
    };
    const dlqs = regionQueues.map((q) => q.dlq);
    /** The Region an actor runs in (its Lambda's); 0 outside any actor (the simulation's own reads). */
    const regionOfActor = (): number => (sched.current()?.meta.region as number | undefined) ?? 0;
    /**
     * One port whose every call goes to the instance of the calling actor's Region: each
     * function reaches its own Region's queue and table replica, as a deployed one does.
     */
    const byRegion = <T extends object>(instances: readonly T[]): T => {
      const first = instances[0] as T;
      if (instances.length === 1 || instances.every((i) => i === first)) return first;
      return new Proxy(first, {
        get(_target, prop) {
          const own = instances[regionOfActor()] ?? first;
          const value: unknown = Reflect.get(own, prop, own);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(own) : value;
        },
      });
    };
    /** A Region to act in, from `a` in [0, 1); always 0 with one Region. */
    const regionAt = (a: number): number => Math.min(regionCount - 1, Math.floor(a * regionCount));
    const workQueue = byRegion(regionQueues.map((q) => q.workQueue));
    /** An isolated Region (its DynamoDB endpoint cut off from the other Regions), if any. */
    let isolated: number | undefined;

    const { dynamo, eventsTable } = tables;
    // DynamoDB as each function's SDK client meets it: one client per function (each Lambda has
    // its own, with its own retry quota), faults drawn from the seed while the schedule runs.
    // The simulation's own reads (observers, invariants) use `dynamo`, which has none.
    let dynamoPlan: DynamoFaultPlan | undefined = shape.dynamo;
    const faultRandom = prng(seed ^ 0xfa17);
    const faultClients: DynamoDBClient[] = [];
    /**
     * Writes that committed and answered an error, by actor id and item partition key: the
     * nonce (writeId) the write set, when it carried one (conditional-write.ts).
     */
    const committedUnanswered = new Map<string, string | undefined>();
    /**
     * The port call a DynamoDB write is made for, by a number per call: two strands of one
     * executor (an SQS duplicate of one message in one batch) write the same record at once, and
     * one's committed write is not the other's (seed 1561: a duplicate's failExhausted committed
     * and lost its answer, and its twin's refused one was taken for it).
     */
    const callScope = new AsyncLocalStorage<number>();
    let portCalls = 0;
    const ownWriteOf = (actor: number, pk: string, call: number | undefined): string => `${actor}\u0000${pk}\u0000${String(call)}`;
    /** The delay chosen for an actor's next DynamoDB answer (the slow-lease operation), by actor id. */
    const slowAnswerFor = new Map<number, number>();
    const faultyClient = (): DynamoDBClient => {
      const client = new DynamoDBClient({ endpoint: env.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
      faultyDynamoDb(client, {
        sched,
        random: faultRandom,
        // An isolated Region's calls fail (its writes and strongly consistent reads cannot reach
        // the other Regions), or commit without an answer, while the isolation lasts.
        plan: () => (dynamoPlan !== undefined && isolated !== undefined && regionOfActor() === isolated ? ISOLATED : dynamoPlan),
        advanceTo: setNow,
        now: () => nowMs,
        nextTimerMs: () => timers.nextDueMs(),
        onCommitThenError: (_command, input) => {
          const id = sched.current()?.id;
          const key = input.Key as { pk?: { S?: string } } | undefined;
          const item = input.Item as { pk?: { S?: string }; writeId?: { S?: string }; claimId?: { S?: string } } | undefined;
          const values = input.ExpressionAttributeValues as Record<string, { S?: string } | undefined> | undefined;
          const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
          const pk = key?.pk?.S ?? item?.pk?.S;
          // A claim's nonce is its claimId (record-transitions.ts claimKey: `#aN = if_not_exists(#aN, :aN)`), a transition's its writeId.
          const claimName = Object.entries(names ?? {}).find(([, name]) => name === 'claimId')?.[0];
          const claimId = claimName === undefined ? item?.claimId?.S : values?.[`:${claimName.slice(1)}`]?.S;
          if (id !== undefined && pk !== undefined) committedUnanswered.set(ownWriteOf(id, pk, callScope.getStore()), values?.[':writeId']?.S ?? item?.writeId?.S ?? claimId);
        },
        // The slow-lease operation's delay, for its actor's lease write alone (the only write
        // that sets :leaseUntil, record-transitions.ts acquireLease).
        forcedSlowMs: (body) => {
          const id = sched.current()?.id;
          const delay = id === undefined || !body.includes('":leaseUntil"') ? undefined : slowAnswerFor.get(id);
          if (delay !== undefined && id !== undefined) {
            slowAnswerFor.delete(id);
            trace?.(`  slow-lease: the lease write of #${id} answered ${delay} ms late`);
          }
          return delay;
        },
        stats: dynamoStats,
        trace,
      });
      if (eventual) replicateWrites(client);
      faultClients.push(client);
      return client;
    };
    const clientOf = { ingest: faultyClient(), executor: faultyClient(), reconciler: faultyClient(), operator: faultyClient() };
    // The eventually consistent control's replication: a write that reached a Region's table is
    // copied to the others `replicationLagMs` later; of two writes to one item, the later one wins
    // everywhere (MREC's last writer wins), whatever each Region's condition saw.
    function replicateWrites(client: DynamoDBClient): void {
      client.middlewareStack.add(
        <Output extends MetadataBearer>(next: DeserializeHandler<object, Output>, context: HandlerExecutionContext) =>
          async (args: DeserializeHandlerArguments<object>) => {
            const out = await next(args);
            const input = args.input as { TableName?: string; Key?: Record<string, AttributeValue>; Item?: Record<string, AttributeValue> };
            const item = input.Key ?? input.Item;
            if (input.TableName !== undefined && item?.pk?.S !== undefined && item.sk?.S !== undefined && WRITE_COMMANDS.has(context.commandName ?? '')) {
              noteWrite(input.TableName, item.pk.S, item.sk.S);
            }
            return out;
          },
        { step: 'deserialize', name: 'simulationReplication', priority: 'low' },
      );
    }
    /** Writes waiting to reach the other Regions' tables, in the order they were made. */
    const replication: { table: string; pk: string; sk: string; at: number; seq: number }[] = [];
    /** The last write each table holds for each item: its instant and order (last writer wins). */
    const lastWrite = new Map<string, { at: number; seq: number }>();
    let writeSeq = 0;
    const noteWrite = (table: string, pk: string, sk: string): void => {
      const write = { at: nowMs, seq: ++writeSeq };
      lastWrite.set(`${table}\u0000${pk}\u0000${sk}`, write);
      replication.push({ table, pk, sk, ...write });
    };
    /** Copies every write due by now (all of them with `all`) to the other Regions' tables. */
    const replicateDue = async (all = false): Promise<void> => {
      while (replication.length > 0) {
        const next = replication[0] as (typeof replication)[number];
        if (!all && next.at + shape.replicationLagMs > nowMs) return;
        replication.shift();
        const key = { pk: { S: next.pk }, sk: { S: next.sk } };
        const source = (await dynamo.send(new GetItemCommand({ TableName: next.table, Key: key, ConsistentRead: true }))).Item;
        for (const table of regionTables) {
          if (table === next.table) continue;
          const id = `${table}\u0000${next.pk}\u0000${next.sk}`;
          const held = lastWrite.get(id);
          if (held !== undefined && (held.at > next.at || (held.at === next.at && held.seq > next.seq))) continue;
          lastWrite.set(id, { at: next.at, seq: next.seq });
          if (source === undefined) await dynamo.send(new DeleteItemCommand({ TableName: table, Key: key }));
          else await dynamo.send(new PutItemCommand({ TableName: table, Item: source }));
          stats.replicatedWrites++;
        }
      }
    };
    // The downstream where effects happen, and the ledger apart from it (sim-downstream.ts).
    // Keys the protocol derived with stray whitespace (defect 4) reach the same downstream policy.
    const downstream = new SimDownstream((idempotencyKey) => downstreamRetentionOf.get(idempotencyKey.replace(/\s+/g, '')) ?? 0);
    const downstreamRetentionOf = new Map<string, number>();
    const simLedger = new SimLedger(downstream, 1 + Math.floor(prng(seed ^ 0x1ed9)() * 4));
    const ledger: Ledger = sched.gate(simLedger, 'ledger');
    /** A store of each Region's table replica, one port over them (byRegion). */
    const perRegion = <T extends object>(make: (table: string) => T): T => {
      const made = new Map<string, T>();
      return byRegion(regionTables.map((table) => made.get(table) ?? made.set(table, make(table)).get(table) as T));
    };
    // A pause reaches the workers within ROUTE_STATE_MAX_AGE_MS (pause-reach.ts); with a table per Region no pause reaches another Region at all.
    const pauseReach = new PauseReach({ trueNow: () => nowMs, maxAgeMs: eventual ? Number.POSITIVE_INFINITY : ROUTE_STATE_MAX_AGE_MS, violations });
    const routeStateOf = (client: DynamoDBClient): DynamoDbRouteStateStore => pauseReach.observe(sched.gate(perRegion((table) => new DynamoDbRouteStateStore(client, table)), 'routeState'));
    // The S3 claim check (issue 24): each Region's bucket of large bodies, with the lifecycle the
    // construct gives it, S3's failures as the seed draws them, and a check on every read and
    // every check before a send: the object a message points to is there (sim-body-objects.ts).
    const buckets = new SimBuckets({
      now: () => nowMs,
      random: prng(seed ^ 0xb0d1e5),
      faults: shape.claimCheck.faults,
      lifeDays: bodyObjectLifeDays(longestTtlSeconds(config.routes)),
      longestTtlMs: longestTtlSeconds(config.routes) * 1000,
      onMissing: (pointer, what, detail) => violations.push(`the body object ${pointer} was gone when ${what} (${detail}): a message still pointed to it`),
      stats,
    });
    const bodies = sched.gate(byRegion(regionQueues.map((_, r) => buckets.bucket(`sim-bodies-r${r}`))), 's3');
    // Every sender keeps a message's body object alive first, as sqsWorkQueueOf wires it.
    const gatedQueue = new FreshBodyWorkQueue(sched.gate(workQueue, 'sqs'), bodies, {
      renewAfterMs: bodyObjectRenewAfterSeconds(longestTtlSeconds(config.routes)) * 1000,
      clockMarginMs: takeoverMarginMs(config.clockSkewSeconds),
      now,
    });
    // A receipt handle is only good on its own queue: the record's source ARN picks it (SqsMessageVisibility).
    const visibility = sched.gate(
      byRegion(
        regionQueues.map((q): MessageVisibility => {
          const shared = new SimMessageVisibility(q.queue);
          const own = q.own === undefined ? undefined : new SimMessageVisibility(q.own);
          return { changeVisibility: (handle, seconds, source) => (own !== undefined && source === q.own?.arn ? own : shared).changeVisibility(handle, seconds) };
        }),
      ),
      'visibility',
    );
    const realExecutionStore = perRegion((table) => new DynamoDbExecutionStore(clientOf.executor, table));
    /** The simulation's own view of the records (of the calling actor's Region): no faults, no yield points. */
    const observerStore = perRegion((table) => new DynamoDbExecutionStore(dynamo, table));
    /** A record's item as it stands in `table`, every attribute (the observer's read: no faults). */
    const rawRecordIn = async (table: string, route: string, key: string): Promise<Record<string, AttributeValue> | undefined> =>
      (await dynamo.send(new GetItemCommand({ TableName: table, Key: { pk: { S: recordPk(route, key) }, sk: { S: RECORD_SK } }, ConsistentRead: true }))).Item;
    /** The same, in the calling actor's Region. */
    const rawRecord = (route: string, key: string): Promise<Record<string, AttributeValue> | undefined> => rawRecordIn(regionTables[regionOfActor()] ?? eventsTable, route, key);

    /** The dead-letter copies a person made (a redrive), by deadLetterId and SentTimestamp. */
    const personCopies = new Set<string>();
    /** A rise in a record's redrive count is a redrive that committed: a fresh budget, no longer FAILED. */
    const accountRedrives = (k: KeyState, redrives: number | undefined): void => {
      if (redrives === undefined || redrives <= k.redrivesSeen) return;
      stats.redrives += redrives - k.redrivesSeen;
      k.redrivesSeen = redrives;
      k.failed = false;
      k.runsInBudget = 0;
    };
    // The executor's store, observed: which records failed, which were redriven, which completions were fenced out.
    const observedStore: ExecutionStore = new Proxy(realExecutionStore, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          const arg = args[0] as { route?: string; key?: string; deadLetterId?: string };
          if ((prop === 'fail' || prop === 'failExhausted') && arg.route !== undefined && arg.key !== undefined) {
            const failing = keys.get(workKey(arg.route, arg.key));
            if (failing !== undefined) failing.lastDeadLetterId = arg.deadLetterId;
          }
          // The latest lease as the write sets out: one already superseded then cannot land.
          const tokenAtCall = arg.route === undefined || arg.key === undefined ? undefined : keys.get(workKey(arg.route, arg.key))?.leaseToken;
          // A fenced write's own commit must count as its own (defect 2): one that committed and
          // lost its answer meets itself on the SDK's retry, and the token fence refuses that retry.
          const fencedCall = prop === 'complete' || prop === 'release' || prop === 'fail' || prop === 'failExhausted' || prop === 'deferLeased';
          const writer = sched.current()?.id;
          const call = ++portCalls;
          const ownWrite = fencedCall && writer !== undefined && arg.route !== undefined && arg.key !== undefined ? ownWriteOf(writer, recordPk(arg.route, arg.key), call) : undefined;
          // Waiting for a rate limit spends no attempt: across a deferral, attempts grow by no
          // more than the leases taken meanwhile (runs), whatever else interleaves.
          const beforeDefer = (prop === 'deferForRate' || prop === 'deferLeased') && arg.route !== undefined && arg.key !== undefined ? await observerStore.get(arg.route, arg.key) : undefined;
          let out: unknown;
          try {
            out = await callScope.run(call, () => method.apply(target, args));
          } catch (error) {
            trace?.(`  store.${String(prop)} ${String(arg.key ?? args[1])} threw ${String(error)}`);
            // A completion that failed on DynamoDB (its attempts spent) lost the record after the effect.
            const k = arg.route === undefined || arg.key === undefined ? undefined : keys.get(workKey(arg.route, arg.key));
            if (prop === 'complete' && k !== undefined) k.excused++;
            throw error;
          }
          trace?.(`  store.${String(prop)} ${String(arg.key ?? args[1])} -> ${summaryOf(out)}`);
          const deferred = (out as { kind?: string } | undefined)?.kind === 'deferred' || (prop === 'deferLeased' && out === true);
          if (prop === 'deferLeased' && out === true) stats.rateSlotsMissed++;
          if (deferred && arg.route !== undefined && arg.key !== undefined) {
            const waiting = keys.get(workKey(arg.route, arg.key));
            if (waiting !== undefined) waiting.deferrals++;
          }
          if (beforeDefer !== undefined && deferred) {
            const afterDefer = await observerStore.get(beforeDefer.route, beforeDefer.key);
            // A slot given up (deferLeased) hands back the attempt its own lease spent: one fewer.
            const handedBack = prop === 'deferLeased' ? 1 : 0;
            if (afterDefer?.receivedAt === beforeDefer.receivedAt && afterDefer.attempts - beforeDefer.attempts > afterDefer.runs - beforeDefer.runs - handedBack) {
              violations.push(`${beforeDefer.key}: a deferral for the rate limit spent an attempt (attempts ${beforeDefer.attempts} -> ${afterDefer.attempts}, leases ${beforeDefer.runs} -> ${afterDefer.runs})`);
            }
          }
          const committedId = ownWrite === undefined ? undefined : committedUnanswered.get(ownWrite);
          if (ownWrite !== undefined) committedUnanswered.delete(ownWrite);
          if (out === false && committedId !== undefined && arg.route !== undefined && arg.key !== undefined) {
            // Told "not yours" while the item still carries this very write's nonce: nothing came
            // between its commit and the answer, so the write that stands is this worker's own.
            const stands = await rawRecord(arg.route, arg.key);
            if (stands?.writeId?.S === committedId) {
              violations.push(
                `${arg.key}: ${String(prop)} committed and lost its answer; the SDK's retry met the write itself, which still stands, and it was taken for another worker's (fenced out)`,
              );
            }
          }
          const k = arg.route === undefined || arg.key === undefined ? undefined : keys.get(workKey(arg.route, arg.key));
          if (k !== undefined) {
            // A record seen FAILED failed, whoever's write made it so: a fail whose answer was lost
            // after the SDK's last attempt threw, and the next lease found it FAILED.
            const seen = out as { status?: string; record?: { status?: string } } | undefined;
            const seenFailed = (seen?.status ?? seen?.record?.status) === RECORD_STATUS.failed;
            if (((prop === 'fail' || prop === 'failExhausted') && out === true) || (prop !== 'redrive' && seenFailed)) {
              k.failed = true;
              k.everFailed = true;
            }
            if (prop === 'redrive' && out === true) {
              // Only a person redrives FAILED work: the copy that won must be one a person made
              // (the console's move task, or the CLI's receive-send-delete), or SQS's duplicate of
              // one, which keeps its SentTimestamp (defect 10).
              const won = arg as { deadLetterId?: string; stampedAtMs?: number };
              if (!personCopies.has(`${String(won.deadLetterId)}\u0000${String(won.stampedAtMs)}`)) {
                violations.push(`${k.key}: FAILED work redriven by a copy no person made (dead-letter copy ${String(won.deadLetterId)}, stamped ${String(won.stampedAtMs)}): it ran again with no person involved`);
              }
            }
            // Whatever the answer, the record's count says whether a redrive committed (seed 468:
            // one committed and answered false).
            if (prop === 'redrive') accountRedrives(k, (await observerStore.get(k.route, k.key))?.redrives);
            if (prop === 'complete' && out === false) k.excused++;
            if (prop === 'complete' && out === true) {
              // One generation of a record completes once: its lease lets one run at a time hold
              // it, and the token fence refuses a run that lost it. Two completions are two runs
              // that each took the key to COMPLETED: two effects, whatever the downstream dedupes.
              const generation = (sched.current()?.meta.leasedGeneration as Map<string, number> | undefined)?.get(workKey(k.route, k.key));
              const done = k.completions.get(generation ?? -1) ?? 0;
              k.completions.set(generation ?? -1, done + 1);
              if (done === 1) {
                stats.doubleCompletions++;
                violations.push(`${k.key}: completed twice (generation ${String(generation)}): two runs each took it to COMPLETED`);
              }
            }
            if (prop === 'acquireLease' && (out as { kind?: string }).kind === 'leased') {
              const leased = (out as { record?: { receivedAt?: number; redrives?: number; runs?: number; leaseUntil?: number } }).record;
              const generation = leased?.receivedAt;
              // The generation this worker runs, for its action's charges (see forgottenLater).
              const leaser = sched.current()?.meta;
              if (leaser !== undefined && generation !== undefined) {
                ((leaser.leasedGeneration as Map<string, number> | undefined) ?? (leaser.leasedGeneration = new Map<string, number>())).set(workKey(k.route, k.key), generation);
              }
              // Leases are taken in the order of their commits, and each counts one more run;
              // their answers may come back in another order (a slow answer, seed 42). The
              // latest lease is the one with the most runs on the latest generation.
              const laterGeneration = generation !== undefined && k.generation !== undefined && generation > k.generation;
              const latest = laterGeneration || k.generation === undefined || (generation === k.generation && (leased?.runs ?? 0) > (k.leaseRuns ?? 0));
              if (laterGeneration) {
                // A lease on a later generation (a re-post after the record expired, of a body whose
                // earlier generation never ran): a new record, with a budget and a state of its own.
                k.failed = false;
                k.runsInBudget = 0;
                k.redrivesSeen = leased?.redrives ?? 0;
              }
              if (latest) {
                k.generation = generation ?? k.generation;
                k.leaseRuns = leased?.runs;
                k.leaseToken = (arg as { token?: string }).token;
                if (leased?.leaseUntil !== undefined) k.lease = { untilMs: leased.leaseUntil, holder: sched.current()?.id ?? 0 };
              }
              if (generation === k.generation) accountRedrives(k, leased?.redrives);
            }
            // Fenced writes land only under the latest lease: the token of the last lease taken
            // when the write set out. (Judged then, not at its answer: a write's answer may come
            // back after a later lease's, which took the record once the write had released it;
            // seed 42.)
            const fencedWrite = prop === 'complete' || prop === 'release' || prop === 'fail' || prop === 'deferLeased';
            if (fencedWrite && out === true && (arg as { token?: string }).token !== tokenAtCall) {
              violations.push(`${k.key}: ${prop} landed under lease token ${String((arg as { token?: string }).token)}, not the latest lease's`);
            }
          }
          return out;
        };
      },
    });
    const executionStore = sched.gate(observedStore, 'store');

    // The action: its outcome is drawn per run; its effect is a charge on the downstream, and
    // its ledger entry is posted apart from it, in the key's mode (KeyState.ledgerMode). It keeps
    // the contract for user code: it honours its AbortSignal and ctx.deadline (by its own clock),
    // so it makes no call once either has passed (a run is the stretch of true time between its
    // first and its last call, and no two runs of one key may overlap); an entry exists only
    // for an effect (one posted first is voided when its effect fails; when the effect turns out
    // to be an earlier run's, it takes that run's booking over); entries carry attempt: ctx.attempt.
    const action: Action = async (ctx) => {
      // The event is known by its body, as a downstream would know the order, whatever key it came under.
      const order = (ctx.body as { order?: unknown } | null)?.order;
      const k = typeof order === 'string' ? keysByOrder.get(order) : undefined;
      if (k === undefined || k.route !== ctx.route) throw new PermanentActionError('unknown order');
      k.protocolKeys.add(ctx.key);
      // The exact bytes the sender sent, whether the message carried them or the bucket kept them.
      if (!ctx.rawBody.equals(k.body)) violations.push(`${ctx.key}: run ${ctx.attempt} got a body of ${ctx.rawBody.length} B that is not the ${k.body.length} B the sender sent`);
      if (k.failed) violations.push(`${ctx.key}: a FAILED record ran again without a redrive (run ${ctx.attempt})`);
      k.runsInBudget++;
      if (ctx.route === routeNames.pay) payStarts.push({ trueMs: nowMs, ownMs: now() });
      if (k.runsInBudget > MAX_ATTEMPTS) violations.push(`${ctx.key}: ${k.runsInBudget} runs in one budget, above maxAttempts ${MAX_ATTEMPTS}`);
      const place = observedPlaces.current(ctx.route, ctx.key);
      const run: ActionRun = { attempt: ctx.attempt, budget: `${k.generation ?? 0}/${k.redrivesSeen}`, actor: sched.current()?.id ?? 0, ...(place === undefined ? {} : { place }) };
      k.runs.push(run);
      const call = async (label: string): Promise<void> => {
        await sched.yieldPoint(label);
        timers.fire();
        if (ctx.signal.aborted || now() >= ctx.deadline) throw new RetryableActionError(`aborted before ${label}: its deadline passed`);
        run.firstCallMs ??= nowMs;
        run.lastCallMs = nowMs;
        run.firstCallSeq ??= ++actionCallSeq;
        run.lastCallSeq = ++actionCallSeq;
      };
      /** Voids an entry this run posted: its own clean-up, made even past the deadline (no effect). */
      const voidEntry = async (entry: SimLedgerEntry): Promise<void> => {
        await sched.yieldPoint('ledger.void');
        simLedger.void(entry.entryId);
      };
      const entryOf = (chargeId: string) => ({
        route: ctx.route,
        idempotencyKey: ctx.key,
        amount: 100,
        currency: 'EUR',
        postedAt: now(),
        attempt: ctx.attempt,
        chargeId,
      });
      await call('downstream.prepare');
      const roll = random();
      const stutter = k.runs.length <= k.stutters;
      // Some errors hold characters SQS refuses (U+FFFF, U+FFFE): a last error, and the copy that carries it, must still travel.
      if ((k.hopeless && !(downstreamFixed && k.fixable)) || stutter || roll < 0.06) {
        if (roll < 0.03) stats.refusedCharErrors++;
        throw new RetryableActionError(roll < 0.03 ? 'simulated downstream 503 before anything: \uFFFE' : 'simulated downstream 503 before anything');
      }
      if (roll < 0.1) {
        if (roll < 0.08) stats.refusedCharErrors++;
        throw new PermanentActionError(roll < 0.08 ? 'simulated refusal: upstream said \uFFFF' : 'simulated refusal');
      }
      const idem = ctx.idempotencyKey;
      let own: SimLedgerEntry | undefined;
      // The orders this worker posted for and has not charged yet (the crash-after-post operation's mark).
      const meta = sched.current()?.meta;
      const postedFirst = meta === undefined ? undefined : ((meta.postedFirst as Set<string> | undefined) ?? (meta.postedFirst = new Set<string>()));
      if (k.ledgerMode === 'before') {
        // Posted first, for the charge about to be made (a remembered one, or the next).
        await call('ledger.post-first');
        stats.ledgerApartFromEffect++;
        own = (await simLedger.post(entryOf(downstream.planned(idem, nowMs)))) as SimLedgerEntry;
        postedFirst?.add(k.order);
      }
      try {
        await call('downstream.charge');
      } catch (error) {
        postedFirst?.delete(k.order);
        if (own !== undefined) await voidEntry(own);
        throw error;
      }
      postedFirst?.delete(k.order);
      if (random() < 0.08) {
        if (own !== undefined) await voidEntry(own);
        throw new RetryableActionError('simulated downstream 503: nothing charged');
      }
      const generation = (meta?.leasedGeneration as Map<string, number> | undefined)?.get(workKey(k.route, k.key));
      const { charge, replayed } = downstream.charge(idem, ctx.attempt, nowMs, generation);
      k.chargeIds.add(charge.chargeId);
      trace?.(`  downstream charge ${ctx.key} run ${ctx.attempt}: ${charge.chargeId}${replayed ? ' (replayed: an earlier run made it)' : ''}`);
      if (!replayed) {
        k.effects++;
        const actor = sched.current();
        if (actor !== undefined) (actor.meta.effectKeys as Set<string> | undefined)?.add(k.order);
      }
      if (own !== undefined) {
        // The charge is an earlier run's (the downstream replayed it), and that run's entry may
        // book it: this run takes the booking over and removes the earlier one, so that one
        // entry names the effect and it is the completing run's, the one the reconciler keeps.
        // Voiding its own entry instead left none of the completing run's, and the reconciler
        // kept the earliest: an entry whose run died between its post and its effect, while the
        // entry of the run that charged was reversed, and its charge refunded (seed 1492).
        const held = replayed ? simLedger.holder(charge.chargeId) : undefined;
        if (replayed) simLedger.takeOver(charge.chargeId, own.entryId);
        if (held !== undefined && held.entryId !== own.entryId) await voidEntry(held);
        return { ok: true, charge: charge.chargeId };
      }
      await call('ledger.post');
      if (k.ledgerMode === 'after-post-fails' && random() < 0.5) {
        // The effect stands and its entry is not posted: a retryable failure; the next run's
        // charge is the downstream's replay, and it books the entry.
        stats.ledgerApartFromEffect++;
        throw new RetryableActionError('simulated ledger outage after the effect');
      }
      if (!replayed || simLedger.booking(charge.chargeId) === undefined) await simLedger.post(entryOf(charge.chargeId));
      return { ok: true, charge: charge.chargeId };
    };

    // The pay route's rate gate (when the seed limits it): the real gate on the executor's faulty
    // client, its every admission noted at the true instant its caller read its clock for it.
    const realGate = sched.gate(perRegion((table) => new DynamoDbRateGate(clientOf.executor, table, random)), 'rateGate');
    const rateGate: RateGate = {
      admit: async (route, limit, callerNowMs, window) => {
        const decision = await realGate.admit(route, limit, callerNowMs, window);
        if (decision.admitted) {
          admissions++;
          stats.rateAdmissions++;
        } else stats.rateDeferrals++;
        return decision;
      },
    };
    /**
     * A rate-limited run waiting for its start slot in its invocation: the strand parks, and
     * goes on by its own timer once true time reaches the slot (other actors may have moved
     * the clock past it meanwhile: it then finds itself late). Stepped before that, it is the
     * machine that waited: time moves on to the slot.
     */
    const sleep = async (ms: number): Promise<void> => {
      const dueMs = nowMs + ms;
      await sched.yieldPoint('executor.rate-wait', () => (nowMs >= dueMs ? dueMs : undefined));
      if (nowMs < dueMs) setNow(dueMs);
    };

    /** The pay route's admissions by its gate; and its runs' starts: the true instant each action began, and its worker's clock then. */
    let admissions = 0;
    const payStarts: { readonly trueMs: number; readonly ownMs: number }[] = [];
    // The lines of the ordered route (when the seed draws one), each function on its own client.
    const orderOf = (client: DynamoDBClient): EntityOrder => {
      const order = observedPlaces.observe(sched.gate(perRegion((table) => new DynamoDbEntityOrder(client, table)), 'order'));
      // The actor is marked for the whole of its place, its DynamoDB retries included, so a kill there is counted.
      const place: EntityOrder['place'] = async (...a) => {
        const actor = sched.current();
        if (actor !== undefined) actor.meta.placing = true;
        try {
          return await order.place(...a);
        } finally {
          if (actor !== undefined) actor.meta.placing = false;
        }
      };
      return { ...order, place };
    };
    const handler = createExecutorHandler({
      routes,
      actions: new Map([['simpay', action]]),
      store: executionStore,
      rateGate,
      order: observedPlaces.observe(sched.gate(perRegion((table) => new DynamoDbEntityOrder(clientOf.executor, table)), 'order'), () => stats.waitingTurns++),
      sleep,
      // The deployed cache (wire-executor.ts), aged on the container's own clock: true time here.
      pauses: pauseReach.check(new RoutePauseCache(routeStateOf(clientOf.executor), { maxAgeMs: ROUTE_STATE_MAX_AGE_MS, monotonicNow: () => nowMs })),
      workQueue: gatedQueue,
      bodies,
      visibility,
      maxReceiveCount: config.queue.maxReceiveCount,
      // As deployed (wire-executor.ts): a receive our own dependency failed on hands its message
      // back for longer each time, so an outage of a day spends the receives maxReceiveCount
      // has room for. Without it, seed 157's 27 minutes of DynamoDB errors spent all 18 at the
      // plain visibility timeout and sent live work to the DLQ.
      dependencyBackoff: (receiveCount) => dependencyBackoffSeconds(receiveCount, config.queue.visibilityTimeoutSeconds, config.executorTimeoutSeconds),
      now,
      random,
      newId: () => `id-${Math.floor(random() * 1e12).toString(36)}`,
      logger: SIM_LOGGER,
      metrics: SIM_METRICS,
    });

    // The breaker, observed (defect 9): a key may trip it (pause its route, or be marked
    // tripped) only on a delivery that arrived after one of its deliveries got a 2xx answer.
    // Our own failures (a 5xx, an ingest that died or timed out after its claim, a reconciler's
    // resend) and copies that raced the first answer are not a sender's repeats.
    const checkTrip = (route: string, key: string | undefined, what: string): void => {
      const k = key === undefined ? undefined : keys.get(workKey(route, key));
      const arrival = sched.current()?.meta.arrival;
      if (k === undefined || typeof arrival !== 'number') return;
      const answeredSeq = breakerAnsweredSeq(k);
      if (answeredSeq === undefined || arrival < answeredSeq) {
        violations.push(
          `${k.key}: ${what} on a delivery that arrived ${answeredSeq === undefined ? 'before any delivery of it got a 2xx' : 'before its first 2xx answer'} ` +
            '(our own failure or a racing copy, not its sender repeating)',
        );
      }
    };
    // The breaker's count, observed: never more repeats than deliveries of the key that arrived
    // after one of its deliveries got a 2xx, by the time this one is answered (copies at once claim
    // in any order; a missed count is allowed, an invented one never).
    const checkCount = (k: KeyState, repeats: number): void => {
      const answeredSeq = breakerAnsweredSeq(k);
      // Copies still on their way to their excuse, or whose excuse never landed, may be in it too.
      const self = sched.current();
      const pending = sched
        .parked()
        .reduce((sum, a) => sum + (a !== self && a.kind === 'ingest' && a.meta.keyState === k && typeof a.meta.pendingHits === 'number' ? a.meta.pendingHits : 0), 0);
      const after = (k.arrivalSeqs ?? []).filter((a) => answeredSeq !== undefined && a > answeredSeq).length + pending + (k.unexcusedHits ?? 0);
      if (repeats > after) {
        violations.push(`${k.key}: a delivery counted ${repeats} repeats, but only ${after} could count (deliveries after a 2xx answer, hits whose excuse is pending or failed)`);
      }
    };
    /** The first answer the breaker may count from: a 2xx, or a death after a send began. */
    const breakerAnsweredSeq = (k: KeyState): number | undefined =>
      k.answeredSeq === undefined || k.diedAfterSendSeq === undefined ? (k.answeredSeq ?? k.diedAfterSendSeq) : Math.min(k.answeredSeq, k.diedAfterSendSeq);
    const realEventStore = traced(perRegion((table) => new DynamoDbEventStore(clientOf.ingest, table, { timeShards: shape.timeShards })), 'events', trace);
    const trippedWatched = watchCalls(realEventStore, 'markBreakerTripped', (args) => {
      stats.breakerTrips++;
      checkTrip(args[0] as string, args[1] as string, 'marked the circuit breaker tripped');
    });
    // A claim that created its record must count as created, also when its first attempt
    // committed and lost its answer and the SDK's retry met it (defect 6): a delivery taken for
    // a copy of itself is answered as a replay, and no work is sent for it.
    const observedEventStore: IngestEventStore = new Proxy(trippedWatched, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop === 'markAnswered' && typeof value === 'function') {
          const markAnswered = value as IngestEventStore['markAnswered'];
          return async (...args: Parameters<IngestEventStore['markAnswered']>): Promise<void> => {
            const meta = sched.current()?.meta;
            if (meta !== undefined) meta.marking = true;
            try {
              await markAnswered.apply(target, args);
            } finally {
              if (meta !== undefined) meta.marking = false;
            }
          };
        }
        if ((prop === 'excuseRacingCopy' || prop === 'excuseFailedClaim') && typeof value === 'function') {
          const excuse = value as (...args: unknown[]) => Promise<void>;
          return async (...args: unknown[]): Promise<void> => {
            const meta = sched.current()?.meta;
            try {
              await excuse.apply(target, args);
            } catch (error) {
              // Its bookkeeping failed: the answer stands, and the count may include this copy's hits
              // (a racing copy's, or a failed claim's: the claim wrapper below set them pending).
              const k = meta?.keyState as KeyState | undefined;
              if (k !== undefined) k.unexcusedHits = (k.unexcusedHits ?? 0) + ((meta?.pendingHits as number | undefined) ?? 0);
              throw error;
            } finally {
              if (meta !== undefined) meta.pendingHits = 0;
            }
          };
        }
        if (prop !== 'claimKey' || typeof value !== 'function') return value;
        const claimKey = value as IngestEventStore['claimKey'];
        return async (record: EventRecord, claimNowMs: number) => {
          const actor = sched.current()?.id;
          const pk = recordPk(record.route, record.key);
          const before = await observerStore.get(record.route, record.key);
          const noneLive = before === undefined || before.expiresAt <= Math.floor(claimNowMs / 1000);
          const call = ++portCalls;
          const out = await callScope.run(call, () => claimKey.call(target, record, claimNowMs)).catch((error: unknown) => {
            // A failed claim's hits may be in a count until its excuse lands (excuseFailedClaim).
            const meta = sched.current()?.meta;
            if (meta !== undefined && error instanceof ClaimFailedError) meta.pendingHits = error.uncertain;
            throw error;
          });
          const ownClaimId = actor === undefined ? undefined : committedUnanswered.get(ownWriteOf(actor, pk, call));
          if (actor !== undefined) committedUnanswered.delete(ownWriteOf(actor, pk, call));
          // Ours only if the record that stands carries this delivery's own claimId: copies that
          // arrived together may share a receivedAt (two clocks with the same skew), and one's
          // committed claim may have only added its hit to the other's record (seed 1374).
          const standing = out.kind === 'exists' && noneLive && ownClaimId !== undefined ? await rawRecord(record.route, record.key) : undefined;
          if (standing !== undefined && standing.claimId?.S === ownClaimId) {
            violations.push(`${record.key}: a delivery's own claim, committed and then retried by the SDK, was taken for another delivery's: answered as a replay, no work sent`);
          }
          if (eventual && out.kind === 'created') await checkDoubleClaim(record.route, record.key, claimNowMs);
          // A duplicate's hits while a count ran, until it is answered or excused: a racing copy's are
          // in the count until then (a claim before the count started is in its base).
          const meta = sched.current()?.meta;
          if (meta !== undefined && out.kind === 'exists' && out.answered) meta.pendingHits = out.attempts ?? 1;
          return out;
        };
      },
    });
    /**
     * The eventually consistent control's hazard, seen where it happens: a claim that created a
     * record in its Region while another Region's table holds a live record of the same key
     * under another claim. Both Regions then run it. (On one table the two are the same record.)
     */
    const checkDoubleClaim = async (route: string, key: string, claimNowMs: number): Promise<void> => {
      const own = regionTables[regionOfActor()] ?? eventsTable;
      const mine = (await rawRecordIn(own, route, key))?.claimId?.S;
      for (const table of regionTables) {
        if (table === own) continue;
        const other = await rawRecordIn(table, route, key);
        if (other !== undefined && Number(other.expiresAt?.N ?? 0) > claimNowMs / 1000 && other.claimId?.S !== mine) {
          stats.doubleClaims++;
          trace?.(`  ${key}: claimed in two Regions at once (eventual consistency)`);
          return;
        }
      }
    };
    const ingestRouteState = pauseReach.observe(sched.gate(
      watchCalls(perRegion((table) => new DynamoDbRouteStateStore(clientOf.ingest, table)), 'pause', (args) => {
        const request = args[1] as { by?: string; key?: string };
        if (request.by === 'circuit-breaker') checkTrip(args[0] as string, request.key, 'paused its route by the circuit breaker');
      }),
      'routeState',
    ));
    const ingestDeps: IngestDeps = {
      routes: prepareRoutes(config.routes),
      store: sched.gate(observedEventStore, 'events'),
      // A new delivery's send is where its answer is decided (a worker's lease of its message starts
      // the breaker's count): an ingest that dies once it began is taken as having answered (killActor).
      queue: watchCalls(gatedQueue, 'send', (args) => {
        const meta = sched.current()?.meta;
        // The event number as the send began: a copy that arrives later came after an answer it could have given.
        if (meta !== undefined && (args[0] as WorkMessage).startsCount === true) meta.sentAtSeq ??= arrivals;
      }),
      bodies,
      order: orderOf(clientOf.ingest),
      secrets: new StaticSecretSource(Object.fromEntries(config.routes.map((r) => [r.secretName, secretOf(r)]))),
      now,
      resendAfterMs,
      breaker: { routeState: ingestRouteState },
    };
    // The reconciler's store, observed: a resend it wins stores a 2xx answer on the record.
    const realReconcilerStore = traced(perRegion((table) => new DynamoDbReconcilerStore(clientOf.reconciler, table, { timeShards: shape.timeShards })), 'reconcilerStore', trace);
    const reconcilerStore = sched.gate(realReconcilerStore, 'reconcilerStore');
    // With several Regions on one MRSC table (no TTL) the scheduled runs sweep expired items, and
    // a run that another Region's finished a moment ago does nothing (reconcile-cursor.ts).
    const sweeping = regionCount > 1 && !eventual;
    const expiryStore = sweeping ? sched.gate(traced(perRegion((table) => new DynamoDbExpirySweepStore(clientOf.reconciler, table)), 'expiry', trace), 'expiry') : undefined;
    const sweepOptions = sweeping ? sweepOptionsOf(config, startMs - DAY) : undefined;
    const reconcilerRouteState = routeStateOf(clientOf.reconciler);
    const operatorParked = sched.gate(perRegion((table) => new DynamoDbParkedRecords(clientOf.operator, table)), 'parked');
    const control = routeControl({
      states: routeStateOf(clientOf.operator),
      parked: operatorParked,
      queue: gatedQueue,
      routes: [...routes.keys()],
      now,
    });
    // A person's bulk redrive (`retryproof redrive`), on the operator's faulty client: FAILED
    // work found through the sparse failed index runs once more, each record once.
    const bulk = bulkRedrive({
      failed: sched.gate(traced(perRegion((table) => new DynamoDbFailedRecords(clientOf.operator, table, config.clockSkewSeconds)), 'failed', trace), 'failed'),
      parked: operatorParked,
      states: routeStateOf(clientOf.operator),
      queue: gatedQueue,
      routes: [...routes.keys()],
      now,
      // Paced by the simulated clock's steps, not by real waits.
      sleep: () => Promise.resolve(),
    });

    // Keys of this run: most payable, some hopeless (every run fails retryably).
    const pending: KeyState[] = [];
    const keyRandom = prng(seed ^ 0x6e75);
    const keysByOrder = new Map<string, KeyState>();
    // A rate-limited pay route gets half the keys, so its work meets its limit often.
    // So does an ordered one, so that its customers' lines hold several records.
    const routeOrder =
      shape.rate === undefined && !shape.ordered
        ? [routeNames.pay, routeNames.alt, routeNames.pay, routeNames.sw, routeNames.st]
        : [routeNames.pay, routeNames.alt, routeNames.pay, routeNames.sw, routeNames.pay, routeNames.st];
    for (let i = 0; i < shape.keys; i++) {
      const route = routeOrder[i % routeOrder.length] ?? routeNames.pay;
      const order = `k${i}`;
      // The key each route derives: the webhook-id on Standard Webhooks, the order (or Stripe's
      // body id, the same here) on the others.
      const key = route === routeNames.sw ? `msg_${order}` : order;
      // Most downstreams keep idempotency keys past the TTL (36 to 45 days), as long as most
      // deliveries can run, but short of the contract's horizon for a record redriven again and
      // again (docs/your-code.md, rule 4: 50 days, and 15 more per redrive); one key in five
      // meets one without idempotency, where only a compensating reverse takes a second charge back.
      const idempotent = keyRandom() >= 0.2;
      downstreamRetentionOf.set(deliveryId(route, key).replace(/\s+/g, ''), idempotent ? (36 + Math.floor(keyRandom() * 10)) * DAY : 0);
      // A post before the effect, or one that fails after it, needs the downstream's idempotency
      // (the contract): without it the next run would charge again. Such keys post after.
      const modeRoll = idempotent ? keyRandom() : 0;
      const body =
        route === routeNames.pay
          ? bodyOf(order, sizeClassOf(keyRandom()), PAY_BODY_LIMIT, shape.ordered ? { customer: customerOf(order) } : {})
          : route === routeNames.alt
            ? bodyOf(order, smallSizeClassOf(keyRandom()), SMALL_BODY_LIMIT)
            : bodyOf(order, 'small', PAY_BODY_LIMIT, route === routeNames.st ? destinationOf(i) : {});
      pending.push({
        route,
        key,
        order,
        body,
        chargeIds: new Set(),
        idempotentDownstream: idempotent,
        protocolKeys: new Set(),
        hopeless: i % 5 === 4,
        // On an ordered pay route, two keys of every six retry first: k2 twice, k8 once, ...
        stutters: shape.ordered && route === routeNames.pay && i % 6 === 2 ? (i % 12 === 2 ? 2 : 1) : 0,
        fixable: i % 10 === 4,
        ledgerMode: modeRoll < 0.4 ? 'after' : modeRoll < 0.65 ? 'after-post-fails' : 'before',
        runsInBudget: 0,
        runs: [],
        everFailed: false,
        redrivesSeen: 0,
        effects: 0,
        excused: 0,
        failed: false,
        sends: 0,
        deferrals: 0,
        ingestSends: new Map(),
        duplicateWindows: new Set(),
        delivered: 0,
        answered: false,
        inFlight: 0,
        concurrent: false,
        home: i % regionCount,
        completions: new Map(),
      });
    }

    const pick = <T>(items: readonly T[], a: number): T | undefined => items[Math.floor(a * items.length)];
    /** Deliveries' arrivals and first 2xx answers, numbered in the order they happen. */
    let arrivals = 0;

    // ---- actors
    /**
     * A delivery of the key: its sender's (re)try, signed now, or `replay`: the first delivery's
     * captured bytes and headers posted again by someone else, at any age. A sender retries only
     * within its scheme's retry window; a copy asked for after it is a replay.
     */
    const deliver = async (k: KeyState, replay = false): Promise<void> => {
      const route = routes.get(k.route) as ResolvedRoute;
      const senderGaveUp = k.firstSentAt !== undefined && nowMs - k.firstSentAt > route.senderRetryWindowSeconds * 1000;
      const captured = k.captured;
      if ((replay || senderGaveUp) && captured !== undefined) {
        stats.replays++;
        trace?.(`replay of ${k.key}, ${((nowMs - (k.firstSentAt ?? nowMs)) / DAY).toFixed(1)} days after it was first sent`);
        await ingestActor(k, captured);
        return;
      }
      if (k.delivered > 0) k.duplicateWindows.add(Math.floor(nowMs / resendAfterMs));
      k.firstSentAt ??= nowMs;
      const signed = signDelivery(route.signature, secretOf(route), k.body, {
        nowSeconds: Math.floor(nowMs / 1000),
        ...(route.signature.scheme === 'standard-webhooks' ? { id: k.key } : {}),
      });
      // A proxy on the way may pad the key header with whitespace (defect 4): the signature
      // still verifies (the verifier trims it), and the key must be the same.
      const padding = route.signature.scheme === 'standard-webhooks' ? paddingOf(random()) : undefined;
      if (padding !== undefined) {
        signed['webhook-id'] = `${padding.before}${k.key}${padding.after}`;
        stats.paddedKeyHeaders++;
      }
      if (k.delivered > 0 && (route.signature.scheme === 'standard-webhooks' || route.signature.scheme === 'stripe')) stats.resignedRetries++;
      if (k.body.length > 200) stats.bodiesAtLimits++;
      const headers = { ...signed, 'idempotency-key': k.key, 'content-type': 'application/json' };
      k.captured ??= headers;
      await ingestActor(k, headers);
    };
    const ingestActor = async (k: KeyState, headers: Record<string, string>): Promise<void> => {
      await wakeWoken();
      // A sender's copies alternate between the Regions (latency-based DNS, a failover, an
      // endpoint per Region): each copy's claim meets the others' on the one table.
      const region = (k.home + k.delivered) % regionCount;
      if (region !== k.home) stats.crossRegionCopies++;
      k.delivered++;
      if (k.inFlight > 0) k.concurrent = true;
      k.inFlight++;
      stats.deliveries++;
      const arrival = ++arrivals;
      k.firstArrivalSeq ??= arrival;
      (k.arrivalSeqs ??= []).push(arrival);
      await sched.spawn(
        'ingest',
        `ingest ${k.key}`,
        async (actor) => {
          try {
            // Lambda's time left is the sandbox's own monotonic count: true time.
            const timeLeftMs = (): number => (actor.meta.deadlineMs as number) - nowMs;
            const outcome = await ingestDelivery(ingestDeps, { method: 'POST', routeName: k.route, headers, rawBody: k.body, bodyEncoding: 'utf8', timeLeftMs });
            trace?.(`ingest ${k.key} answered: ${outcome.kind}${outcome.kind === 'duplicate' ? ` ${outcome.answerAs}, repeats ${String(outcome.repeats)}` : ''}`);
            if (outcome.kind === 'duplicate') checkCount(k, outcome.repeats ?? 0);
            k.answered = true;
            k.lastAnsweredAt = nowMs;
            k.answeredSeq ??= ++arrivals;
            if (outcome.kind === 'accepted' && outcome.placeFailed === true) k.placeFailed = true;
          } catch (error) {
            // A 5xx (DynamoDB or SQS down) or a 4xx: the sender retries, as later duplicates of the schedule.
            trace?.(`ingest ${k.key} refused: ${String(error)}`);
            if ((error as { status?: number }).status === 413) stats.refusedTooLarge++;
          } finally {
            k.inFlight--;
          }
        },
        { deadlineMs: nowMs + INGEST_TIMEOUT_MS, arrival, region, keyState: k },
      );
    };

    const executorTimeoutMs = config.executorTimeoutSeconds * 1000;
    /**
     * The Lambda event source's poll: one ReceiveMessage of up to the batch size, handed to one
     * executor invocation as one event. SQS may answer out of order, and may hand out a message
     * another worker holds right now (simulated-sqs.ts [D1]). The records of the batch run in
     * parallel; the event source deletes the ones not reported in batchItemFailures once the
     * handler returns ("Reporting batch item failures", Lambda Developer Guide: "Lambda deletes
     * the messages that succeeded"), and nothing when the function fails or times out: then
     * the whole batch comes back after its visibility timeout.
     */
    /** The ids of messages the executor was handed at least once. */
    const delivered = new Set<string>();
    const poll = async (concurrent = false, region = 0): Promise<boolean> => {
      await wakeWoken();
      if (eventual) await replicateDue();
      const max = 1 + Math.floor(sqsRandom() * shape.batchSize);
      const inOrder = sqsRandom() < 0.5;
      const includeInFlight = concurrent || sqsRandom() < shape.concurrentReceive;
      // Each queue has an event source of its own: whichever the seed picks first polls first.
      const candidates = workQueuesOf(region, regionQueues[region]?.own === undefined ? 0 : sqsRandom());
      let queue = candidates[0] as SimulatedQueue;
      let messages: SimReceivedMessage[] = [];
      for (const candidate of candidates) {
        queue = candidate;
        messages = candidate.receive(max, { ...(inOrder ? {} : { random: sqsRandom }), includeInFlight });
        if (messages.length > 0) break;
      }
      if (messages.length === 0) return false;
      for (const m of messages) delivered.add(m.messageId);
      stats.executions++;
      const startedAt = nowMs;
      const label = `executor ${messages.map((m) => `${m.messageId}:${messageKey(m.body)}`).join(',')}`;
      trace?.(`poll: ${label} (receives ${messages.map((m) => m.attributes.ApproximateReceiveCount).join(',')})`);
      await sched.spawn(
        'executor',
        label,
        async () => {
          const event: SQSEvent = { Records: messages.map((m) => sqsRecordOf(m, queue.arn)) };
          const response = await handler(event, contextOf(startedAt + executorTimeoutMs, () => nowMs));
          const failures = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
          trace?.(`${label}: handed back ${[...failures].join(',') || 'none'}`);
          if (failures.size > 0 && failures.size < messages.length) stats.partialBatches++;
          // The event source deletes what succeeded: one more point where the worker can die.
          await sched.yieldPoint('eventSource.delete');
          for (const m of messages) if (!failures.has(m.messageId)) queue.delete(m.receiptHandle);
        },
        { messageIds: messages.map((m) => m.messageId), deadlineMs: startedAt + executorTimeoutMs, effectKeys: new Set<string>(), region },
      );
      return true;
    };
    /** Each Region's event source polls in turn, from a turn that moves on: whether any found work. */
    let pollTurn = 0;
    const pollAny = async (): Promise<boolean> => {
      for (let i = 0; i < regionCount; i++) {
        if (await poll(false, (pollTurn + i) % regionCount)) {
          pollTurn = (pollTurn + i + 1) % regionCount;
          return true;
        }
      }
      return false;
    };
    /** A lost ReceiveMessage answer: the count rises and the message hides, and nobody runs it. */
    const unseenReceive = (region: number): void => {
      const queue = workQueuesOf(region, regionQueues[region]?.own === undefined ? 0 : sqsRandom())[0] as SimulatedQueue;
      const before = new Map(queue.snapshot().map((m) => [m.messageId, m.receiveCount]));
      if (!queue.unseenReceive({ random: sqsRandom })) return;
      for (const m of queue.snapshot()) {
        if (m.receiveCount !== before.get(m.messageId)) wasted.set(m.messageId, (wasted.get(m.messageId) ?? 0) + 1);
      }
    };

    /**
     * Workers that died holding each message (by message id). Without a death, a message's
     * receives are bounded by 2 x maxAttempts + 1 (a run or a held lease each), under
     * maxReceiveCount; one death adds one receive and still fits. Two or more may push it to the DLQ.
     */
    const crashed = new Map<string, number>();
    /** Receives of each message that ran nothing of ours: lost answers, a second worker's copy. */
    const wasted = new Map<string, number>();
    const killActor = (actor: Actor, why: 'crash' | 'timeout'): void => {
      trace?.(`${why} kills ${actor.label} (#${actor.id}) at ${actor.waiters.map((w) => w.label).join(' | ')}`);
      sched.kill(actor);
      if (actor.kind === 'ingest' && actor.meta.placing === true) stats.killedBeforePlace++;
      // Its work may be out and a worker's lease may start the count: a death after the send began
      // is an answer it could have given, as one after v3's mark was (architecture.md#circuit-breaker).
      // (A Lambda timeout is noticed here when the actor is next stepped, later than it struck: the
      // send's own event number stands for it.)
      const pendingHits = actor.meta.pendingHits;
      if (actor.kind === 'ingest' && typeof pendingHits === 'number' && pendingHits > 0) {
        const k = actor.meta.keyState as KeyState;
        k.unexcusedHits = (k.unexcusedHits ?? 0) + pendingHits;
      }
      const sentAtSeq = actor.meta.sentAtSeq;
      if (actor.kind === 'ingest' && typeof sentAtSeq === 'number') {
        const k = actor.meta.keyState as KeyState;
        k.diedAfterSendSeq = Math.min(k.diedAfterSendSeq ?? sentAtSeq, sentAtSeq);
      }
      if (why === 'crash') stats.crashes++;
      else stats.timeouts++;
      for (const messageId of (actor.meta.messageIds as string[] | undefined) ?? []) crashed.set(messageId, (crashed.get(messageId) ?? 0) + 1);
      for (const effectOrder of (actor.meta.effectKeys as Set<string> | undefined) ?? []) {
        const k = keysByOrder.get(effectOrder);
        if (k !== undefined) k.excused++;
      }
    };

    /**
     * Steps an actor, unless Lambda would have timed it out by now. Strands that woke by
     * themselves (their own timer fired while they waited on the network) go first, each at
     * the strand that woke: in a world where every machine runs at once, they went on at that
     * instant, whatever other actors did to the clock since.
     */
    let waking = false;
    const wakeWoken = async (): Promise<void> => {
      if (waking) return;
      waking = true;
      try {
        for (let i = 0; i < 1_000; i++) {
          let next: { actor: Actor; at: number; index: number } | undefined;
          for (const actor of sched.parked()) {
            const woken = sched.wokenAt(actor);
            if (woken !== undefined && (next === undefined || woken.at < next.at)) next = { actor, ...woken };
          }
          if (next === undefined) return;
          trace?.(`${next.actor.label} (#${next.actor.id}) woke by its own timer at ${((next.at - EPOCH) / 1000).toFixed(3)} s`);
          await stepActor(next.actor, (next.index + 0.5) / next.actor.waiters.length);
        }
      } finally {
        waking = false;
      }
    };
    const stepActor = async (actor: Actor, pick = 0): Promise<void> => {
      await wakeWoken();
      // It may have been stepped to its end by now.
      if (!sched.parked().includes(actor)) return;
      const deadline = actor.meta.deadlineMs;
      // Woken by its own timer before its deadline: it went on then, and is not timed out.
      const woken = sched.wokenAt(actor);
      if (woken !== undefined && (typeof deadline !== 'number' || woken.at <= deadline)) pick = (woken.index + 0.5) / actor.waiters.length;
      else if (typeof deadline === 'number' && nowMs > deadline) {
        killActor(actor, 'timeout');
        return;
      }
      timers.fire();
      trace?.(`step ${actor.label} (#${actor.id}) at ${actor.waiters.map((w) => w.label).join(' | ')}`);
      await sched.step(actor, pick);
      if (actor.state === 'done' || actor.state === 'failed') trace?.(`${actor.label} (#${actor.id}) ${actor.state}${actor.state === 'failed' ? `: ${String(actor.error)}` : ''}`);
      // A function may fail on what it meets (DynamoDB or SQS errors, its timeout), never on its own code.
      if (actor.state === 'failed' && PROGRAMMING_ERRORS.some((kind) => actor.error instanceof kind)) {
        violations.push(`${actor.label} failed on a programming error: ${String(actor.error)}`);
      }
    };

    /**
     * One scheduled reconciler run, as the deployed function makes it (reconciler/lambda.ts):
     * through the cursor (reconcile-cursor.ts), with the deployed budget. It reconciles the
     * window an earlier run left unfinished (it died, threw, or ran out of budget) from where
     * that run stopped, else the usual 24 hours, starting no later than the end of the last
     * finished window. Runs here come hours or days apart, not hourly: a run that failed inside
     * a record's only window hands it on through the cursor, or the record is never looked at
     * (seed 634: the one run in k9's 24 h failed, and the next came 24.04 h after its receipt).
     * `toEnd`: run it to its end now, as an hourly run between two clock jumps would.
     * Answers whether the run left its window unfinished (it threw, died, ran out of budget,
     * or found the cursor held), when run to its end.
     */
    let lastReconcilerRunAt = nowMs;
    const runReconciler = async (toEnd = false, region = nextReconcilerRegion()): Promise<boolean> => {
      await wakeWoken();
      if (eventual) await replicateDue();
      stats.reconcilerRuns++;
      lastReconcilerRunAt = nowMs;
      let finished = false;
      const actor = await sched.spawn('reconciler', 'reconciler', async () => {
        // The deployed window by its own clock, clipped: nothing of the run was stamped before its start, less the skew.
        const window = defaultWindow(config, now());
        const report = await reconcileScheduled(
          {
            store: reconcilerStore,
            ledgers: new Map([['simpay', ledger]]),
            queue: gatedQueue,
            routes,
            routeState: reconcilerRouteState,
            bodies,
            order: orderOf(clientOf.reconciler),
            now,
            ...(expiryStore === undefined ? {} : { expiry: expiryStore }),
          },
          {
            current: { fromMs: Math.max(startMs - skewBoundMs - 1000, window.fromMs), toMs: window.toMs },
            ...(sweepOptions === undefined ? {} : { sweep: sweepOptions, minGapMs: notDueGapMs(config) }),
            budgetMs: DEPLOYED_BUDGET_MS,
            stuckAfterMs: config.reconciliation.stuckAfterSeconds * 1000,
            maxReenqueue: config.reconciliation.maxReenqueuePerRun,
          },
        );
        finished = report.skipped === undefined && !report.stoppedEarly;
        if (report.skipped !== undefined) stats.reconcilerSkips++;
        if (report.notDue !== undefined) stats.reconcilerNotDue++;
        stats.sweptItems += report.sweep?.swept ?? 0;
        if (report.cursor?.resumed === true) stats.reconcilerResumes++;
        trace?.(`reconciler: window ${report.window.from} .. ${report.window.to}${report.cursor?.resumed === true ? ' (resumed)' : ''}${report.skipped === undefined ? '' : ' skipped: the cursor is held'}${report.stoppedEarly ? ' stopped early' : ''}`);
        if (report.sweep !== undefined || report.notDue !== undefined) trace?.(`  sweep ${JSON.stringify(report.sweep ?? null)}${report.notDue === undefined ? '' : ' (window not due: another run finished it a moment ago)'}`);
        trace?.(`  counts ${JSON.stringify(report.counts)}; reversals ${report.reversals.map((r) => `${r.key}:${r.entryId}`).join(', ') || 'none'}; findings ${report.needsAttention.map((f) => `${f.key} ${f.finding}`).join(', ') || 'none'}`);
      }, { deadlineMs: nowMs + RECONCILER_TIMEOUT_MS, region });
      while (toEnd && actor.state === 'parked') await stepActor(actor);
      return !finished;
    };
    /**
     * The clock moved on to `target` with the reconciler's schedule kept: a run at least every
     * RECONCILER_GAP_MS of the way (the deployed schedule runs hourly; every 12 hours here, each
     * over its 24 h window, as the leaps do). A drain that followed a copy's growing hand-backs
     * leapt a day with no run, and a record whose ingest died between its resend claim and its
     * send left the window unseen (seed 99): no hourly schedule lets that happen.
     */
    const leapTo = async (target: number): Promise<void> => {
      for (let i = 0; i < 400 && target - lastReconcilerRunAt > RECONCILER_GAP_MS; i++) {
        setNow(Math.max(nowMs, lastReconcilerRunAt + RECONCILER_GAP_MS));
        await runReconciler(true);
        await drainActors();
      }
      setNow(target);
    };
    /** Each Region's schedule runs its own reconciler: runs take turns between the Regions. */
    let reconcilerTurn = 0;
    function nextReconcilerRegion(): number {
      const region = reconcilerTurn % regionCount;
      reconcilerTurn++;
      return region;
    }
    /**
     * The reconciler as its hourly schedule runs it through a quiet stretch: a run, then, while
     * its window is unfinished, the next hourly runs (at most two days of them). A tick here
     * stands for days of hourly runs; one run alone would leave a window the budget cannot
     * finish in one run (slow answers, a long window after days without a finished one) to the
     * next tick, days on, and the parked sweep of the runs in between would never happen: the
     * parked sweep keeps a paused route's records from expiring only when their expiry comes
     * within 7 days (seed 247: a window resumed every 6 days for a month, and a parked record
     * on a paused route expired).
     */
    const runReconcilerHourly = async (): Promise<void> => {
      for (let hour = 0; hour < 48 && (await runReconciler(true)); hour++) setNow(nowMs + HOUR);
      // Every Region's schedule runs within the hour: the next Region's run, minutes after the one
      // that finished the window, finds it not due and spends its budget on the expiry sweep.
      if (regionCount > 1) {
        setNow(nowMs + 20 * 60_000);
        await runReconciler(true);
      }
    };

    // Work that could still heal itself never reaches the DLQ; only workers that died may push
    // it there. Looked at before every redrive, which would take the evidence away.
    const seenInDlq = new Set<string>();
    /** Bodies judged once: a redriven copy (a move task gives it a new id) may go back without a new receive. */
    const judged = new Set<string>();
    /** When each dead-letter copy seen in the DLQ leaves it by retention, by deadLetterId. */
    const dlqExpiries = new Map<string, number>();
    const checkDlq = (): void => {
      for (const m of dlqs.flatMap((q) => q.snapshot())) {
        const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
        if (id !== undefined) dlqExpiries.set(id, Math.max(dlqExpiries.get(id) ?? 0, m.expiresAt));
        noteBouncedUnseen(m);
        if (seenInDlq.has(m.messageId)) continue;
        seenInDlq.add(m.messageId);
        if (judged.has(m.body)) continue;
        judged.add(m.body);
        const body = JSON.parse(m.body) as { route?: string; key?: string; deadLetterId?: string };
        const deaths = crashed.get(m.messageId) ?? 0;
        const lost = wasted.get(m.messageId) ?? 0;
        if (body.deadLetterId !== undefined || deaths + lost >= 2) continue;
        violations.push(`${String(body.key)}: a work message reached the DLQ though ${deaths} of the workers holding it died and ${lost} of its receives ran nothing`);
      }
    };
    /**
     * A person may redrive a dead-letter copy at any time while it waits in the DLQ: its record
     * must outlive it (`expiresAt` at or past the instant the copy leaves the DLQ by retention),
     * or the redrive is refused as "record expired" and accepted work can never run (defect 7).
     * Only the record's current copy is judged: an older one (an SQS duplicate of a copy since
     * redriven) names a deadLetterId the record no longer has, and its redrive is refused anyway.
     */
    /**
     * A person's copy that no receiver was ever handed: where a move task keeps the receive
     * count (moveTaskResetsReceiveCount false, the worst case AWS does not document), SQS moves
     * it straight back to the DLQ at its first receive, with the move's stamp. No code of ours
     * sees it, so nothing can keep its record for it (seeds 542, 97); `retryproof dlq redrive`
     * makes a message with a count of 0, which runs.
     */
    const neverHanded = (m: { readonly messageId: string; readonly sentAt: number; readonly body: string }): boolean => {
      const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
      return id !== undefined && personCopies.has(`${id}\u0000${String(m.sentAt)}`) && !delivered.has(m.messageId);
    };
    /** Marks the key of a copy SQS sent straight back unseen (neverHanded); answers whether `m` is one. */
    const noteBouncedUnseen = (m: { readonly messageId: string; readonly sentAt: number; readonly body: string }): boolean => {
      if (!neverHanded(m)) return false;
      const body = JSON.parse(m.body) as { route?: string; key?: string };
      const k = body.route === undefined || body.key === undefined ? undefined : keys.get(workKey(body.route, body.key));
      if (k !== undefined) k.bouncedUnseen = true;
      return true;
    };
    const checkCopiesOutliveRecords = async (): Promise<void> => {
      for (const m of dlqs.flatMap((q) => q.snapshot())) {
        if (m.expiresAt <= nowMs) continue;
        const body = JSON.parse(m.body) as { route?: string; key?: string; deadLetterId?: string };
        if (body.deadLetterId === undefined || body.route === undefined || body.key === undefined) continue;
        const k = keys.get(workKey(body.route, body.key));
        if (noteBouncedUnseen(m)) continue;
        const record = await observerStore.get(body.route, body.key);
        const leaves = ((m.expiresAt - startMs) / DAY).toFixed(1);
        if (record === undefined) {
          if (k?.failed === true && k.lastDeadLetterId === body.deadLetterId && k.bouncedUnseen !== true) {
            violations.push(`${body.key}: its dead-letter copy waits in the DLQ until day ${leaves}, but its record is gone (a redrive is refused: accepted work can never run)`);
          }
          continue;
        }
        if (record.status !== RECORD_STATUS.failed || record.deadLetterId !== body.deadLetterId) continue;
        // A person's copy made once its record had expired, of work whose copy SQS had sent
        // straight back unseen: the record expired while no code of ours could see that copy,
        // as when it is gone (above), only not deleted yet (seed 1285, TTL 19 days: a copy
        // bounced on days 0.6, 1.6 and 7.0, then redriven with the CLI on day 20.7; its record
        // expired on day 19.0).
        if (k?.bouncedUnseen === true && record.expiresAt * 1000 <= m.sentAt) continue;
        if (record.expiresAt * 1000 < m.expiresAt) {
          trace?.(`${body.key}: dead-letter copy ${m.messageId} stamped day ${((m.sentAt - startMs) / DAY).toFixed(2)} outlives its record`);
          violations.push(
            `${body.key}: its dead-letter copy waits in the DLQ until day ${leaves}, but its record expires on day ` +
              `${((record.expiresAt * 1000 - startMs) / DAY).toFixed(1)} (a redrive between is refused: accepted work can never run)`,
          );
        }
      }
    };
    /** Notes the dead-letter copies on the work queue stamped now: the ones a person's redrive just made. */
    const notePersonCopies = (): void => {
      for (const m of allWorkQueues.flatMap((q) => q.snapshot())) {
        const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
        if (id !== undefined && m.sentAt === nowMs) personCopies.add(`${id}\u0000${String(m.sentAt)}`);
      }
    };
    /** A person's console redrive of each Region's DLQ (the console works on one Region's queues). */
    const moveTask = (): void => {
      checkDlq();
      for (const dlq of dlqs) {
        const moved = dlq.startMessageMoveTask();
        trace?.(`a person's console redrive (move task) moves ${moved} dead-letter ${moved === 1 ? 'copy' : 'copies'} from ${dlq.name} to its work queue`);
      }
      notePersonCopies();
    };

    const redriveCli = (): void => {
      checkDlq();
      // The CLI's local redrive: receive from the DLQ, send to the work queue, delete, Region by Region.
      for (let r = 0; r < regionCount; ) {
        const dlq = dlqs[r] as SimulatedQueue;
        const batch = dlq.receive(10);
        if (batch.length === 0) {
          r++;
          continue;
        }
        for (const m of batch) {
          // As `retryproof dlq redrive` does it locally: back to the queue of the route it names.
          const queue = queueForRoute(r, m.messageAttributes.route?.stringValue);
          queue.send(m.body, Object.fromEntries(Object.entries(m.messageAttributes).map(([n, v]) => [n, { DataType: v.dataType, ...(v.stringValue === undefined ? {} : { StringValue: v.stringValue }) }])));
          dlq.delete(m.receiptHandle);
        }
        notePersonCopies();
      }
    };

    // ---- the schedule
    /**
     * The takeover boundary for `holder`, stepped into its action first if it is not there yet:
     * the clock lands within twice the skew bound before its deadline (b below 0.5), or at the
     * earliest instant another worker may take the lease over (b from 0.5); another worker gets
     * the same message at once (SQS may hand out a message another worker holds) and goes as far
     * as its action's first call; then the holder goes on. A takeover margin too small for the
     * clocks' skew, or a holder's deadline later than its lease allows, shows as two runs at once.
     */
    const takeoverEdge = async (holder: Actor, b: number): Promise<void> => {
      const inAction = (p: Actor): boolean => p.waiters.some((w) => w.label.startsWith('downstream.'));
      for (let i = 0; i < 12 && holder.state === 'parked' && !inAction(holder); i++) await stepActor(holder);
      if (holder.state !== 'parked' || !inAction(holder)) return;
      const holderId = holder.id;
      const k = [...keys.values()].find((c) => c.lease?.holder === holderId);
      const route = k === undefined ? undefined : routes.get(k.route);
      if (k?.lease === undefined || route === undefined) return;
      // The holder's deadline in true time: its lease's end by its own clock, less its offset
      // and the lease margin (route-config.ts, leaseMarginSeconds).
      const deadlineTrue = k.lease.untilMs - holder.skewMs - leaseMarginSeconds(route.leaseSeconds) * 1000;
      // The earliest takeover: the lease's end plus TAKEOVER_MARGIN_MS by the newcomer's clock,
      // which may run up to the bound ahead. Never past the holder's Lambda timeout: a holder
      // killed there shows nothing.
      const u = (b % 0.5) * 2;
      const holderEndsAt = typeof holder.meta.deadlineMs === 'number' ? holder.meta.deadlineMs : Number.POSITIVE_INFINITY;
      if (b < 0.5) setNow(deadlineTrue - u * 2 * skewBoundMs);
      stats.edges++;
      const before = new Set(sched.live().map((p) => p.id));
      if (!(await poll(true, (holder.meta.region as number | undefined) ?? 0))) return;
      const newcomer = sched.parked().find((p) => p.kind === 'executor' && !before.has(p.id));
      // The earliest takeover: the lease's end plus TAKEOVER_MARGIN_MS by the newcomer's own
      // clock, exactly (its clock is known once it runs), or up to the bound earlier.
      if (b >= 0.5) setNow(Math.min(holderEndsAt, k.lease.untilMs + TAKEOVER_MARGIN_MS - (newcomer?.skewMs ?? skewBoundMs) - (u < 0.5 ? 0 : (u - 0.5) * 2 * skewBoundMs)));
      trace?.(`edge: holder #${holder.id} (skew ${holder.skewMs} ms) of ${k.key}, its deadline at ${deadlineTrue - EPOCH} ms, newcomer #${String(newcomer?.id)} (skew ${String(newcomer?.skewMs)} ms)`);
      for (let i = 0; i < 12 && newcomer?.state === 'parked' && !newcomer.waiters.some((w) => w.label === 'downstream.prepare'); i++) await stepActor(newcomer);
      if (newcomer?.state === 'parked') {
        const at = newcomer.waiters.findIndex((w) => w.label === 'downstream.prepare');
        if (at >= 0) await stepActor(newcomer, at / newcomer.waiters.length);
      }
      await stepActor(holder);
    };

    /**
     * Before the clock moves, most invocations finish: a healthy one takes milliseconds. The
     * rest stay where they are, stalled (a long pause, a slow network), and may outlive their
     * lease or their Lambda timeout while the clock runs.
     */
    const finishMost = async (): Promise<void> => {
      for (const actor of sched.parked()) {
        if (random() >= 0.75) continue;
        while (actor.state === 'parked') await stepActor(actor);
      }
    };
    const stallLeaseMs = Math.min(...config.routes.map((r) => r.leaseSeconds)) * 1000;
    const advance = (ms: number): void => {
      setNow(nowMs + Math.max(1, Math.round(ms)));
    };
    // A sender retries a delivery until it gets a 2xx: a key none of whose copies was answered
    // (each died, or got our 5xx) comes once more, as its sender's next retry.
    /**
     * DynamoDB's TTL deletion, at a seeded moment: an item past its expiry is deleted only
     * later, up to 48 hours late ("DynamoDB typically deletes expired items within two days of
     * expiration. ... Items that have expired and not been deleted will still show up in reads,
     * queries, and scans", DynamoDB API Reference, UpdateTimeToLive). Each item's lag is drawn
     * from the seed and the item; a deletion is conditional on the expiry it judged, as TTL's
     * own deletion of an item whose expiry was moved on meanwhile would not happen.
     */
    const ttlSweep = async (): Promise<void> => {
      // An MRSC global table has no TTL (Developer Guide, multi-Region strong consistency): with
      // several Regions on one table nothing is deleted by expiry; the write conditions alone
      // make an expired record count as absent. Each replica of the eventually consistent
      // control has TTL of its own.
      if (regionCount > 1 && !eventual) return;
      for (const table of new Set(regionTables)) await ttlSweepOf(table);
    };
    const ttlSweepOf = async (table: string): Promise<void> => {
      const nowSeconds = Math.floor(nowMs / 1000);
      let startKey: Record<string, AttributeValue> | undefined;
      do {
        const page = await dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey }));
        for (const item of page.Items ?? []) {
          const expiresAt = Number(item.expiresAt?.N ?? Number.NaN);
          if (!Number.isFinite(expiresAt) || expiresAt > nowSeconds) continue;
          const pk = item.pk?.S ?? '';
          const sk = item.sk?.S ?? '';
          if (nowSeconds < expiresAt + ttlLagSeconds(seed, pk, sk, expiresAt)) continue;
          try {
            await dynamo.send(
              new DeleteItemCommand({
                TableName: table,
                Key: { pk: { S: pk }, sk: { S: sk } },
                ConditionExpression: 'expiresAt = :expiresAt',
                ExpressionAttributeValues: { ':expiresAt': { N: String(expiresAt) } },
              }),
            );
            stats.ttlDeletions++;
            trace?.(`TTL deletes ${pk} ${sk} (expired ${((nowSeconds - expiresAt) / 3600).toFixed(1)} h ago)`);
          } catch (error) {
            if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
          }
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    };
    /** Every actor to its end: before a long quiet stretch, healthy invocations finish. */
    const runAllToEnd = async (): Promise<void> => {
      for (let i = 0; i < 20_000; i++) {
        const actor = sched.parked()[0];
        if (actor === undefined) return;
        await stepActor(actor);
      }
      violations.push('actors did not finish before a leap');
    };
    /**
     * Days or weeks of quiet in a long run: no deliveries, but the event source keeps polling
     * (each message handled when it is visible again), TTL deletes what expired, and the hourly
     * reconciler runs. Its runs are simulated where the state can have changed: every 12 hours
     * in the first day after activity (each run reads 24 hours), then at least every 6 days
     * (its parked sweep keeps a paused route's records 7 days ahead, and its stranded sweep reads
     * any age); an hourly run in between reads an empty window and finds nothing new.
     * `redrivesNowAndThen`: a person redrives the DLQ from the console now and then meanwhile.
     */
    const quietLeap = async (ms: number, redrivesNowAndThen = true): Promise<void> => {
      // Outages and brownouts last hours (route-config.ts, OUTAGE_HORIZON_SECONDS: a day at
      // most), not the days a quiet stretch spans: they are over by its start. A late redrive
      // leapt weeks with a brownout on, and each receive of a message for 6 days was throttled
      // until it reached the DLQ (seed 1147).
      sqsDown = false;
      isolated = undefined;
      if (dynamoPlan === BROWNOUT) dynamoPlan = shape.dynamo;
      const until = nowMs + ms;
      let quietSince = nowMs;
      for (let round = 0; round < 400 && nowMs < until; round++) {
        await runAllToEnd();
        let worked = false;
        for (let i = 0; i < 50 && (await pollAny()); i++) {
          worked = true;
          await runAllToEnd();
        }
        if (worked) quietSince = nowMs;
        const nextRun = nowMs - quietSince < DAY ? 12 * HOUR : 6 * DAY;
        const hidden = allWorkQueues.flatMap((q) => q.snapshot().map((m) => m.visibleAt)).filter((t) => t > nowMs);
        const nextMessage = hidden.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...hidden);
        const target = Math.min(until, nowMs + nextRun, nextMessage);
        // To the next message, the schedule's runs on the way; a leap of its own runs it below.
        if (target === nextMessage) await leapTo(target);
        else setNow(target);
        if (target === nextMessage && target < until) continue;
        await checkCopiesOutliveRecords();
        await ttlSweep();
        checkDlq();
        // Now and then a person redrives the DLQ from the console: redrives weeks apart, each
        // making FAILED work run again (and, if it fails again, a new copy that must outlive it).
        // (Not while the person of the last-day redrives is at the DLQ: they redrive on last days only.)
        if (random() < 0.25 && redrivesNowAndThen) moveTask();
        await runReconcilerHourly();
        await runAllToEnd();
      }
      setNow(Math.max(nowMs, until));
    };
    /**
     * The quiet weeks at the end of a long run with a person who redrives the DLQ on the last
     * day of its oldest copy, each time (RunShape.lastDayRedrives), until `untilMs`. A redriven
     * copy of hopeless work fails again and sends a new one, so one body object is read every
     * 13 to 14 days for weeks; a console redrive that SQS sends straight back (its receive count
     * kept) leaves the copy unread 14 days more, until a CLI redrive runs it.
     */
    const lastDayRandom = prng(seed ^ 0x1a57d);
    const redriveOnLastDays = async (untilMs: number): Promise<void> => {
      const oldestEnd = (): number => Math.min(...dlqs.flatMap((q) => q.snapshot().map((m) => m.expiresAt)).filter((t) => t > nowMs));
      for (let i = 0; i < 100 && nowMs < untilMs; i++) {
        const u = lastDayRandom();
        const fromConsole = lastDayRandom() < 0.5;
        // None there yet (work failing again reaches the DLQ after its receives): a quiet day.
        if (oldestEnd() === Number.POSITIVE_INFINITY) {
          await quietLeap(Math.min(DAY, untilMs - nowMs), false);
          continue;
        }
        const target = oldestEnd() - (0.05 + u * 0.9) * DAY;
        if (target >= untilMs) return;
        if (target > nowMs) await quietLeap(target - nowMs, false);
        stats.lateRedrives++;
        trace?.(`a person redrives the DLQ on its oldest copy's last day, ${fromConsole ? 'from the console' : 'with the CLI'}`);
        if (fromConsole) moveTask();
        else redriveCli();
      }
    };
    const answerEveryKey = async (): Promise<void> => {
      for (let round = 0; round < 3; round++) {
        await drainActors();
        // A sender retries only within its scheme's retry window (deliver makes a later copy a replay).
        const unanswered = [...keys.values()].filter(
          (k) => !k.answered && (k.firstSentAt === undefined || nowMs - k.firstSentAt <= (routes.get(k.route)?.senderRetryWindowSeconds ?? 0) * 1000),
        );
        if (unanswered.length === 0) return;
        for (const k of unanswered) await deliver(k);
      }
      await drainActors();
    };
    const drainActors = async (): Promise<void> => {
      for (let i = 0; i < 20_000; i++) {
        const actor = sched.parked()[0];
        if (actor === undefined) return;
        await stepActor(actor);
      }
      violations.push('actors did not finish while settling');
    };
    const drainQueue = async (): Promise<void> => {
      for (let round = 0; round < 400; round++) {
        await drainActors();
        if (await pollAny()) continue;
        const depth = allWorkQueues.reduce((n, q) => n + q.depth, 0);
        if (depth === 0) return;
        // Messages in flight or hidden: move the clock to the next one's return.
        const next = Math.min(...allWorkQueues.flatMap((q) => q.snapshot().map((m) => m.visibleAt)));
        await leapTo(Math.max(nowMs + 1, next));
      }
      violations.push(`the work queue did not drain while settling (${allWorkQueues.reduce((n, q) => n + q.depth, 0)} messages left)`);
    };

    trace?.(`run of seed ${seed}, ${ops.length} operations`);
    if (shape.longPause) {
      // Paused from the start to the settle: longer than a place lives (RunShape.longPause).
      stats.longPauses++;
      await sched.spawn('operator', `pause ${routeNames.pay} for weeks`, async () => {
        await control.pause(routeNames.pay, 'simulated pause of weeks');
      });
      await drainActors();
    }
    for (const { op, a, b } of ops) {
      stats.steps++;
      if (eventual) await replicateDue();
      trace?.(`op ${op} a=${a.toFixed(3)} b=${b.toFixed(3)}`);
      switch (op) {
        case 'deliver': {
          const k = pending.shift();
          if (k === undefined) break;
          keys.set(workKey(k.route, k.key), k);
          keysByOrder.set(k.order, k);
          await deliver(k);
          break;
        }
        case 'duplicate': {
          const k = pick([...keys.values()], a);
          if (k !== undefined) await deliver(k);
          break;
        }
        case 'burst': {
          // Copies at once: each one's ingest is an actor; the steps that follow interleave them.
          const k = pick([...keys.values()], a);
          if (k === undefined) break;
          const copies = 2 + Math.floor(b * 4);
          for (let i = 0; i < copies; i++) await deliver(k);
          break;
        }
        case 'poll':
          await poll(false, regionAt(a));
          break;
        case 'edge': {
          // The takeover boundary: a worker inside its action (one already there, or a parked one
          // stepped until it is).
          const inAction = (p: Actor): boolean => p.waiters.some((w) => w.label.startsWith('downstream.'));
          const holder = pick(sched.parked().filter((p) => p.kind === 'executor' && inAction(p)), a) ?? pick(sched.parked().filter((p) => p.kind === 'executor'), a);
          if (holder !== undefined) await takeoverEdge(holder, b);
          break;
        }
        case 'slow-lease': {
          // A lease write answered late: a worker about to send its lease write gets the answer
          // 3 to 12 s after DynamoDB acted (the lease is 3 x the action time, 15 s here; its
          // action deadline ends 2 s before). Then the clock lands at the earliest instant
          // another worker may take over. A deadline counted from after the write instead of
          // from before it (defect 11) runs past the lease there: two runs at once.
          const atLease = (p: Actor): boolean => p.waiters.some((w) => w.label === 'store.acquireLease');
          let holder = pick(sched.parked().filter((p) => p.kind === 'executor' && atLease(p)), a);
          if (holder === undefined) {
            // None is about to lease: a new invocation, stepped as far as its lease write.
            const before = new Set(sched.live().map((p) => p.id));
            if (!(await poll(false, regionAt(a))) && !(await poll(true, regionAt(a)))) break;
            holder = sched.parked().find((p) => p.kind === 'executor' && !before.has(p.id));
            for (let i = 0; i < 6 && holder?.state === 'parked' && !atLease(holder); i++) await stepActor(holder);
            if (holder?.state !== 'parked' || !atLease(holder)) break;
          }
          const at = holder.waiters.findIndex((w) => w.label === 'store.acquireLease');
          slowAnswerFor.set(holder.id, 3_000 + Math.floor(((b * 7) % 1) * 9_000));
          stats.slowLeases++;
          // (The write goes out once the actor's step has run the store's call as far as its I/O.)
          await stepActor(holder, at / holder.waiters.length);
          // The exact earliest takeover instant for the newcomer's clock.
          await takeoverEdge(holder, 0.5 + b / 4);
          slowAnswerFor.delete(holder.id);
          break;
        }
        case 'crash-after-post': {
          // A worker dies between its ledger post and its effect (defect 8): its entry stands
          // with no charge of its own, and the next run posts and charges. The reconciler must
          // keep the completing run's entry; keeping the earliest reverses the one real charge.
          const postedNoEffect = (p: Actor): boolean =>
            ((p.meta.postedFirst as Set<string> | undefined)?.size ?? 0) > 0 && p.waiters.some((w) => w.label === 'downstream.charge');
          const executors = (): Actor[] => sched.parked().filter((p) => p.kind === 'executor');
          let victim = pick(executors().filter(postedNoEffect), a);
          if (victim === undefined) {
            // None is there: one about to post first, or any worker, stepped until it has posted.
            const candidate = pick(executors().filter((p) => p.waiters.some((w) => w.label === 'ledger.post-first')), a) ?? pick(executors(), a);
            for (let i = 0; i < 10 && candidate?.state === 'parked' && !postedNoEffect(candidate); i++) {
              const at = candidate.waiters.findIndex((w) => w.label === 'ledger.post-first');
              await stepActor(candidate, Math.max(0, at) / candidate.waiters.length);
            }
            if (candidate?.state === 'parked' && postedNoEffect(candidate)) victim = candidate;
          }
          if (victim === undefined) break;
          stats.cutsAfterPost++;
          killActor(victim, 'crash');
          break;
        }
        case 'step': {
          const actor = pick(sched.parked(), a);
          if (actor !== undefined) await stepActor(actor, b);
          break;
        }
        case 'crash': {
          // Any parked actor but an ingest inside its mark: a function that dies in the one round
          // trip between its mark and its answer has marked an answer it could have given, and
          // the design counts it so (test/breaker/brownout.test.ts; docs/architecture.md, "When
          // it trips"). Its Lambda timeout cannot land there: the mark ends 1 s before it.
          const actor = pick(sched.parked().filter((p) => p.meta.marking !== true), a);
          if (actor !== undefined) killActor(actor, 'crash');
          break;
        }
        case 'tick':
          await finishMost();
          advance(200 + a * 3_000);
          break;
        case 'wait':
          await finishMost();
          advance(10_000 + a * 200_000);
          break;
        case 'jump':
          await finishMost();
          stats.clockJumps++;
          advance(20 * 60_000 + a * 70 * 60_000);
          break;
        case 'stall': {
          // Every parked invocation stalls (a long GC pause, a slow network) past the lease it may
          // hold, but not past its Lambda timeout, which is the longest lease plus the completion
          // margin: nothing finishes first. A stalled worker then wakes after another may have
          // taken its record; only the lease token keeps its late writes out.
          stats.stalls++;
          advance(stallLeaseMs + a * (COMPLETION_MARGIN_SECONDS * 1000 - 1));
          break;
        }
        case 'leap': {
          await finishMost();
          stats.clockJumps++;
          // Outages and brownouts last hours, not the days a leap spans: they are over by its
          // first half-day (quietLeap says why).
          sqsDown = false;
          isolated = undefined;
          if (dynamoPlan === BROWNOUT) dynamoPlan = shape.dynamo;
          if (shape.long) {
            // Days to weeks in a run of weeks (see quietLeap).
            await quietLeap((2 + a * 12) * DAY);
            break;
          }
          // A day or two: the hourly reconciler runs meanwhile (every 12 hours here, each over 24).
          const halfDays = 2 + Math.floor(a * 3);
          for (let i = 0; i < halfDays; i++) {
            advance(12 * HOUR);
            await runReconciler(true);
          }
          break;
        }
        case 'replay': {
          // Half the time the replayer aims at the oldest capture: the one whose record may have
          // expired, where a replay is most harmful (a new generation of paid work).
          const captures = [...keys.values()].filter((c) => c.captured !== undefined);
          const oldest = captures.reduce<KeyState | undefined>((o, c) => (o === undefined || (c.firstSentAt ?? Infinity) < (o.firstSentAt ?? Infinity) ? c : o), undefined);
          const k = b < 0.5 ? oldest : pick(captures, a);
          if (k !== undefined) await deliver(k, true);
          break;
        }
        case 'ttl':
          await ttlSweep();
          break;
        case 'reconcile':
          await runReconciler(false, regionAt(a));
          break;
        case 'isolate':
          // A Region is cut off from the others (its DynamoDB replica loses the quorum) for a
          // while, and comes back: its senders' copies meet 5xx answers and are sent again.
          if (regionCount === 1) break;
          if (isolated === undefined) {
            isolated = regionAt(a);
            stats.isolations++;
            trace?.(`Region ${isolated} is isolated`);
          } else {
            trace?.(`Region ${isolated} rejoins`);
            isolated = undefined;
          }
          break;
        case 'pause': {
          const route = a < 0.8 && !shape.longPause ? routeNames.pay : routeNames.alt;
          stats.pauses++;
          await sched.spawn('operator', `pause ${route}`, async () => {
            await control.pause(route, 'simulated operator pause');
          }, { region: regionAt(b) });
          break;
        }
        case 'resume': {
          const route = a < 0.8 && !shape.longPause ? routeNames.pay : routeNames.alt;
          stats.resumes++;
          await sched.spawn('operator', `resume ${route}`, async () => {
            await control.resume(route);
          }, { region: regionAt(b) });
          break;
        }
        case 'redrive-console':
          moveTask();
          break;
        case 'late-redrive': {
          // A person redrives on a copy's last day (defect 7). In a run of weeks, the clock goes
          // quietly to within a day of the oldest dead-letter copy's end of retention, and the
          // DLQ is redriven. Work that fails again sends a new copy, which waits 14 days more:
          // a record must outlive each copy of it, however many redrives it has had.
          if (!shape.long) break;
          // None there yet: a quiet hour or two first, in which hopeless work spends its budget.
          if (dlqs.every((q) => q.snapshot().length === 0)) await quietLeap((1 + a) * HOUR);
          const ends = dlqs.flatMap((q) => q.snapshot().map((m) => m.expiresAt));
          if (ends.length === 0) break;
          const target = Math.min(...ends) - (0.05 + a * 0.9) * DAY;
          if (target > nowMs) await quietLeap(target - nowMs);
          stats.lateRedrives++;
          moveTask();
          break;
        }
        case 'redrive-cli':
          redriveCli();
          break;
        case 'redrive-bulk': {
          // A person's `retryproof redrive`: one route or all, all of time or the last hours, FAILED
          // records only or PARKED ones too; interleaved with everything else, and crash-prone.
          const all = [...routes.keys()];
          const selected = a < 0.4 ? all : [a < 0.7 ? routeNames.pay : routeNames.alt];
          const sinceMs = b < 0.5 ? undefined : nowMs - (1 + b * 6) * HOUR;
          stats.bulkRedrives++;
          await sched.spawn('operator', `bulk redrive ${selected.join(',')}`, async () => {
            const out = await bulk.run({ routes: selected, ...(sinceMs === undefined ? {} : { sinceMs }), includeParked: b > 0.8 }, { ratePerSecond: 1e9 });
            stats.bulkRedriven += out.redriven;
          }, { region: regionAt(b) });
          break;
        }
        case 'sqs-outage':
          sqsDown = !sqsDown;
          if (sqsDown) stats.outages++;
          break;
        case 'ddb-brownout':
          dynamoPlan = dynamoPlan === BROWNOUT ? shape.dynamo : BROWNOUT;
          break;
        case 'sqs-duplicate':
          // At-least-once delivery: another stored copy of a message (in either queue) comes back.
          (a < 0.8 ? workQueuesOf(regionAt(b), a / 0.8)[0] : dlqs[regionAt(b)])?.duplicate({ random: sqsRandom });
          break;
        case 'unseen-receive':
          unseenReceive(regionAt(b));
          break;
      }
    }

    // A run of weeks lasts past 40 days: past the TTL (35 days, or 19) and the queues' retention (14).
    sqsDown = false;
    if (dynamoPlan === BROWNOUT) dynamoPlan = shape.dynamo;
    if (shape.long && nowMs - startMs < LONG_RUN_MS) {
      const untilMs = LONG_RUN_MS + startMs + a0(seed) * 3 * DAY;
      if (shape.lastDayRedrives) await redriveOnLastDays(untilMs);
      await quietLeap(untilMs - nowMs, !shape.lastDayRedrives);
    }
    if (shape.long) {
      // A replayer who kept every capture posts each once more, weeks on: past the records' TTL
      // (35 days) and TTL's lag, where only the replay memory stands between a captured body
      // signed without a timestamp and a new generation of paid work (defect 3).
      await ttlSweep();
      for (const k of keys.values()) if (k.captured !== undefined) await deliver(k, true);
    }

    // ---- settle: no more faults; let every actor end, then let the queue and the reconciler do their work.
    sqsDown = false;
    dynamoPlan = undefined;
    if (shape.longPause) {
      await drainActors();
      await sched.spawn('operator', `resume ${routeNames.pay} after weeks`, async () => {
        await control.resume(routeNames.pay);
      });
      await drainActors();
    }
    await answerEveryKey();
    for (let round = 0; round < 3; round++) {
      await drainQueue();
      advance((STUCK_AFTER_SECONDS + config.queue.resendAfterSeconds + 60) * 1000);
      await runReconciler();
      await drainActors();
      // A person redrives what reached the DLQ once, the way the seed says: FAILED work runs again,
      // once: the console's move task, the CLI's receive-send-delete, or the CLI's bulk redrive
      // of every FAILED record (whose DLQ copies then stay behind, harmless, and are moved too).
      if (round === 0) {
        const how = random();
        if (how < 0.35) moveTask();
        else if (how < 0.7) redriveCli();
        else {
          // The incident is over: half the hopeless keys' downstream is fixed, so their redriven
          // work completes (and must leave the failed index), the rest fails again.
          downstreamFixed = true;
          stats.bulkRedrives++;
          await sched.spawn('operator', 'bulk redrive of every route', async () => {
            stats.bulkRedriven += (await bulk.run({ routes: [...routes.keys()] }, { ratePerSecond: 1e9 })).redriven;
          });
          await drainActors();
          await drainQueue();
          if (how > 0.85) moveTask();
        }
      }
    }
    await drainQueue();
    await runReconciler();
    await drainActors();
    // The schedule's next run, when the settle leaves accepted work only the reconciler can send.
    // The settle's runs come minutes apart, and a run that finds the window finished less than
    // half an interval ago is not due and does nothing but sweep (reconcile-cursor.ts, minGapMs).
    // A record whose resend failed in the last due run before the settle (its body object's read
    // failed: markStranded, for the next run) waited for a run the settle never made (seed 1963).
    // The deployed schedule makes it within the hour. Only a run left so pays for it: every other
    // run ends as it did.
    let waiting = false;
    for (const k of keys.values()) {
      const record = await observerStore.get(k.route, k.key);
      if (record !== undefined && strandedAtEnd(k, record, routes, nowMs)) waiting = true;
    }
    if (waiting) {
      advance(HOUR);
      await runReconciler(true);
      await drainActors();
      await drainQueue();
      await drainActors();
    }

    // The control's tables agree once every write has replicated: the invariants read Region 0's.
    if (eventual) await replicateDue(true);
    stats.multiRegionRuns = regionCount > 1 ? 1 : 0;
    stats.replicatedConflicts = dynamoStats.replicatedConflicts;
    stats.maxClockSkewMs = sched.maxSkewMs;
    for (const q of [...allWorkQueues, ...dlqs]) {
      stats.sqsDuplicates += q.stats.duplicates;
      stats.concurrentDeliveries += q.stats.concurrentDeliveries;
      stats.unseenReceives += q.stats.unseenReceives;
    }
    stats.ambiguousWrites = dynamoStats.ambiguousWrites;
    stats.throttles = dynamoStats.throttles;
    stats.slowAnswers = dynamoStats.slowAnswers;
    for (const client of faultClients) client.destroy();
    stats.horizonDays = (nowMs - startMs) / DAY;
    stats.claimCheckAllRuns = shape.claimCheck.all ? 1 : 0;
    stats.shortTtlRuns = shape.shortTtl ? 1 : 0;
    stats.deployedShardRuns = shape.timeShards === EVENTS_TABLE.timeShards ? 1 : 0;
    if (shape.ordered) {
      stats.orderedRuns = 1;
      // Per customer: every run at an earlier place ended before any at a later place began
      // (sim-ordering.ts). The control (a table per Region) has no one line to read.
      if (!eventual) {
        const ordered = [...keys.values()]
          .filter((k) => k.route === routeNames.pay)
          .map((k) => ({
            route: k.route,
            key: k.key,
            entity: customerOf(k.order),
            runs: k.runs,
            everFailed: k.everFailed,
            ...(k.answeredSeq === undefined ? {} : { answeredSeq: k.answeredSeq }),
            ...(k.firstArrivalSeq === undefined ? {} : { firstArrivalSeq: k.firstArrivalSeq }),
            ...(k.placeFailed === true ? { placeFailed: true } : {}),
          }));
        checkLines(ordered, violations, stats);
        checkAcceptedOrder(ordered, violations);
      }
    }
    if (shape.rate !== undefined) {
      stats.rateLimitedRuns = 1;
      stats.ownQueueRuns = shape.rate.ownQueue ? 1 : 0;
      checkRateLimit(routes.get(routeNames.pay)?.rateLimit, admissions, payStarts, skewBoundMs, violations);
    }
    await checkInvariants({
      tables,
      order: new DynamoDbEntityOrder(dynamo, eventsTable),
      keys,
      routes,
      routeState: new DynamoDbRouteStateStore(dynamo, eventsTable),
      parked: new DynamoDbParkedRecords(dynamo, eventsTable),
      store: observerStore,
      ledger: simLedger,
      downstream,
      dlqs,
      checkDlq,
      dlqExpiries,
      neverHanded,
      startMs,
      nowMs,
      stats,
      violations,
    });
    trace?.(`run of seed ${seed} ends: ${violations.length === 0 ? 'no violation' : violations.join('; ')}`);
    // Each once: a check made after every quiet stretch, or at every receive of a copy that keeps
    // coming back, finds the same fault again and again.
    return { seed, violations: [...new Set(violations)], stats };
  }
}

/**
 * The pay route's rate limit, kept where the downstream feels it: no n + 1 starts of its action
 * within one unit of its limit of n per unit. The gate's slots are a step apart and each run
 * starts by its own clock at its slot, at most the tolerance after it (ports/rate-gate.ts): by
 * the starting workers' clocks, n + 1 starts span at least the unit, exactly; in true time, at
 * least the unit less twice the clock bound. And no run of its action without an admission.
 */
function checkRateLimit(
  limit: ResolvedRateLimit | undefined,
  admissions: number,
  starts: readonly { readonly trueMs: number; readonly ownMs: number }[],
  skewBoundMs: number,
  violations: string[],
): void {
  if (limit === undefined) {
    violations.push('the pay route was drawn a rate limit, but its configuration has none');
    return;
  }
  const unitMs = limit.perSeconds * 1000;
  const spans = (instants: readonly number[], least: number, clock: string): void => {
    const sorted = [...instants].sort((x, y) => x - y);
    for (let i = limit.count; i < sorted.length; i++) {
      const span = (sorted[i] as number) - (sorted[i - limit.count] as number);
      if (span < least) {
        violations.push(`pay: ${limit.count + 1} runs started within ${span} ms ${clock} under its limit of ${limit.text} (at least ${least} ms)`);
        return;
      }
    }
  };
  spans(
    starts.map((s) => s.ownMs),
    unitMs,
    "by their workers' clocks",
  );
  spans(
    starts.map((s) => s.trueMs),
    unitMs - 2 * skewBoundMs,
    'in true time, with the clock bound',
  );
  if (starts.length > admissions) violations.push(`pay: ${starts.length} runs of its action, but only ${admissions} admitted by its rate gate`);
}

function contextOf(deadlineMs: number, now: () => number): Context {
  return { ...lambdaContext('retryproof-executor-simulation'), awsRequestId: 'simulation', getRemainingTimeInMillis: () => Math.max(0, deadlineMs - now()) };
}

/** `target`, each async method's answer or error traced (when tracing). */
function traced<T extends object>(target: T, label: string, trace: ((line: string) => void) | undefined): T {
  if (trace === undefined) return target;
  return new Proxy(target, {
    get(object, prop, receiver) {
      const value: unknown = Reflect.get(object, prop, receiver);
      if (typeof value !== 'function') return value;
      const call = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const out = call.apply(object, args);
        if (!(out instanceof Promise)) return out;
        const arg = args[0] as { key?: string } | string;
        const key = typeof arg === 'object' && arg.key !== undefined ? arg.key : String(args[1]);
        return out.then(
          (answer: unknown) => {
            trace(`  ${label}.${String(prop)} ${key} -> ${summaryOf(answer)}`);
            return answer;
          },
          (error: unknown) => {
            trace(`  ${label}.${String(prop)} ${key} threw ${String(error)}`);
            throw error;
          },
        );
      };
    },
  });
}

function secretOf(route: { readonly signature: { readonly scheme: string } }): string {
  return route.signature.scheme === 'standard-webhooks' ? SW_SECRET : SECRET;
}

/** Whitespace a proxy may put around a header's value: none mostly, else a space or a tab on either side. */
function paddingOf(roll: number): { before: string; after: string } | undefined {
  if (roll < 0.7) return undefined;
  if (roll < 0.8) return { before: ' ', after: '' };
  if (roll < 0.9) return { before: '', after: ' ' };
  return { before: '\t', after: ' ' };
}

/** A body's size: small, or at one of the limits (the route's body limit; SQS's 256 KiB once the body is escaped into a message). */
type SizeClass = 'small' | 'at-route-limit' | 'over-route-limit' | `queue-edge${'-300' | '-60' | '0' | '+60' | '+300'}`;

/** The pay route's bodies: some at its body limit (the hard maximum) and some near what SQS can carry. */
function sizeClassOf(roll: number): SizeClass {
  if (roll < 0.7) return 'small';
  if (roll < 0.76) return 'at-route-limit';
  if (roll < 0.8) return 'over-route-limit';
  const edges = ['queue-edge-300', 'queue-edge-60', 'queue-edge0', 'queue-edge+60', 'queue-edge+300'] as const;
  return edges[Math.min(edges.length - 1, Math.floor(((roll - 0.8) / 0.2) * edges.length))] ?? 'small';
}

/** The alerting route's bodies: at and over its small limit. */
function smallSizeClassOf(roll: number): SizeClass {
  return roll < 0.6 ? 'small' : roll < 0.8 ? 'at-route-limit' : 'over-route-limit';
}

/**
 * The body of an order. At a route limit: exactly that many bytes, or one more. At the queue's
 * edge: a pad of backslashes, each of which the body's JSON escapes once and the work message
 * escapes again, sized so that the escaped body plus the largest dead-letter copy's fields
 * (queue-limits.ts, deadLetterReserveBytes) comes within a few hundred bytes of SQS's limit.
 */
function bodyOf(order: string, size: SizeClass, routeLimit = PAY_BODY_LIMIT, extra: Readonly<Record<string, unknown>> = {}): Buffer {
  const base = { order, id: order, amount: 100, ...extra };
  const padded = (pad: string): Buffer => Buffer.from(JSON.stringify({ ...base, pad }));
  if (size === 'small') return padded('');
  if (size === 'at-route-limit' || size === 'over-route-limit') {
    const target = routeLimit + (size === 'over-route-limit' ? 1 : 0);
    return padded('x'.repeat(target - padded('').length));
  }
  const delta = Number(size.slice('queue-edge'.length));
  // JSON.stringify(body) of n backslashes (2n in the body) is 4n + overhead.
  const escapedOverhead = JSON.stringify(padded('').toString()).length;
  const n = Math.floor((SQS_MAX_MESSAGE_BYTES - deadLetterReserveBytes() - 400 - escapedOverhead + delta) / 4);
  return padded('\\'.repeat(n));
}

/** The bytes SQS counts for a work message as SqsWorkQueue sends it: the JSON body and each attribute's name, type and value. */
function sqsBytesOf(message: { readonly route: string; readonly key: string; readonly reason?: string }): number {
  let bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
  const attributes: Record<string, string> = { route: message.route, key: message.key, ...(message.reason === undefined ? {} : { reason: message.reason }) };
  for (const [name, value] of Object.entries(attributes)) bytes += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(value);
  return bytes;
}

/** A port call's answer in a few words, for traces. */
function summaryOf(out: unknown): string {
  if (out === undefined || typeof out !== 'object' || out === null) return String(out);
  const o = out as { kind?: string; status?: string; record?: { status?: string; attempts?: number } };
  if (o.kind !== undefined) return `${o.kind}${o.record === undefined ? '' : ` (${String(o.record.status)}, attempts ${String(o.record.attempts)})`}`;
  if (o.status !== undefined) return o.status;
  return JSON.stringify(out).slice(0, 80);
}

/** The key a work message is for, for traces. */
function messageKey(body: string): string {
  try {
    const parsed = JSON.parse(body) as { key?: unknown; deadLetterId?: unknown };
    return `${String(parsed.key)}${parsed.deadLetterId === undefined ? '' : '(dead-letter copy)'}`;
  } catch {
    return '?';
  }
}

function sqsRecordOf(message: SimReceivedMessage, arn: string): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: message.attributes.ApproximateReceiveCount,
      SentTimestamp: message.attributes.SentTimestamp,
      SenderId: message.attributes.SenderId,
      ApproximateFirstReceiveTimestamp: message.attributes.ApproximateFirstReceiveTimestamp,
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.messageAttributes).map(([name, v]) => [name, { dataType: v.dataType, ...(v.stringValue === undefined ? {} : { stringValue: v.stringValue }) }]),
    ),
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: 'us-east-1',
  };
}

// ---------------------------------------------------------------------------------------
// Invariants

interface InvariantInput {
  readonly tables: SimulationTables;
  /** The lines of the ordered route, read (never moved) to judge a record parked waiting for its turn. */
  readonly order: EntityOrder;
  readonly keys: ReadonlyMap<string, KeyState>;
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
  readonly routeState: DynamoDbRouteStateStore;
  readonly parked: DynamoDbParkedRecords;
  readonly store: DynamoDbExecutionStore;
  readonly ledger: SimLedger;
  readonly downstream: SimDownstream;
  /** Every Region's DLQ. */
  readonly dlqs: readonly SimulatedQueue[];
  /** Looks at what reached the DLQ since the last look (also done before every redrive). */
  readonly checkDlq: () => void;
  /** When each dead-letter copy seen in the DLQ left (or leaves) it by retention, by deadLetterId. */
  readonly dlqExpiries: ReadonlyMap<string, number>;
  /** A person's dead-letter copy SQS moved straight back, never handed to a receiver (see neverHanded). */
  readonly neverHanded: (m: { readonly messageId: string; readonly sentAt: number; readonly body: string }) => boolean;
  readonly startMs: number;
  readonly nowMs: number;
  readonly stats: RunStats;
  readonly violations: string[];
}

/**
 * No two runs of one key's action overlap: the lease (with its clock margin) keeps them apart.
 * Judged by the order of their calls, not only their instants: a run that calls at the very
 * instant another's first call is made, after it, runs beside it (two calls at one instant
 * touch in time and would pass a check of instants alone).
 */
function checkOverlaps(k: KeyState, violations: string[]): void {
  const runs = k.runs.filter(
    (r): r is ActionRun & { firstCallMs: number; lastCallMs: number; firstCallSeq: number; lastCallSeq: number } =>
      r.firstCallMs !== undefined && r.lastCallMs !== undefined && r.firstCallSeq !== undefined && r.lastCallSeq !== undefined,
  );
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length; j++) {
      const a = runs[i] as (typeof runs)[number];
      const b = runs[j] as (typeof runs)[number];
      if (a.firstCallSeq < b.lastCallSeq && b.firstCallSeq < a.lastCallSeq) {
        violations.push(
          `${k.key}: runs ${a.attempt} and ${b.attempt} of its action overlap in time ` +
            `(${a.firstCallMs - EPOCH}..${a.lastCallMs - EPOCH} ms and ${b.firstCallMs - EPOCH}..${b.lastCallMs - EPOCH} ms after the start)`,
        );
      }
    }
  }
}

/**
 * A record left RECEIVED or EXECUTING once the run has settled: accepted work nothing will run.
 * Not so a record never accepted: no delivery of it got an answer below 500 (each function died
 * after its claim and before its send), and its sender gave up at the end of its retry window.
 * It sent nothing and kept nothing, so nothing of it can run; no promise was made, and the
 * reconciler reports it (payload-not-kept). A re-post is the only way it runs.
 */
function strandedAtEnd(k: KeyState, record: EventRecord, routes: ReadonlyMap<string, ResolvedRoute>, nowMs: number): boolean {
  if (record.status === RECORD_STATUS.completed || record.status === RECORD_STATUS.failed || record.status === RECORD_STATUS.parked) return false;
  const window = (routes.get(k.route)?.senderRetryWindowSeconds ?? 0) * 1000;
  const senderGaveUp = k.firstSentAt !== undefined && nowMs - k.firstSentAt > window;
  // A generation claimed by a replay after every 2xx of the key (its receipt, on a clock within
  // the bound, later than the last answer) got none: all its copies died (seed 907).
  const answered = k.lastAnsweredAt !== undefined && k.lastAnsweredAt >= record.receivedAt - CLOCK_SKEW_SECONDS * 1000;
  const neverAccepted = !answered && senderGaveUp && record.status === RECORD_STATUS.received && record.runs === 0 && record.body === undefined;
  return !neverAccepted;
}

async function checkInvariants(input: InvariantInput): Promise<void> {
  const { keys, violations } = input;
  const paused = new Set<string>();
  for (const route of input.routes.keys()) if ((await input.routeState.get(route)).state === 'paused') paused.add(route);
  const dlqBodies = input.dlqs.flatMap((q) => q.snapshot()).map((m) => ({ messageId: m.messageId, neverHanded: input.neverHanded(m), body: JSON.parse(m.body) as Record<string, unknown> }));

  for (const k of keys.values()) {
    const record: EventRecord | undefined = await input.store.get(k.route, k.key);
    // The budget is spent by leases alone (acquireLease adds 1 to attempts and runs; a redrive
    // resets attempts): waiting for a rate limit, a pause or a live lease never spends it.
    if (record !== undefined && record.attempts > record.runs) {
      violations.push(`${k.key}: ${record.attempts} attempts spent in its budget but only ${record.runs} leases ever taken (waiting counted as an attempt)`);
    }
    const posted = [...new Set([k.key, ...k.protocolKeys])].flatMap((key) => input.ledger.entriesOf(k.route, key)).filter((e) => e.status === 'posted').length;
    // Real effects: the downstream's charges that stand, whatever the ledger says.
    const charges = [...k.chargeIds].map((id) => input.downstream.get(id)).filter((c) => c !== undefined);
    const standing = charges.filter((c) => c.refundedAt === undefined).length;
    // A downstream that keeps no idempotency key breaks rule 4 of the contract: a run cut between
    // its charge and its entry (a crash, a Lambda timeout, its deadline passing before the post)
    // leaves a charge no entry names, and the next run charges again. Nothing can see that first
    // charge, so nothing can reverse it: such charges are the contract breach's, not the
    // protocol's. Every charge some entry names must still come down to one.
    const entries = [...new Set([k.key, ...k.protocolKeys])].flatMap((key) => input.ledger.entriesOf(k.route, key));
    const booked = (c: { chargeId: string }): boolean => entries.some((e) => e.chargeId === c.chargeId);
    // A downstream that keeps keys, but not as long as the contract asks (rule 4: the TTL +
    // 15 days for each redrive, and more), breaks it the same way once a record runs on after
    // redrives: a later run of the same generation (a higher run number) charges anew, and
    // the first charge, whose entry never got posted (a post that failed after the effect),
    // is out of reach (seed 157: run 2 on day 0, run 10 on day 41). Both charges must be of one
    // generation: a new generation's charge (a replay after the TTL) is never excused so.
    const forgottenLater = (c: { attempt: number; generation?: number }): boolean =>
      c.generation !== undefined && charges.some((d) => d.afterForgetting === true && d.generation === c.generation && d.attempt > c.attempt);
    const unbookedCharges = k.idempotentDownstream ? charges.filter((c) => !booked(c) && forgottenLater(c)) : charges.filter((c) => !booked(c));
    if (k.effects > 1 + Math.max(k.excused, unbookedCharges.length)) {
      input.stats.doubleEffects++;
      violations.push(`${k.key}: ${k.effects} charges made, but only ${k.excused} runs lost the record after theirs`);
    }
    // The same contract breach (above) excuses the standing charges no entry names.
    const standingCharges = charges.filter((c) => c.refundedAt === undefined);
    const unbooked = standingCharges.filter((c) => unbookedCharges.includes(c));
    const excusedUnbooked = Math.min(unbooked.length, standing - 1);
    // FAILED work with two entries waits for a person (reported as failed-with-entries): a
    // redrive's completing run names the entry to keep (seed 961).
    const failed = record?.status === RECORD_STATUS.failed;
    if (standing - excusedUnbooked > 1 && !failed) {
      const which = standingCharges.map((c) => `${c.chargeId} by run ${c.attempt} on day ${((c.at - EPOCH) / DAY).toFixed(2)}${unbooked.includes(c) ? ', no entry' : ''}`).join('; ');
      violations.push(`${k.key}: ${standing} charges stand on the downstream after reconciliation (paid ${standing} times: ${which})`);
    }
    // A PARKED record is still in flight (its route is paused): the run that completes it may
    // post the entry to keep, so the reconciler leaves its entries until then (reconciler/phase-effects.ts).
    // Workers killed between their post and their effect leave such entries (seed 128).
    if (posted > 1 && record?.status !== RECORD_STATUS.parked && !failed) {
      const which = entries.filter((e) => e.status === 'posted').map((e) => `${e.entryId} of run ${e.attempt} under ${JSON.stringify(e.idempotencyKey)} on day ${((e.postedAt - EPOCH) / DAY).toFixed(2)}`);
      violations.push(`${k.key}: ${posted} ledger entries still posted after reconciliation (${which.join('; ')})`);
    }
    checkOverlaps(k, violations);
    if (record === undefined) {
      // Never accepted (every delivery refused, or lost before the claim), or accepted and gone
      // after its TTL: then it ran, or it failed and a person had its dead-letter copy.
      if (k.answered && k.effects === 0 && !k.everFailed) violations.push(`${k.key}: answered 2xx, never ran, and its record is gone (accepted work lost)`);
      continue;
    }
    if (record.attempts > MAX_ATTEMPTS) violations.push(`${k.key}: attempts ${record.attempts} above maxAttempts ${MAX_ATTEMPTS}`);
    switch (record.status) {
      case RECORD_STATUS.completed: {
        if (posted !== 1) violations.push(`${k.key}: COMPLETED with ${posted} posted ledger entries`);
        if (standing === 0) {
          const undone = input.ledger.reversals.some((r) => r.refunded !== undefined && charges.some((c) => c.chargeId === r.refunded));
          violations.push(`${k.key}: COMPLETED with no charge standing${undone ? ': a reversal refunded its only genuine effect' : ''}`);
        }
        break;
      }
      case RECORD_STATUS.failed: {
        const copy = dlqBodies.some((m) => m.body.key === k.key && m.body.route === k.route && m.body.deadLetterId === record.deadLetterId);
        // A copy that waited out the DLQ's retention (14 days from its enqueue time) is gone as AWS documents.
        const retired = (input.dlqExpiries.get(record.deadLetterId ?? '') ?? Number.POSITIVE_INFINITY) <= input.nowMs;
        if (!copy && !retired) violations.push(`${k.key}: FAILED, but its dead-letter copy ${String(record.deadLetterId)} is not in the DLQ`);
        break;
      }
      case RECORD_STATUS.parked:
        if (paused.has(k.route)) break;
        if (record.waitingTurn !== undefined && record.lineEntity !== undefined) {
          // Waiting in its entity's line: only behind a head that a person must redrive or skip.
          const line = await input.order.view(k.route, record.lineEntity, input.nowMs, 1000);
          const head = line.places.find((p) => p.status !== undefined && p.status !== RECORD_STATUS.completed);
          if (head?.status !== RECORD_STATUS.failed) {
            violations.push(`${k.key}: PARKED waiting for its turn (place ${record.waitingTurn}), and the head of its line is ${head === undefined ? 'nothing' : `${head.key}, ${String(head.status)}`}, not FAILED: a wake-up was lost`);
          }
          break;
        }
        violations.push(`${k.key}: PARKED on route ${k.route}, which is active`);
        break;
      default: {
        if (strandedAtEnd(k, record, input.routes, input.nowMs)) violations.push(`${k.key}: stranded in ${record.status} (attempts ${record.attempts}, last sent ${String(record.lastEnqueuedAt)})`);
      }
    }
    // Ingest sends the first message, and at most one resend per window after that.
    for (const [window, sent] of k.ingestSends) {
      if (sent > 2) violations.push(`${k.key}: ingest sent ${sent} work messages within one resend window (${window})`);
    }
    // Each deferral for a rate limit sends one delayed wake-up in place of the message it acknowledges.
    const bound = 2 + k.duplicateWindows.size + input.stats.reconcilerRuns + input.stats.resumes + input.stats.redrives + k.deferrals;
    if (k.sends > bound) violations.push(`${k.key}: ${k.sends} work messages sent, above the bound ${bound}`);
  }
  input.checkDlq();
  // One event, one key: the copies of one body (one order) on one route all made one record.
  const keysOfBody = new Map<string, Set<string>>();
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await input.tables.dynamo.send(
      new ScanCommand({ TableName: input.tables.eventsTable, FilterExpression: 'sk = :record', ExpressionAttributeValues: { ':record': { S: RECORD_SK } }, ExclusiveStartKey: startKey }),
    );
    for (const item of page.Items ?? []) {
      const pk = item.pk?.S ?? '';
      const route = pk.split('#')[1] ?? '';
      const scoped = `${route}\u0000${item.fingerprint?.S ?? ''}`;
      keysOfBody.set(scoped, (keysOfBody.get(scoped) ?? new Set()).add(pk));
      // The sparse failed index holds FAILED records, every one of them: a bulk redrive finds by
      // it all the FAILED work there is, and takes back nothing else.
      const failed = item.status?.S === RECORD_STATUS.failed;
      const indexed = item.gsi3pk?.S !== undefined;
      if (failed && !indexed) violations.push(`${pk}: FAILED but not in the failed index: a bulk redrive never finds it`);
      if (!failed && indexed) violations.push(`${pk}: in the failed index while ${String(item.status?.S)}`);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  for (const pks of keysOfBody.values()) {
    if (pks.size > 1) violations.push(`one body on one route became ${pks.size} records under different keys: ${[...pks].map((p) => JSON.stringify(p)).join(', ')}`);
  }
  // A dead-letter copy waiting for a person must still be redrivable: its record (that
  // generation) lives, unless the work took effect already (defect 7).
  for (const m of dlqBodies) {
    if (typeof m.body.deadLetterId !== 'string' || m.neverHanded) continue;
    const k = keys.get(workKey(String(m.body.route), String(m.body.key)));
    if (k === undefined || k.effects > 0 || k.bouncedUnseen === true) continue;
    const record = await input.store.get(k.route, k.key);
    const alive = record !== undefined && record.receivedAt === m.body.receivedAt && record.expiresAt * 1000 > input.nowMs;
    if (!alive) violations.push(`${k.key}: its dead-letter copy waits in the DLQ, but its record ${record === undefined ? 'is gone' : 'expired'}: a redrive can never run it`);
  }
  // The parked index holds parked records only.
  for (const route of input.routes.keys()) {
    for await (const page of input.parked.listParked(route)) {
      for (const r of page) if (r.status !== RECORD_STATUS.parked) violations.push(`${r.key}: in the parked index while ${r.status}`);
    }
  }
}

