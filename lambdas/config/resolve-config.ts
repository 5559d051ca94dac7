import { safeParse } from 'valibot';
import {
  CLOCK_SKEW_SECONDS,
  COMPLETION_MARGIN_SECONDS,
  DLQ_RETENTION_SECONDS,
  OUTAGE_HORIZON_SECONDS,
  LEASE_FACTOR,
  SENDER_RETRY_WINDOW_SECONDS,
  VISIBILITY_TO_TIMEOUT_FACTOR,
  backstopReceiveCount,
  outageReceiveCount,
} from './route-config.ts';
import type { BreakerReaction, DuplicateAnswer, RetryproofConfig, SignatureConfig } from './route-config.ts';
import { RESERVED_KEYS, RetryproofConfigSchema } from './config-schema.ts';
import type { ParsedConfig } from './config-schema.ts';
import { closest, issueLine } from './config-issues.ts';
import { DELIVERY_ID_HEADERS, SIGNED_HEADERS, unsignedTemplateHeaders } from '../domain/idempotency-key.ts';
import { parseKeyTemplate } from '../domain/key-template.ts';
import { namesARegion, regionsProblems } from './regions.ts';
import { leaseOfActionTime, longestActionTime } from './route-lease.ts';

/** A configuration error names the route, the field and the value. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A route with every default applied and every derived number computed. */
export interface ResolvedRoute {
  readonly name: string;
  readonly signature: SignatureConfig;
  readonly secretName: string;
  readonly importSecret: boolean;
  readonly key: string | undefined;
  readonly ttlSeconds: number;
  readonly senderRetryWindowSeconds: number;
  /**
   * senderRetryWindow + DLQ retention + reconciliation window + the lease (with a per-destination
   * table, the longest): the TTL must cover them all, the last attempt's lease included.
   */
  readonly coverSeconds: number;
  /** The action's declared run time; with a per-destination table (actionTime), its longest. */
  readonly actionTimeSeconds: number;
  /**
   * The per-destination table, its field as a JSON pointer, or undefined when the route declares
   * one actionTimeSeconds. A record is leased for 3x the time its body's value picks.
   */
  readonly actionTime: ResolvedActionTime | undefined;
  /** actionTime x 3: how long a claim holds the record (with a table, the longest lease). */
  readonly leaseSeconds: number;
  /**
   * The action is aborted at this many seconds, a margin before its lease ends, so a live worker's
   * completion lands inside its lease (with a table, the longest lease's; each record's own comes
   * from route-lease.ts, recordLease).
   */
  readonly actionDeadlineSeconds: number;
  /** Runs of the action per budget (a redrive gives a fresh one). */
  readonly maxAttempts: number;
  readonly action: string;
  readonly keepHeaders: readonly string[];
  readonly breakerThreshold: number;
  readonly breakerReaction: BreakerReaction;
  readonly duplicateAnswer: DuplicateAnswer;
  readonly maxBodyBytes: number;
  /** Bodies above this many bytes go to the receiver's bucket (the S3 claim check). */
  readonly claimCheckAboveBytes: number;
  /** The route's rate limit, or undefined for none. */
  readonly rateLimit: ResolvedRateLimit | undefined;
  /** The event source's maxConcurrency for the route's own queue, or undefined on the shared queue. */
  readonly concurrency: number | undefined;
  /** Whether the route's work has a queue and an event source of its own. */
  readonly ownQueue: boolean;
  /** The route's ordering template (domain/entity-order.ts), or undefined for none. */
  readonly orderBy?: string;
}

/** A rate limit as the gate uses it: runs are spaced `intervalMs` apart. */
export interface ResolvedRateLimit {
  /** Runs per `perSeconds`. */
  readonly count: number;
  /** The unit: 1, 60 or 3600. */
  readonly perSeconds: number;
  /** perSeconds x 1000 / count: the least time between two admissions. */
  readonly intervalMs: number;
  /** As a person reads it: `1 per second`. */
  readonly text: string;
}

