import {
  COMPLETION_MARGIN_SECONDS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_TTL_SECONDS,
  DLQ_RETENTION_SECONDS,
  HARD_MAX_BODY_BYTES,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  LEASE_FACTOR,
  SENDER_RETRY_WINDOW_SECONDS,
  SIGNATURE_SCHEMES,
  SQS_MAX_VISIBILITY_SECONDS,
  VISIBILITY_TO_TIMEOUT_FACTOR,
  backstopReceiveCount,
  leaseMarginSeconds,
} from './route-config.ts';
import type {
  BreakerReaction,
  DuplicateAnswer,
  RetryproofConfig,
  RouteConfig,
  SignatureConfig,
} from './route-config.ts';
import { parseKeyTemplate } from '../domain/key-template.ts';
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

/** The actions compiled into the executor (lambdas/actions/built-in-actions.ts). */
export const BUILT_IN_ACTIONS: readonly string[] = [DEMO_ACTION];

/**
 * Refuses a route whose action nobody supplied. Without this check such a route synthesizes,
 * starts, answers 202 and sends every delivery to the DLQ. `cdk synth` and `npm start` call
 * it with the actions their executor really has.
 * @throws ConfigError naming the route, the action and the actions there are
 */
export function assertActionsSupplied(config: ResolvedConfig, supplied: readonly string[] = BUILT_IN_ACTIONS): void {
  for (const route of config.routes) {
    if (!supplied.includes(route.action)) {
      throw new ConfigError(
        `route "${route.name}": action ${JSON.stringify(route.action)} is not one the executor has; ` +
          `its actions: ${supplied.join(', ')} (lambdas/actions/built-in-actions.ts)`,
      );
    }
  }
}

const ROUTE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const ACTION_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function positiveInt(where: string, field: string, value: unknown, max?: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ConfigError(`${where}: ${field} must be a positive whole number, got ${JSON.stringify(value)}`);
  }
  if (max !== undefined && value > max) {
    throw new ConfigError(`${where}: ${field} ${value} is above its maximum ${max}`);
  }
  return value;
}

function share(where: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new ConfigError(`${where}: ${field} must be a share above 0 and at most 1, got ${JSON.stringify(value)}`);
  }
  return value;
}

