/**
 * The one typed configuration of retryproof. The same object drives `cdk synth`, the three
 * Lambdas (bundled into their code: docs/architecture.md#the-configuration-ships-in-the-code)
 * and the local stack. It is plain data: no AWS SDK, no CDK, no middy.
 */

import type { SignatureConfig } from '../domain/signatures/signature-config.ts';

export { SIGNATURE_SCHEMES } from '../domain/signatures/signature-config.ts';
export type {
  HmacSha256Signature,
  PlainSignature,
  SignatureConfig,
  SignatureSchemeName,
  TimestampedSignature,
} from '../domain/signatures/signature-config.ts';
export * from './protocol-limits.ts';

/** What the circuit breaker does when one key keeps coming back. */
export type BreakerReaction = 'pause' | 'alert';

/** A duplicate is normally answered with the original answer; `strict-409` is for API clients. */
export type DuplicateAnswer = 'replay' | 'strict-409';

export interface RouteConfig {
  /** Path segment of `POST /webhooks/{route}`. Lowercase letters, digits, `-` and `_`. */
  readonly name: string;
  readonly signature: SignatureConfig;
  /**
   * Name of the Secrets Manager secret holding the signing secret. The value is either
   * the secret itself, or JSON `{"current": "...", "previous": "..."}` during rotation.
   */
  readonly secretName: string;
  /** Import an existing secret by name instead of creating an empty one. @default false */
  readonly importSecret?: boolean;
  /**
   * Key template over headers, body fields (JSON pointer) and constants, for example
   * `us-east1_{body:/order_id}` or `{header:x-shop}:{header:x-request-id}`.
   * @default - the scheme's own key source (docs/architecture.md, "Keys, fingerprints and TTL")
   */
  readonly key?: string;
  /** How long a key is remembered, in seconds. Must cover the longest retry window. @default 35 days */
  readonly ttlSeconds?: number;
  /** How long the sender keeps retrying, in seconds. @default - the scheme's documented window */
  readonly senderRetryWindowSeconds?: number;
  /**
   * Declared run time of the action, in seconds. The lease is 3x this. A route gives this or
   * `actionTime`, not both.
   */
  readonly actionTimeSeconds?: number;
  /**
   * The action's run time by the destination a delivery names, for actions whose latency depends
   * on where they go (a payout to the EU, APAC or LATAM): `{ field: 'destination', seconds:
   * { EU: 10, APAC: 30, LATAM: 45 }, otherwise: 15 }`. Each record is leased for 3x its own time
   * and keeps that lease; the executor's timeout, the visibility timeout and the TTL cover check
   * use the longest. A route gives this or `actionTimeSeconds`, not both.
   */
  readonly actionTime?: ActionTimeTable;
  /**
   * Runs of the action before the work is FAILED and dead-lettered for a person. The budget
   * lives on the record, whatever the receive count of the message in hand. @default 5
   */
  readonly maxAttempts?: number;
  /** Name of the registered action the executor runs for this route. */
  readonly action: string;
  /** Request headers (lowercase) kept with the record and handed to the action. @default [] */
  readonly keepHeaders?: readonly string[];
  /**
   * Repeats of one key after we had answered it 2xx (lost acknowledgements, replays) at which
   * the breaker trips; retries of our own 5xx do not count. At least 2: one lost
   * acknowledgement is routine for at-least-once senders and must not pause a route. @default 3
   */
  readonly breakerThreshold?: number;
  /** @default 'pause' */
  readonly breakerReaction?: BreakerReaction;
  /** @default 'replay' */
  readonly duplicateAnswer?: DuplicateAnswer;
  /**
   * Largest accepted body in bytes, at most MAX_BODY_BYTES (4,694,016: what Lambda's 6 MB request
   * limit leaves, domain/body-object.ts); a larger one gets 413 with the limit in its detail.
   * @default 4694016
   */
  readonly maxBodyBytes?: number;
  /**
   * Bodies above this many bytes are kept in the receiver's bucket and travel as a pointer (the
   * S3 claim check, docs/large-payloads.md); at most 131072, as the work message must carry the
   * rest. 0 keeps every body out of the queues and the DLQ. @default 131072 (128 KiB)
   */
  readonly claimCheckAboveBytes?: number;
  /**
   * Ordering per entity, opt-in: a template over the body's fields, in the key template language
   * (`{body:/data/object/customer}`), that names the entity whose work runs one at a time, in the
   * order the receiver accepted it; other entities' work runs in parallel as before. A delivery
   * whose body lacks the field gets 400. Arrival order is not event order: see docs/ordering.md.
   * @default - no ordering
   */
  readonly orderBy?: string;
  /**
   * The most runs of the action a second, minute or hour: exactly one of the three. Runs are
   * spaced evenly (one every unit / n), so no window of the unit ever holds more than n. Work
   * over the limit waits in the queue (a delayed wake-up message), RECEIVED, its budget
   * untouched: it is never failed or dead-lettered for waiting (docs/routes.md, "Rate limits
   * and isolation"). @default - no limit
   */
  readonly rateLimit?: RateLimit;
  /**
   * Concurrent executor invocations for this route's own queue (the event source's
   * maxConcurrency, 2 at least). Implies `ownQueue`. @default - the queue's maxConcurrency
   */
  readonly concurrency?: number;
  /**
   * Whether the route's work has a queue and an event source of its own, so that a slow,
   * failing, rate-limited or paused route never holds up the others. Its dead-letter copies go
   * to the one DLQ, whose console redrive returns each message to its source queue.
   * @default - true when the route sets rateLimit or concurrency, false otherwise
   */
  readonly ownQueue?: boolean;
}

