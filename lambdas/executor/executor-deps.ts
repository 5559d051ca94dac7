import type { Action } from '../actions/action.ts';
import type { ActionRegistry } from '../actions/action-registry.ts';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { EntityOrder } from '../ports/entity-order.ts';
import type { ExecutionStore } from '../ports/execution-store.ts';
import type { RateGate } from '../ports/rate-gate.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { Gate } from './message-context.ts';
import type { StartLead } from './start-lead.ts';

/** One SQS message as the event source hands it over. */
export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  /** SQS's ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
  /**
   * SQS's SentTimestamp (epoch ms): when SQS enqueued this message, by SQS's clock. A redrive
   * makes a new message with a new one. @default - unknown: a dead-letter copy is then never
   * taken for a redrive
   */
  readonly sentAt?: number;
}

export interface ExecutorDeps {
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
  readonly actions: ActionRegistry;
  readonly store: ExecutionStore;
  /**
   * The work queue itself. Work for people travels as a dead-letter copy on it, handed back
   * until the queue's redrive policy moves it to the DLQ (see WorkMessage.deadLetterId).
   */
  readonly workQueue: WorkQueue;
  /**
   * The bucket of large bodies (the S3 claim check): a message that points to a body is run on
   * the bytes read back from it. @default - none: such a message is our misconfiguration, and
   * goes back to the queue
   */
  readonly bodies?: BodyObjects;
  /** The queue's redrive policy: a dead-letter copy's receive number this high is its last before the DLQ. */
  readonly maxReceiveCount: number;
  readonly now: () => number;
  /** How long past its end another worker's lease still holds by our clock: twice the clock bound. @default TAKEOVER_MARGIN_MS */
  readonly takeoverMarginMs?: number;
  /** Time left in this invocation; an action never runs past it. @default - unbounded */
  readonly remainingMs?: () => number;
  readonly requestId?: string;
  /**
   * The gate of the routes with a rate limit (DynamoDbRateGate): a run over the limit is
   * deferred, not run. @default - no gate: rate limits are not enforced (tests of other paths)
   */
  readonly rateGate?: RateGate;
  /**
   * Learns how far ahead a rate-limited run asks for its start slot (start-lead.ts): one per
   * executor instance. @default - a fresh one per executeMessage call
   */
  readonly startLead?: StartLead;
  /** Waits for a rate-limited run's start slot. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** True while the route is paused: its work is parked, not run. @default - never paused */
  readonly isPaused?: (route: string) => Promise<boolean>;
  /** Spreads hand-backs of locked work over a second or two. @default Math.random */
  readonly random?: () => number;
  /** Lease tokens and dead-letter ids. @default crypto.randomUUID */
  readonly newId?: () => string;
  /**
   * The lines of routes ordered per entity (`orderBy`): a record runs only at its turn, and its
   * completion moves the line on. @default - none: ordering is not enforced (tests of other paths)
   */
  readonly order?: EntityOrder;
}

/** A route with its action and its gates, built once (prepareExecutor). */
export interface ExecutorRoute {
  readonly config: ResolvedRoute;
  /** Undefined when no action of the route's name is registered: its work cannot run. */
  readonly action: Action | undefined;
  readonly gates: readonly Gate[];
}

/** The executor's ports as the gates read them, every default applied once (prepareExecutor). */
export interface Executor {
  readonly routes: ReadonlyMap<string, ExecutorRoute>;
  /** The gates of a message that names no configured route: it is unreadable or unrunnable. */
  readonly unrouted: readonly Gate[];
  readonly store: ExecutionStore;
  readonly workQueue: WorkQueue;
  readonly bodies: BodyObjects | undefined;
  readonly maxReceiveCount: number;
  readonly now: () => number;
  readonly takeoverMarginMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly newId: () => string;
  /** A body object read back older than this is renewed at once (domain/body-object.ts). */
  readonly renewAfterMs: number;
}
