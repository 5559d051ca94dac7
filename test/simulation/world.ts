/**
 * The world of one run: its clock, its scheduler, what it has drawn and everything its actors
 * share. The constructor sets up the clock and the scheduler; world-setup.ts builds the rest
 * (queues, DynamoDB clients, ports, the functions under test) in the order the run draws it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ResolvedConfig, ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { CLOCK_SKEW_SECONDS } from '../../lambdas/config/route-config.ts';
import type { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import type { IngestDeps } from '../../lambdas/ingest/ingest-delivery.ts';
import type { Ledger } from '../../lambdas/ledger/ledger.ts';
import type { BodyObjects } from '../../lambdas/ports/body-objects.ts';
import type { ExecutionStore } from '../../lambdas/ports/execution-store.ts';
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import type { FreshBodyWorkQueue } from '../../lambdas/queue/fresh-body-work-queue.ts';
import type { sweepOptionsOf } from '../../lambdas/reconciler/create-reconciler.ts';
import type { bulkRedrive } from '../../lambdas/routes/bulk-redrive.ts';
import type { routeControl } from '../../lambdas/routes/route-control.ts';
import type { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import type { DynamoDbExpirySweepStore } from '../../lambdas/store/dynamodb-expiry-sweep-store.ts';
import type { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import type { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { emptyDynamoFaultStats } from './faulty-dynamodb.ts';
import type { DynamoFaultPlan } from './faulty-dynamodb.ts';
import type { KeyState } from './key-state.ts';
import type { PauseReach } from './pause-reach.ts';
import { regionsOf, runShapeOf } from './run-shape.ts';
import type { RunShape } from './run-shape.ts';
import { emptyStats } from './run-stats.ts';
import type { RunStats } from './run-stats.ts';
import { prng } from './schedule.ts';
import { Scheduler } from './scheduler.ts';
import { EPOCH } from './sim-constants.ts';
import type { SimBuckets } from './sim-body-objects.ts';
import type { SimDownstream, SimLedger } from './sim-downstream.ts';
import { ObservedPlaces } from './sim-ordering.ts';
import { SimTimers } from './sim-timers.ts';
import type { SimulatedQueue } from './simulated-sqs.ts';

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

/** The routes of every run (world-config.ts). */
export const ROUTE_NAMES = { pay: 'pay', alt: 'alt', sw: 'sw', st: 'st' } as const;

/** A Region's queues: its work queue, its DLQ, and the pay route's own queue if it has one. */
export interface RegionQueues {
  readonly dlq: SimulatedQueue;
  readonly queue: SimulatedQueue;
  readonly own: SimulatedQueue | undefined;
  readonly workQueue: WorkQueue;
}

/** The DynamoDB client of each function: each Lambda has its own, with its own retry quota. */
export interface FunctionClients {
  readonly ingest: DynamoDBClient;
  readonly executor: DynamoDBClient;
  readonly reconciler: DynamoDBClient;
  readonly operator: DynamoDBClient;
}

export class World {
  readonly shape: RunShape;
  /** The run's own choices (actions' outcomes, which invocations finish, ids), from the seed. */
  readonly random: () => number;
  /** True time: the simulation's clock. Moved on only by setNow. */
  nowMs = EPOCH;
  readonly startMs = EPOCH;
  /** SQS's clock, and the scheduler's shared instant: true time. */
  readonly clock = { now: (): number => this.nowMs };
  readonly violations: string[] = [];
  /** Every place the ordered route's records were given, as the protocol's calls returned them (sim-ordering.ts). */
  readonly observedPlaces = new ObservedPlaces();
  readonly stats: RunStats = emptyStats();
  readonly skewBoundMs: number;
  readonly sched: Scheduler;
  readonly timers: SimTimers;
  /** SIM_TRACE=1: every operation, step and kill on stderr, for reading one seed's run. */
  readonly trace: ((line: string) => void) | undefined;
  readonly dynamoStats = emptyDynamoFaultStats();
  readonly regionCount: number;
  /** The eventually consistent control: a table per Region, replicated late. */
  readonly eventual: boolean;

