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
  leaseMarginSeconds,
  outageReceiveCount,
} from './route-config.ts';
import type { BreakerReaction, DuplicateAnswer, RetryproofConfig, SignatureConfig } from './route-config.ts';
import { RESERVED_KEYS, RetryproofConfigSchema } from './config-schema.ts';
import type { ParsedConfig } from './config-schema.ts';
import { issueLine } from './config-issues.ts';
import { DELIVERY_ID_HEADERS, SIGNED_HEADERS, unsignedTemplateHeaders } from '../domain/idempotency-key.ts';

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
  /** senderRetryWindow + DLQ retention + reconciliation window. */
  readonly coverSeconds: number;
  readonly actionTimeSeconds: number;
  /** actionTime x 3: how long a claim holds the record. */
  readonly leaseSeconds: number;
  /** The action is aborted at this many seconds, a margin before its lease ends, so a live worker's completion lands inside its lease. */
  readonly actionDeadlineSeconds: number;
  /** Runs of the action per budget (a redrive gives a fresh one). */
  readonly maxAttempts: number;
  readonly action: string;
  readonly keepHeaders: readonly string[];
  readonly breakerThreshold: number;
  readonly breakerReaction: BreakerReaction;
  readonly duplicateAnswer: DuplicateAnswer;
  readonly maxBodyBytes: number;
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
   * The bound on clock differences between machines (CLOCK_SKEW_SECONDS): a lease is taken over
   * only 2 x this after it ends, by the taker's clock.
   */
  readonly clockSkewSeconds: number;
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
      throw new ConfigError(
        `route "${route.name}": action ${JSON.stringify(route.action)} is not supplied; ` +
          `the actions supplied are: ${supplied.length === 0 ? 'none' : supplied.join(', ')} ` +
          `(add it to actions: { ${route.action}: { entry: 'src/actions/${route.action}.ts' } })`,
      );
    }
  }
}

type ParsedRoute = ParsedConfig['routes'][number];

function resolveRoute(route: ParsedRoute, windowSeconds: number): ResolvedRoute {
  const where = `route "${route.name}"`;
  const { signature } = route;
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
  const coverSeconds = senderRetryWindowSeconds + DLQ_RETENTION_SECONDS + windowSeconds;
  if (route.ttlSeconds < coverSeconds) {
    throw new ConfigError(
      `${where}: ttl ${route.ttlSeconds} s is shorter than its cover ${coverSeconds} s ` +
        `(sender retry window ${senderRetryWindowSeconds} s + DLQ retention ${DLQ_RETENTION_SECONDS} s + ` +
        `reconciliation window ${windowSeconds} s)`,
    );
  }
  const leaseSeconds = route.actionTimeSeconds * LEASE_FACTOR;
  return {
    name: route.name,
    signature,
    secretName: route.secretName,
    importSecret: route.importSecret,
    key: route.key,
    ttlSeconds: route.ttlSeconds,
    senderRetryWindowSeconds,
    coverSeconds,
    actionTimeSeconds: route.actionTimeSeconds,
    leaseSeconds,
    actionDeadlineSeconds: Math.max(1, leaseSeconds - leaseMarginSeconds(leaseSeconds)),
    maxAttempts: route.maxAttempts,
    action: route.action,
    keepHeaders: [...new Set([...route.keepHeaders, ...DELIVERY_ID_HEADERS[signature.scheme]])],
    breakerThreshold: route.breakerThreshold,
    breakerReaction: route.breakerReaction,
    duplicateAnswer: route.duplicateAnswer,
    maxBodyBytes: route.maxBodyBytes,
  };
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
  const routes = parsed.routes.map((route) => resolveRoute(route, windowSeconds));
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
  // Every receive counts toward the redrive policy, a throttled or failed invocation's too: by
  // default the queue also rides out a day-long outage of a dependency (route-config.ts).
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
    clockSkewSeconds: CLOCK_SKEW_SECONDS,
    reconciliation,
    api: parsed.api,
    demo,
    alarmEmail: parsed.alarmEmail,
    alarms: parsed.alarms,
    logRetentionDays: parsed.logRetentionDays,
  };
}