/** A route's action time by a body field (RouteConfig.actionTime), resolved. */
export interface ResolvedActionTime {
  /** The field as an RFC 6901 pointer: a plain name `destination` becomes `/destination`. */
  readonly pointer: string;
  readonly seconds: Readonly<Record<string, number>>;
  readonly otherwise: number;
}

/** The Regions of an active-active deployment, checked against what MRSC accepts. */
export interface ResolvedRegions {
  readonly replicas: readonly string[];
  readonly witness: string | undefined;
}

export interface ResolvedConfig {
  readonly routes: readonly ResolvedRoute[];
  readonly queue: {
    readonly maxReceiveCount: number;
    readonly visibilityTimeoutSeconds: number;
    readonly batchSize: number;
    readonly maxBatchingWindowSeconds: number;
    readonly maxConcurrency: number;
    /**
     * A RECEIVED record whose last message is older than this has lost it: a duplicate
     * delivery re-sends. The visibility timeout plus a minute, the longest a live message
     * of a RECEIVED record (handed back after a retryable error) stays hidden.
     */
    readonly resendAfterSeconds: number;
  };
  /** The executor's function timeout: the longest lease plus the completion margin. */
  readonly executorTimeoutSeconds: number;
  /**
   * The bound on clock differences between machines (maxClockSkewSeconds, CLOCK_SKEW_SECONDS by
   * default): a lease is taken over only 2 x this after it ends, by the taker's clock.
   */
  readonly clockSkewSeconds: number;
  /** Several Regions on one MRSC global table, or undefined for one Region. */
  readonly regions: ResolvedRegions | undefined;
  readonly reconciliation: {
    readonly windowHours: number;
    readonly everyMinutes: number;
    readonly settleSeconds: number;
    readonly stuckAfterSeconds: number;
    readonly maxReenqueuePerRun: number;
  };
  readonly api: { readonly throttlingRateLimit: number; readonly throttlingBurstLimit: number };
  readonly demo: boolean;
  readonly alarmEmail: string | undefined;
  readonly alarms: { readonly duplicateStormShare: number; readonly duplicateStormMinDeliveries: number };
  readonly logRetentionDays: number;
  /** Active X-Ray tracing on the three functions. */
  readonly tracing: boolean;
}

/** The demo's payments action; it needs the demo ledger table. */
export const DEMO_ACTION = 'payout';

/**
 * Refuses a route whose action nobody supplied. Without this check such a route synthesizes,
 * starts, answers 202 and sends every delivery to the DLQ. `cdk synth` and `npm start` call
 * it with the names of the actions their executor really has: the keys of `actions`, plus
 * the demo's when the demo is on.
 * @throws ConfigError naming the route, the action and the actions there are
 */
export function assertActionsSupplied(config: ResolvedConfig, supplied: readonly string[]): void {
  for (const route of config.routes) {
    if (!supplied.includes(route.action)) {
      // A name next to one supplied is a typo far more often than a new action: say so, and do
      // not tell the user to add the typo as an action of its own.
      const near = closest(route.action, supplied);
      if (near !== undefined) {
        throw new ConfigError(
          `route "${route.name}": action ${JSON.stringify(route.action)} is not supplied; did you mean ${JSON.stringify(near)}? ` +
            `(the actions supplied are: ${supplied.join(', ')})`,
        );
      }
      throw new ConfigError(
        `route "${route.name}": action ${JSON.stringify(route.action)} is not supplied; ` +
          `the actions supplied are: ${supplied.length === 0 ? 'none' : supplied.join(', ')} ` +
          `(add it to actions: { ${route.action}: { entry: 'src/actions/${route.action}.ts' } })`,
      );
    }
  }
}

type ParsedRoute = ParsedConfig['routes'][number];