  // The tables (protocol-simulation.ts opens them).
  /** The simulation's own client: no faults (observers, invariants). */
  dynamo!: DynamoDBClient;
  /** Region 0's table: the observer's and the invariants' (the tables agree once replicated). */
  eventsTable!: string;
  /** Each Region's table: one table for all under strong consistency. */
  regionTables!: string[];

  // World state the actors share.
  /** SQS's own choices (order, which copy, which message a lost receive takes), from the seed. */
  readonly sqsRandom: () => number;
  sqsDown = false;
  /** A person fixed the downstream of the fixable hopeless keys (see KeyState.fixable). */
  downstreamFixed = false;
  /** An isolated Region (its DynamoDB endpoint cut off from the other Regions), if any. */
  isolated: number | undefined;
  /** DynamoDB's faults now; undefined once the run settles. */
  dynamoPlan: DynamoFaultPlan | undefined;
  readonly faultRandom: () => number;
  readonly faultClients: DynamoDBClient[] = [];
  /**
   * Writes that committed and answered an error, by actor id and item partition key: the
   * nonce (writeId) the write set, when it carried one (conditional-write.ts).
   */
  readonly committedUnanswered = new Map<string, string | undefined>();
  /**
   * The port call a DynamoDB write is made for, by a number per call: two strands of one
   * executor (an SQS duplicate of one message in one batch) write the same record at once, and
   * one's committed write is not the other's (seed 1561: a duplicate's failExhausted committed
   * and lost its answer, and its twin's refused one was taken for it).
   */
  readonly callScope = new AsyncLocalStorage<number>();
  portCalls = 0;
  /** The delay chosen for an actor's next DynamoDB answer (the slow-lease operation), by actor id. */
  readonly slowAnswerFor = new Map<number, number>();
  /** Writes waiting to reach the other Regions' tables, in the order they were made. */
  readonly replication: { table: string; pk: string; sk: string; at: number; seq: number }[] = [];
  /** The last write each table holds for each item: its instant and order (last writer wins). */
  readonly lastWrite = new Map<string, { at: number; seq: number }>();
  writeSeq = 0;
  readonly keys = new Map<string, KeyState>();
  readonly keysByOrder = new Map<string, KeyState>();
  /** Keys not delivered yet, in the order `deliver` operations take them. */
  readonly pending: KeyState[] = [];
  readonly downstreamRetentionOf = new Map<string, number>();
  /** The dead-letter copies a person made (a redrive), by deadLetterId and SentTimestamp. */
  readonly personCopies = new Set<string>();
  /** Deliveries' arrivals and first 2xx answers, numbered in the order they happen. */
  arrivals = 0;
  /** The pay route's admissions by its gate. */
  admissions = 0;
  /** The pay route's runs' starts: the true instant each action began, and its worker's clock then. */
  readonly payStarts: { readonly trueMs: number; readonly ownMs: number }[] = [];
  /** The ids of messages the executor was handed at least once. */
  readonly delivered = new Set<string>();
  /** Each Region's event source polls in turn, from a turn that moves on. */
  pollTurn = 0;
  /**
   * Workers that died holding each message (by message id). Without a death, a message's
   * receives are bounded by 2 x maxAttempts + 1 (a run or a held lease each), under
   * maxReceiveCount; one death adds one receive and still fits. Two or more may push it to the DLQ.
   */
  readonly crashed = new Map<string, number>();
  /** Receives of each message that ran nothing of ours: lost answers, a second worker's copy. */
  readonly wasted = new Map<string, number>();
  waking = false;
  lastReconcilerRunAt = EPOCH;
  /** Each Region's schedule runs its own reconciler: runs take turns between the Regions. */
  reconcilerTurn = 0;
  // Work that could still heal itself never reaches the DLQ; only workers that died may push
  // it there. Looked at before every redrive, which would take the evidence away.
  readonly seenInDlq = new Set<string>();
  /** Bodies judged once: a redriven copy (a move task gives it a new id) may go back without a new receive. */
  readonly judged = new Set<string>();
  /** When each dead-letter copy seen in the DLQ leaves it by retention, by deadLetterId. */
  readonly dlqExpiries = new Map<string, number>();
  readonly lastDayRandom: () => number;