function oneOf<T extends string>(where: string, field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${where}: ${field} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function wholeNumber(where: string, field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${where}: ${field} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function validateSignature(where: string, signature: SignatureConfig | undefined): SignatureConfig {
  if (signature === undefined || !(SIGNATURE_SCHEMES as readonly string[]).includes(signature.scheme)) {
    throw new ConfigError(
      `${where}: signature.scheme ${JSON.stringify(signature?.scheme)} is not one of ${SIGNATURE_SCHEMES.join(', ')}`,
    );
  }
  if (signature.scheme === 'hmac-sha256') {
    if (typeof signature.header !== 'string' || !HEADER_NAME.test(signature.header)) {
      throw new ConfigError(`${where}: signature.header ${JSON.stringify(signature.header)} is not a lowercase header name`);
    }
    const encoding = oneOf(where, 'signature.encoding', signature.encoding ?? 'hex', ['hex', 'base64'] as const);
    return { scheme: 'hmac-sha256', header: signature.header, prefix: signature.prefix ?? '', encoding };
  }
  if (signature.scheme === 'standard-webhooks' || signature.scheme === 'stripe' || signature.scheme === 'slack') {
    const toleranceSeconds = positiveInt(where, 'signature.toleranceSeconds', signature.toleranceSeconds ?? 300, 3600);
    return { scheme: signature.scheme, toleranceSeconds };
  }
  return { scheme: signature.scheme };
}

function resolveRoute(route: RouteConfig, windowSeconds: number): ResolvedRoute {
  const name = route.name;
  if (typeof name !== 'string' || !ROUTE_NAME.test(name)) {
    throw new ConfigError(
      `route ${JSON.stringify(name)}: name must be 1 to 63 lowercase letters, digits, "-" or "_", starting with a letter or digit`,
    );
  }
  const where = `route "${name}"`;
  const signature = validateSignature(where, route.signature);
  if (typeof route.secretName !== 'string' || !SECRET_NAME.test(route.secretName)) {
    throw new ConfigError(`${where}: secretName ${JSON.stringify(route.secretName)} is not a valid Secrets Manager name`);
  }
  if (route.key !== undefined) {
    try {
      parseKeyTemplate(route.key);
    } catch (err) {
      throw new ConfigError(`${where}: key ${JSON.stringify(route.key)} is not a valid template: ${(err as Error).message}`);
    }
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
  const ttlSeconds = positiveInt(where, 'ttl', route.ttlSeconds ?? DEFAULT_TTL_SECONDS);
  const senderRetryWindowSeconds =
    route.senderRetryWindowSeconds === undefined
      ? SENDER_RETRY_WINDOW_SECONDS[signature.scheme]
      : positiveInt(where, 'senderRetryWindowSeconds', route.senderRetryWindowSeconds);
  const coverSeconds = senderRetryWindowSeconds + DLQ_RETENTION_SECONDS + windowSeconds;
  if (ttlSeconds < coverSeconds) {
    throw new ConfigError(
      `${where}: ttl ${ttlSeconds} s is shorter than its cover ${coverSeconds} s ` +
        `(sender retry window ${senderRetryWindowSeconds} s + DLQ retention ${DLQ_RETENTION_SECONDS} s + ` +
        `reconciliation window ${windowSeconds} s)`,
    );
  }
  const actionTimeSeconds = positiveInt(where, 'actionTimeSeconds', route.actionTimeSeconds);
  const leaseSeconds = actionTimeSeconds * LEASE_FACTOR;
  if (leaseSeconds + COMPLETION_MARGIN_SECONDS > LAMBDA_MAX_TIMEOUT_SECONDS) {
    throw new ConfigError(
      `${where}: actionTimeSeconds ${actionTimeSeconds} gives a lease of ${leaseSeconds} s, which with the ` +
        `${COMPLETION_MARGIN_SECONDS} s completion margin exceeds Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS} s timeout`,
    );
  }
  if (typeof route.action !== 'string' || !ACTION_NAME.test(route.action)) {
    throw new ConfigError(`${where}: action ${JSON.stringify(route.action)} is not a valid action name`);
  }
  const keepHeaders = [...new Set([...(route.keepHeaders ?? []), ...DELIVERY_ID_HEADERS[signature.scheme]])];
  for (const header of keepHeaders) {
    if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
      throw new ConfigError(`${where}: keepHeaders entry ${JSON.stringify(header)} is not a lowercase header name`);
    }
    // Kept headers become a map's keys in the record; these names are object internals to
    // JavaScript and to the DynamoDB marshaller, which would drop or refuse them at run time.
    if (RESERVED_KEYS.has(header.toLowerCase())) {
      throw new ConfigError(`${where}: keepHeaders entry ${JSON.stringify(header)} cannot be kept (a reserved object key)`);
    }
  }
  const breakerReaction = oneOf(where, 'breakerReaction', route.breakerReaction ?? 'pause', ['pause', 'alert'] as const);
  const duplicateAnswer = oneOf(where, 'duplicateAnswer', route.duplicateAnswer ?? 'replay', ['replay', 'strict-409'] as const);
  return {
    name,
    signature,
    secretName: route.secretName,
    importSecret: route.importSecret ?? false,
    key: route.key,
    ttlSeconds,
    senderRetryWindowSeconds,
    coverSeconds,
    actionTimeSeconds,
    leaseSeconds,
    actionDeadlineSeconds: Math.max(1, leaseSeconds - leaseMarginSeconds(leaseSeconds)),
    maxAttempts: positiveInt(where, 'maxAttempts', route.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, 100),
    action: route.action,
    keepHeaders: keepHeaders.map((h) => h.toLowerCase()),
    breakerThreshold: positiveInt(where, 'breakerThreshold', route.breakerThreshold ?? 3),
    breakerReaction,
    duplicateAnswer,
    maxBodyBytes: positiveInt(where, 'maxBodyBytes', route.maxBodyBytes ?? 128 * 1024, HARD_MAX_BODY_BYTES),
  };
}

/**
 * Applies every default and validates the whole configuration. Called at synth (so a bad
 * configuration never deploys), at Lambda cold start and by the local stack.
 * @throws ConfigError naming the route, the field and the bad value
 */
export function resolveConfig(config: RetryproofConfig): ResolvedConfig {
  const windowHours = positiveInt('reconciliation', 'windowHours', config.reconciliation?.windowHours ?? 24, 24 * 14);
  const windowSeconds = windowHours * 3600;
  if (!Array.isArray(config.routes) || config.routes.length === 0) {
    throw new ConfigError('config: routes must list at least one route');
  }
  const routes = (config.routes as readonly RouteConfig[]).map((route) => resolveRoute(route, windowSeconds));
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.name)) throw new ConfigError(`route "${route.name}": name is used twice`);
    seen.add(route.name);
  }
  const demo = config.demo ?? true;
  for (const route of routes) {
    if (route.action === DEMO_ACTION && !demo) {
      throw new ConfigError(`route "${route.name}": action "payout" needs the demo ledger, but demo is false`);
    }
  }
  const executorTimeoutSeconds = Math.max(...routes.map((r) => r.leaseSeconds)) + COMPLETION_MARGIN_SECONDS;
  const minVisibility = executorTimeoutSeconds * VISIBILITY_TO_TIMEOUT_FACTOR;
  const visibilityTimeoutSeconds = config.queue?.visibilityTimeoutSeconds ?? minVisibility;
  positiveInt('queue', 'visibilityTimeoutSeconds', visibilityTimeoutSeconds, SQS_MAX_VISIBILITY_SECONDS);
  if (visibilityTimeoutSeconds < minVisibility) {
    throw new ConfigError(
      `queue: visibilityTimeoutSeconds ${visibilityTimeoutSeconds} s is under ${VISIBILITY_TO_TIMEOUT_FACTOR}x ` +
        `the executor's timeout of ${executorTimeoutSeconds} s (minimum ${minVisibility} s)`,
    );
  }
  const backstop = Math.max(...routes.map((r) => backstopReceiveCount(r.maxAttempts)));
  const maxReceiveCount = positiveInt('queue', 'maxReceiveCount', config.queue?.maxReceiveCount ?? backstop, 1000);
  if (maxReceiveCount < backstop) {
    const route = routes.find((r) => backstopReceiveCount(r.maxAttempts) === backstop) as ResolvedRoute;
    throw new ConfigError(
      `queue: maxReceiveCount ${maxReceiveCount} is below the backstop ${backstop} that route "${route.name}" needs ` +
        `(2 x maxAttempts ${route.maxAttempts} + 2: a receive per attempt, one per lease found held, two to spare); ` +
        `the retry budget is maxAttempts, maxReceiveCount only catches workers that die without answering`,
    );
  }
  const everyMinutes = positiveInt('reconciliation', 'everyMinutes', config.reconciliation?.everyMinutes ?? 60, 24 * 60);
  const settleSeconds = positiveInt('reconciliation', 'settleSeconds', config.reconciliation?.settleSeconds ?? 300, 3600);
  const alarmEmail = config.alarmEmail;
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) {
    throw new ConfigError(`config: alarmEmail ${JSON.stringify(alarmEmail)} is not an e-mail address`);
  }
  return {
    routes,
    queue: {
      maxReceiveCount,
      visibilityTimeoutSeconds,
      resendAfterSeconds: visibilityTimeoutSeconds + 60,
      batchSize: positiveInt('queue', 'batchSize', config.queue?.batchSize ?? 10, 10),
      maxBatchingWindowSeconds: wholeNumber('queue', 'maxBatchingWindowSeconds', config.queue?.maxBatchingWindowSeconds ?? 1, 0, 300),
      // The SQS event source's own lower bound is 2.
      maxConcurrency: wholeNumber('queue', 'maxConcurrency', config.queue?.maxConcurrency ?? 5, 2, 1000),
    },
    executorTimeoutSeconds,
    reconciliation: {
      windowHours,
      everyMinutes,
      settleSeconds,
      stuckAfterSeconds: positiveInt(
        'reconciliation',
        'stuckAfterSeconds',
        config.reconciliation?.stuckAfterSeconds ?? 900,
      ),
      maxReenqueuePerRun: positiveInt(
        'reconciliation',
        'maxReenqueuePerRun',
        config.reconciliation?.maxReenqueuePerRun ?? 500,
      ),
    },
    api: {
      throttlingRateLimit: positiveInt('api', 'throttlingRateLimit', config.api?.throttlingRateLimit ?? 200),
      throttlingBurstLimit: positiveInt('api', 'throttlingBurstLimit', config.api?.throttlingBurstLimit ?? 400),
    },
    demo,
    alarmEmail,
    alarms: {
      duplicateStormShare: share('alarms', 'duplicateStormShare', config.alarms?.duplicateStormShare ?? 0.5),
      duplicateStormMinDeliveries: positiveInt('alarms', 'duplicateStormMinDeliveries', config.alarms?.duplicateStormMinDeliveries ?? 20),
    },
    logRetentionDays: positiveInt('config', 'logRetentionDays', config.logRetentionDays ?? 30),
  };
}