/** The route's per-destination table, or undefined; exactly one of actionTimeSeconds and actionTime is given. */
function resolveActionTime(route: ParsedRoute, where: string): { actionTimeSeconds: number; actionTime: ResolvedActionTime | undefined } {
  const table = route.actionTime;
  if (table === undefined) {
    if (route.actionTimeSeconds === undefined) {
      throw new ConfigError(`${where}: needs actionTimeSeconds (the action's run time; the lease is ${LEASE_FACTOR}x it) or actionTime (a time per destination)`);
    }
    return { actionTimeSeconds: route.actionTimeSeconds, actionTime: undefined };
  }
  if (route.actionTimeSeconds !== undefined) {
    throw new ConfigError(`${where}: gives both actionTimeSeconds and actionTime; keep one (actionTime's otherwise is the time of any other destination)`);
  }
  const pointer = table.field.startsWith('/') ? table.field : `/${table.field.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  const actionTimeSeconds = longestActionTime(table).seconds;
  return { actionTimeSeconds, actionTime: { pointer, seconds: { ...table.seconds }, otherwise: table.otherwise } };
}

/** The lease in a TTL cover's sum: the route's one, or its table's longest and the destination that picks it. */
function leaseTerm(table: ResolvedActionTime | undefined, actionTimeSeconds: number, leaseSeconds: number): string {
  if (table === undefined) return `lease ${leaseSeconds} s (actionTimeSeconds ${actionTimeSeconds} s x ${LEASE_FACTOR})`;
  const longest = longestActionTime(table);
  return `the longest lease ${leaseSeconds} s (actionTime ${longest.destination ?? 'otherwise'} ${longest.seconds} s x ${LEASE_FACTOR})`;
}

function resolveRoute(route: ParsedRoute, windowSeconds: number, regions: readonly string[] | undefined): ResolvedRoute {
  const where = `route "${route.name}"`;
  const { signature } = route;
  if (route.key !== undefined && regions !== undefined) {
    const named = parseKeyTemplate(route.key).filter((part) => part.kind === 'literal' && namesARegion(part.text, regions));
    if (named.length > 0) {
      throw new ConfigError(
        `${where}: key ${JSON.stringify(route.key)} has a Region in its fixed text; with several Regions (${regions.join(', ')}) ` +
          `that makes one event two keys, one per Region its copies land in, and runs it twice. Drop the prefix: the one ` +
          `global table already keeps each key once across Regions. Keys the sender mints per datacenter still work: read ` +
          `the datacenter from the delivery, e.g. {body:/datacenter}_{body:/order_id}`,
      );
    }
  }
  if (route.key !== undefined) {
    const unsigned = unsignedTemplateHeaders(signature.scheme, route.key);
    if (unsigned.length > 0) {
      const signed = SIGNED_HEADERS[signature.scheme];
      throw new ConfigError(
        `${where}: key ${JSON.stringify(route.key)} reads the header ${unsigned.join(', ')}, which the ${signature.scheme} ` +
          `signature does not cover: a captured delivery could be replayed under a fresh key. Read the key from ` +
          `{body:/pointer} fields${signed.length > 0 ? ` or the signed header ${signed.join(', ')}` : ''}, ` +
          `or leave key unset (the scheme's default key)`,
      );
    }
  }
  const senderRetryWindowSeconds = route.senderRetryWindowSeconds ?? SENDER_RETRY_WINDOW_SECONDS[signature.scheme];
  const { actionTimeSeconds, actionTime } = resolveActionTime(route, where);
  const { leaseSeconds, actionDeadlineSeconds } = leaseOfActionTime(actionTimeSeconds);
  // The record must outlive the last attempt's lease too: a copy redriven on the DLQ's last day
  // is claimed then, and its lease (the longest a record of the route can get) runs on from there.
  const coverSeconds = senderRetryWindowSeconds + DLQ_RETENTION_SECONDS + windowSeconds + leaseSeconds;
  if (route.ttlSeconds < coverSeconds) {
    throw new ConfigError(
      `${where}: ttl ${route.ttlSeconds} s is shorter than its cover ${coverSeconds} s ` +
        `(sender retry window ${senderRetryWindowSeconds} s + DLQ retention ${DLQ_RETENTION_SECONDS} s + ` +
        `reconciliation window ${windowSeconds} s + ${leaseTerm(actionTime, actionTimeSeconds, leaseSeconds)})`,
    );
  }
  return {
    name: route.name,
    signature,
    secretName: route.secretName,
    importSecret: route.importSecret,
    key: route.key,
    ttlSeconds: route.ttlSeconds,
    senderRetryWindowSeconds,
    coverSeconds,
    actionTimeSeconds,
    actionTime,
    leaseSeconds,
    actionDeadlineSeconds,
    maxAttempts: route.maxAttempts,
    action: route.action,
    keepHeaders: [...new Set([...route.keepHeaders, ...DELIVERY_ID_HEADERS[signature.scheme]])],
    breakerThreshold: route.breakerThreshold,
    breakerReaction: route.breakerReaction,
    duplicateAnswer: route.duplicateAnswer,
    maxBodyBytes: route.maxBodyBytes,
    claimCheckAboveBytes: route.claimCheckAboveBytes,
    ...(route.orderBy === undefined ? {} : { orderBy: route.orderBy }),
    ...isolationOf(route, where),
  };
}

