/**
 * The shape of a run, drawn from its seed apart from its schedule: queues, Regions, faults,
 * rate limit, claim check, TTL, ordering, byTime partitions; and the block a run prints of it.
 */
import type { RateLimit } from '../../lambdas/config/route-config.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import type { DynamoFaultPlan } from './faulty-dynamodb.ts';
import type { BodyFaultPlan } from './sim-body-objects.ts';
import { prng } from './schedule.ts';

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
export const BROWNOUT: DynamoFaultPlan = { ambiguous: 0.08, throttle: 0.45, beforeCommit: 0.15, slow: 0.25 };
/**
 * An isolated Region: its replica cannot reach the others, so its writes and strongly consistent
 * reads fail (an MRSC replica cut off from the quorum serves only eventually consistent reads,
 * Developer Guide, "How DynamoDB global tables work"); a few commit on the quorum and lose their answer.
 */
export const ISOLATED: DynamoFaultPlan = { ambiguous: 0.05, throttle: 0, beforeCommit: 0.9, slow: 0.05 };

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

/** The shape of a run: the seed's, less what `noRateLimit` leaves out (RunOptions). */
export function runShapeOf(seed: number, options: { readonly noRateLimit?: boolean }): RunShape {
  const drawn = shapeOf(seed);
  const { rate: _rate, ...unlimited } = drawn;
  return options.noRateLimit === true ? { ...unlimited, long: drawn.long && !drawn.longForShortTtl, shortTtl: false, lastDayRedrives: false, longForShortTtl: false, ordered: false, longPause: false } : drawn;
}

/** The Regions of a run: the option's, else the seed's draw. */
export function regionsOf(shape: RunShape, options: { readonly regions?: number }): number {
  return options.regions ?? shape.regions;
}

/** The block a run prints of its shape at its start (SIM_TRACE, and `npm run simulate -- --seed S`). */
export function shapeBlockOf(seed: number, options: { readonly regions?: number; readonly consistency?: 'strong' | 'eventual'; readonly noRateLimit?: boolean }): string[] {
  const shape = runShapeOf(seed, options);
  const regions = regionsOf(shape, options);
  return describeShape(shape, regions, options.consistency === 'eventual' && regions > 1);
}

/**
 * The shape a run drew, in one block: what a reader of its trace needs before the first
 * operation (its Regions, byTime partitions, routes, queues and faults).
 */
export function describeShape(shape: RunShape, regions: number, eventual: boolean): string[] {
  const percent = (p: number | undefined): string => `${Math.round((p ?? 0) * 1000) / 10} %`;
  const rate = shape.rate === undefined ? 'no rate limit' : `rate limit ${JSON.stringify(shape.rate.limit)}${shape.rate.ownQueue ? ' on a queue of its own' : ''}`;
  const d = shape.dynamo;
  return [
    `shape: ${regions} Region${regions === 1 ? '' : 's'} (${regions === 1 ? 'one table' : eventual ? 'a table each, eventually consistent' : 'one MRSC table'}), ${shape.timeShards} byTime partition${shape.timeShards === 1 ? '' : 's'} an hour, ${shape.keys} keys`,
    `shape: routes pay (${rate}${shape.ordered ? ', ordered per customer' : ''}${shape.longPause ? ', paused for weeks' : ''}), alt, sw, st; TTL ${shape.shortTtl ? 'the shortest the cover allows' : 'the default'}; bodies to the bucket: ${shape.claimCheck.all ? 'all' : 'large ones'}`,
    `shape: SQS visibility ${shape.visibilityTimeoutSeconds} s, batches of up to ${shape.batchSize}, concurrent receives ${percent(shape.concurrentReceive)}, move task ${shape.moveTaskResetsReceiveCount ? 'resets' : 'keeps'} receive counts`,
    `shape: DynamoDB faults per attempt: ambiguous ${percent(d.ambiguous)}, throttled ${percent(d.throttle)}, failed before commit ${percent(d.beforeCommit)}, slow ${percent(d.slow)}, conflicts ${percent(d.conflict)}; S3 fails ${percent(shape.claimCheck.faults.fails)}, loses answers ${percent(shape.claimCheck.faults.lostAnswer)}`,
    `shape: ${shape.long ? `a run of weeks${shape.lastDayRedrives ? ', a person redriving on last days' : ''}` : 'a run of hours to days'}${regions > 1 ? `, replication lag ${shape.replicationLagMs} ms` : ''}`,
  ];
}