  // Built by world-setup.ts.
  config!: ResolvedConfig;
  routes!: Map<string, ResolvedRoute>;
  resendAfterMs!: number;
  regionQueues!: RegionQueues[];
  /** Every work queue of every Region: the shared ones and the pay route's own. */
  allWorkQueues!: SimulatedQueue[];
  dlqs!: SimulatedQueue[];
  workQueue!: WorkQueue;
  clientOf!: FunctionClients;
  downstream!: SimDownstream;
  simLedger!: SimLedger;
  ledger!: Ledger;
  pauseReach!: PauseReach;
  buckets!: SimBuckets;
  bodies!: BodyObjects;
  gatedQueue!: FreshBodyWorkQueue;
  visibility!: MessageVisibility;
  realExecutionStore!: DynamoDbExecutionStore;
  /** The simulation's own view of the records (of the calling actor's Region): no faults, no yield points. */
  observerStore!: DynamoDbExecutionStore;
  executionStore!: ExecutionStore;
  handler!: ReturnType<typeof createExecutorHandler>;
  ingestDeps!: IngestDeps;
  reconcilerStore!: DynamoDbReconcilerStore;
  expiryStore: DynamoDbExpirySweepStore | undefined;
  sweepOptions: ReturnType<typeof sweepOptionsOf> | undefined;
  reconcilerRouteState!: DynamoDbRouteStateStore;
  control!: ReturnType<typeof routeControl>;
  bulk!: ReturnType<typeof bulkRedrive>;
  executorTimeoutMs!: number;
  stallLeaseMs!: number;

  readonly env: SimulationEnv;
  readonly seed: number;
  readonly options: RunOptions;

  constructor(env: SimulationEnv, seed: number, options: RunOptions) {
    this.env = env;
    this.seed = seed;
    this.options = options;
    this.shape = runShapeOf(seed, options);
    this.random = prng(seed ^ 0xa11ce);
    // Each actor's clock: true time plus an offset within the bound (times the skew factor), drawn
    // at its spawn; half of them sit at the bound, where a margin is tested.
    const skewBoundMs = CLOCK_SKEW_SECONDS * 1000 * (options.skewFactor ?? 1);
    this.skewBoundMs = skewBoundMs;
    const skewRandom = prng(seed ^ 0xc10c);
    this.sched = new Scheduler({
      now: () => this.nowMs,
      skewOf: () => {
        const sign = skewRandom() < 0.5 ? -1 : 1;
        return sign * (skewRandom() < 0.5 ? skewBoundMs : skewRandom() * skewBoundMs);
      },
    });
    this.timers = new SimTimers(() => this.nowMs, () => this.sched.current() !== undefined);
    this.trace = process.env.SIM_TRACE === '1' ? (line: string): void => void process.stderr.write(`[${((this.nowMs - EPOCH) / 1000).toFixed(3)} s] ${line}\n`) : undefined;
    this.regionCount = regionsOf(this.shape, options);
    this.eventual = options.consistency === 'eventual' && this.regionCount > 1;
    this.sqsRandom = prng(seed ^ 0x5a5);
    this.dynamoPlan = this.shape.dynamo;
    this.faultRandom = prng(seed ^ 0xfa17);
    this.lastDayRandom = prng(seed ^ 0x1a57d);
  }

  /** The protocol's clock: the calling actor's own. */
  readonly now = (): number => this.sched.now();

  /** Moves true time on (never back), and fires the timers whose time came. */
  readonly setNow = (ms: number): void => {
    this.nowMs = Math.max(this.nowMs, Math.round(ms));
    this.timers.fire();
  };

  /** Moves true time on by `ms`, at least 1 ms. */
  advance(ms: number): void {
    this.setNow(this.nowMs + Math.max(1, Math.round(ms)));
  }

  /** The Region an actor runs in (its Lambda's); 0 outside any actor (the simulation's own reads). */
  readonly regionOfActor = (): number => (this.sched.current()?.meta.region as number | undefined) ?? 0;

  /** A Region to act in, from `a` in [0, 1); always 0 with one Region. */
  regionAt(a: number): number {
    return Math.min(this.regionCount - 1, Math.floor(a * this.regionCount));
  }

  /** The key state of a work item, if the run has delivered it. */
  keyOf(route: string | undefined, key: string | undefined): KeyState | undefined {
    return route === undefined || key === undefined ? undefined : this.keys.get(`${route}\u0000${key}`);
  }
}