/** The route's rate limit, concurrency and queue, checked together. */
function isolationOf(route: ParsedRoute, where: string): Pick<ResolvedRoute, 'rateLimit' | 'concurrency' | 'ownQueue'> {
  const limit = route.rateLimit;
  let rateLimit: ResolvedRateLimit | undefined;
  if (limit !== undefined) {
    const [count, perSeconds, unit] =
      limit.perSecond !== undefined ? [limit.perSecond, 1, 'second'] : limit.perMinute !== undefined ? [limit.perMinute, 60, 'minute'] : [limit.perHour as number, 3600, 'hour'];
    rateLimit = { count, perSeconds, intervalMs: (perSeconds * 1000) / count, text: `${count} per ${unit}` };
  }
  if (route.ownQueue === false && route.concurrency !== undefined) {
    throw new ConfigError(`${where}: concurrency ${route.concurrency} needs the route's own queue (its event source's maxConcurrency); drop ownQueue: false`);
  }
  const ownQueue = route.ownQueue ?? (rateLimit !== undefined || route.concurrency !== undefined);
  return { rateLimit, concurrency: ownQueue ? route.concurrency : undefined, ownQueue };
}

/** The regions setting, or every problem MRSC would refuse at deploy, at once. */
function resolveRegions(regions: NonNullable<ParsedConfig['regions']>): ResolvedRegions {
  const problems = regionsProblems(regions);
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return { replicas: [...regions.replicas], witness: regions.witness };
}

/** Checks of `actions` the schema cannot make. */
function checkActions(config: RetryproofConfig, demo: boolean): void {
  const actions = config.actions ?? {};
  // valibot's record skips these keys without a word, so their entries would go unchecked.
  for (const name of Object.keys(actions)) {
    if (RESERVED_KEYS.has(name)) {
      throw new ConfigError(`actions: name ${JSON.stringify(name)} cannot be used (a reserved object key)`);
    }
  }
  if (demo && Object.hasOwn(actions, DEMO_ACTION)) {
    throw new ConfigError(
      `actions: "${DEMO_ACTION}" is the demo's action, deployed while demo is true; rename yours, or set demo: false`,
    );
  }
}

/**
 * Applies every default and validates the whole configuration: first the schema (each field
 * alone, unknown keys refused), then the checks that read several fields. Called at synth
 * (so a bad configuration never deploys), at Lambda cold start and by the local stack.
 * @throws ConfigError naming the route, the field and the bad value; one line per problem
 *   the schema finds
 */