/** A route's rate limit: exactly one of the fields. */
export interface RateLimit {
  readonly perSecond?: number;
  readonly perMinute?: number;
  readonly perHour?: number;
}

/** A route's action time looked up by a body field's value. */
export interface ActionTimeTable {
  /** The body field whose value picks the time: a top-level field name, or a JSON pointer (`/payout/region`). */
  readonly field: string;
  /** Seconds by the field's value (a string or a number, compared as text). */
  readonly seconds: Readonly<Record<string, number>>;
  /** Seconds for any other value, a missing field, or a body that is not JSON. */
  readonly otherwise: number;
}

export interface QueueConfig {
  /**
   * Receives before SQS moves a message to the DLQ. A backstop for workers that die without
   * answering, and for outages: the retry budget is each route's `maxAttempts`. It must be at
   * least 2 x the largest maxAttempts + 2 (one receive per attempt, one per lease it finds
   * held, and two to spare). Every receive counts, also one whose invocation was throttled or
   * failed on DynamoDB or SQS, so the default adds the receives a day-long outage spends (the
   * executor hands a message back with a doubling visibility on its own dependency's failure).
   * @default - that minimum plus outageReceiveCount(OUTAGE_HORIZON_SECONDS, ...) (21 with
   * maxAttempts 5 and a 330 s visibility timeout)
   */
  readonly maxReceiveCount?: number;
  /** @default - 6x the executor's timeout, the smallest allowed value */
  readonly visibilityTimeoutSeconds?: number;
  /** @default 10 */
  readonly batchSize?: number;
  /** @default 1 */
  readonly maxBatchingWindowSeconds?: number;
  /** Concurrent executor invocations the event source may run. @default 5 */
  readonly maxConcurrency?: number;
}

export interface ReconciliationConfig {
  /** @default 24 */
  readonly windowHours?: number;
  /** @default 60 */
  readonly everyMinutes?: number;
  /** Work younger than this is left alone. @default 300 */
  readonly settleSeconds?: number;
  /** RECEIVED work older than this is re-enqueued. @default 900 */
  readonly stuckAfterSeconds?: number;
  /** Re-enqueues per run. @default 500 */
  readonly maxReenqueuePerRun?: number;
}

export interface ApiConfig {
  /** Steady-state requests per second for the stage. @default 200 */
  readonly throttlingRateLimit?: number;
  /** @default 400 */
  readonly throttlingBurstLimit?: number;
}

export interface AlarmsConfig {
  /** The duplicate-storm alarm fires when duplicates exceed this share of a route's deliveries over 5 minutes. @default 0.5 */
  readonly duplicateStormShare?: number;
  /** Deliveries in 5 minutes below which the storm alarm stays quiet (a few retries are normal). @default 20 */
  readonly duplicateStormMinDeliveries?: number;
}

/** Where an action's code lives. Paths are absolute, or relative to the current directory. */
export interface ActionSource {
  /** Module whose default export is the action function. */
  readonly entry: string;
  /**
   * Module whose default export is the action's ledger, which the reconciler reads to check
   * the action's effects. @default - no ledger: the reconciler does not check this action's effects
   */
  readonly ledger?: string;
}

/**
 * The Regions of an active-active deployment: one receiver (API, functions, queues, alarms) per
 * replica Region, all on one global events table with multi-Region strong consistency (MRSC), so
 * that a key is claimed once whichever Region a copy lands in. MRSC spans exactly three Regions of
 * one Region set: three replicas, or two replicas and a witness (docs/architecture.md, "Several
 * Regions").
 */
export interface RegionsConfig {
  /** The Regions that run a receiver; the first holds the table's definition (its stack deploys first). */
  readonly replicas: readonly string[];
  /** A Region that only votes in the table's quorum: required with two replicas, refused with three. */
  readonly witness?: string;
  /**
   * The global table's consistency. Only `strong` is accepted: with `eventual` (MREC) each Region
   * evaluates a conditional write against its own replica and conflicting writes are settled by
   * last writer wins, so two Regions' claims of one key can both succeed. @default 'strong'
   */
  readonly consistency?: 'strong' | 'eventual';
}

export interface RetryproofConfig {
  readonly routes: readonly RouteConfig[];
  /**
   * The actions the routes name, by name (a letter, then up to 63 letters, digits, `-` or `_`).
   * @default - none: only the demo's `payout`, when `demo` is on
   */
  readonly actions?: Readonly<Record<string, ActionSource>>;
  /**
   * Prefix of every physical name the receiver creates: 1 to 24 lowercase letters, digits or
   * `-`, starting with a letter. @default - derived from the stack name and construct id
   */
  readonly namePrefix?: string;
  /**
   * An events table that already exists, by name or ARN, for the receiver to use instead of
   * creating one: the table a `cdk destroy` retained, so a redeploy keeps every key it has
   * claimed (README, "Redeploying after a destroy"). It must have the events table's key schema
   * and its `byTime`, `parked` and `failed` indexes, in the stack's Region. Not with `regions`.
   * @default - the receiver creates its table
   */
  readonly existingEventsTable?: string;
  readonly queue?: QueueConfig;
  readonly reconciliation?: ReconciliationConfig;
  readonly api?: ApiConfig;
  /** Deploy the demo action `payout` and its ledger table (the app's, not the construct's). @default false */
  readonly demo?: boolean;
  /** An e-mail address subscribed to the alarm topic. @default - no subscription */
  readonly alarmEmail?: string;
  readonly alarms?: AlarmsConfig;
  /** @default 30 */
  readonly logRetentionDays?: number;
  /**
   * Active X-Ray tracing on the three functions. Off by default: with no Tracer instrumenting
   * the calls, a trace holds Lambda's own segments only, and under X-Ray's default sampling (the
   * first request of each second and 5% of the rest) it is the largest line of the watched bill
   * at the advertised rate (`npm run cost`, about $24.50 a month at 10 M deliveries). Turn it on
   * to see cold starts and durations per request in the X-Ray console.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Several Regions on one global table (RegionsConfig).
   * @default - one Region, the stack's
   */
  readonly regions?: RegionsConfig;
  /**
   * The bound on how far any machine's clock (a Lambda's, SQS's) may be off true time, in seconds.
   * Every comparison of an instant written by another machine with our own clock keeps twice this
   * (leases, answer marks, the reconciler's stamps and windows). At least MIN_CLOCK_SKEW_SECONDS.
   * @default CLOCK_SKEW_SECONDS (5)
   */
  readonly maxClockSkewSeconds?: number;
}