export function resolveConfig(config: RetryproofConfig): ResolvedConfig {
  const result = safeParse(RetryproofConfigSchema, config, { abortPipeEarly: true });
  if (!result.success) throw new ConfigError([...new Set(result.issues.map(issueLine))].join('\n'));
  const parsed = result.output;
  const { queue, reconciliation, demo } = parsed;
  checkActions(config, demo);
  const windowSeconds = reconciliation.windowHours * 3600;
  const regions = parsed.regions === undefined ? undefined : resolveRegions(parsed.regions);
  const routes = parsed.routes.map((route) => resolveRoute(route, windowSeconds, regions?.replicas));
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.name)) throw new ConfigError(`route "${route.name}": name is used twice`);
    seen.add(route.name);
  }
  // Whether a route's action is supplied is the app's and the construct's question
  // (assertActionsSupplied), not this one's: the functions re-run resolveConfig at cold
  // start on a configuration that no longer lists the actions or the demo switch.
  const executorTimeoutSeconds = Math.max(...routes.map((r) => r.leaseSeconds)) + COMPLETION_MARGIN_SECONDS;
  const minVisibility = executorTimeoutSeconds * VISIBILITY_TO_TIMEOUT_FACTOR;
  const visibilityTimeoutSeconds = queue.visibilityTimeoutSeconds ?? minVisibility;
  if (visibilityTimeoutSeconds < minVisibility) {
    throw new ConfigError(
      `queue: visibilityTimeoutSeconds ${visibilityTimeoutSeconds} s is under ${VISIBILITY_TO_TIMEOUT_FACTOR}x ` +
        `the executor's timeout of ${executorTimeoutSeconds} s (minimum ${minVisibility} s)`,
    );
  }
  const backstop = Math.max(...routes.map((r) => backstopReceiveCount(r.maxAttempts)));
  // why: docs/architecture.md#every-receive-counts-toward-maxreceivecount
  const maxReceiveCount =
    queue.maxReceiveCount ?? Math.min(1000, backstop + outageReceiveCount(OUTAGE_HORIZON_SECONDS, visibilityTimeoutSeconds, executorTimeoutSeconds));
  if (maxReceiveCount < backstop) {
    const route = routes.find((r) => backstopReceiveCount(r.maxAttempts) === backstop) as ResolvedRoute;
    throw new ConfigError(
      `queue: maxReceiveCount ${maxReceiveCount} is below the backstop ${backstop} that route "${route.name}" needs ` +
        `(2 x maxAttempts ${route.maxAttempts} + 2: a receive per attempt, one per lease found held, two to spare); ` +
        `the retry budget is maxAttempts, maxReceiveCount only catches workers that die without answering`,
    );
  }
  // why: docs/architecture.md#clocks-differ-between-machines
  const clockSkewSeconds = parsed.maxClockSkewSeconds ?? CLOCK_SKEW_SECONDS;
  for (const [field, seconds] of [['settleSeconds', reconciliation.settleSeconds], ['stuckAfterSeconds', reconciliation.stuckAfterSeconds]] as const) {
    if (seconds < 2 * clockSkewSeconds) {
      throw new ConfigError(
        `reconciliation: ${field} ${seconds} s leaves no room for the clock bound: it compares another machine's stamp with the ` +
          `reconciler's clock, so it must be at least 2 x maxClockSkewSeconds (${2 * clockSkewSeconds} s)`,
      );
    }
  }
  return {
    routes,
    queue: {
      maxReceiveCount,
      visibilityTimeoutSeconds,
      resendAfterSeconds: visibilityTimeoutSeconds + 60,
      batchSize: queue.batchSize,
      maxBatchingWindowSeconds: queue.maxBatchingWindowSeconds,
      maxConcurrency: queue.maxConcurrency,
    },
    executorTimeoutSeconds,
    clockSkewSeconds,
    regions,
    reconciliation,
    api: parsed.api,
    demo,
    alarmEmail: parsed.alarmEmail,
    alarms: parsed.alarms,
    logRetentionDays: parsed.logRetentionDays,
    tracing: parsed.tracing,
  };
}
