/** The fixed settings of every run: secrets, limits, timeouts, the epoch. */
import { createHash } from 'node:crypto';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { INGEST_TIMEOUT_SECONDS } from '../../lambdas/config/route-config.ts';
import { METRICS_NAMESPACE } from '../../lambdas/observability/metric-catalogue.ts';
import { createLogger } from '../../lambdas/observability/powertools.ts';
import { prng } from './schedule.ts';

export const SECRET = 'sim-shared-secret';
/** Standard Webhooks secrets are `whsec_` and base64 (standard-webhooks-keys.ts). */
export const SW_SECRET = `whsec_${Buffer.from('sim-standard-webhooks-secret').toString('base64')}`;
export const HMAC = { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'hex' } as const;
/** The alerting route's body limit: bodies just under, at and over it are sent. */
export const SMALL_BODY_LIMIT = 2048;
/**
 * The pay route's body limit: over the claim check's 128 KiB, so its bodies at the limit go to
 * the bucket while those at SQS's edge may stay in the message (the receiver's hard maximum,
 * 4.5 MiB, would only make the runs slower, not the protocol's paths more).
 */
export const PAY_BODY_LIMIT = 160 * 1024;
export const ACTION_TIME_SECONDS = 5;
/**
 * The Stripe route's action time by destination: a lease of 6, 15 or (any other, or none) 9 s.
 * Every lease up to 20 s has the same margin (2 s, leaseMarginSeconds), the one the takeover
 * edge reckons from the route's longest lease.
 */
export const ST_ACTION_TIME = { field: 'destination', seconds: { EU: 2, LATAM: ACTION_TIME_SECONDS }, otherwise: 3 } as const;
export const MAX_ATTEMPTS = 3;
export const STUCK_AFTER_SECONDS = 900;
/** The deployed functions' timeouts (lib/retryproof-stack.ts): an actor stepped after its own is killed, as Lambda would. */
export const INGEST_TIMEOUT_MS = INGEST_TIMEOUT_SECONDS * 1000;
export const RECONCILER_TIMEOUT_MS = 5 * 60_000;
export const SETTLE_SECONDS = 60;
/** A long run lasts at least this long (then up to 3 days more). */
export const LONG_RUN_MS = 41 * 24 * 3_600_000;
/** DynamoDB deletes an expired item up to this long after its expiry (see ttlSweep). */
export const TTL_MAX_LAG_SECONDS = 48 * 3600;

/** The seeded lag of one item's TTL deletion, 0..48 h. */
export function ttlLagSeconds(seed: number, pk: string, sk: string, expiresAt: number): number {
  const digest = createHash('sha256').update(`${seed}|${pk}|${sk}|${expiresAt}`).digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * TTL_MAX_LAG_SECONDS);
}

/** A number in [0, 1) the seed draws once, apart from every stream of the run. */
export function a0(seed: number): number {
  return prng(seed ^ 0x10a9)();
}
export const HOUR = 3_600_000;
/** Every run starts at the same instant: each has tables of its own, so a seed replays exactly. */
export const EPOCH = Date.UTC(2030, 0, 1);
export const DAY = 24 * HOUR;
/** The longest the simulation's clock moves with no reconciler run (leapTo): half its 24 h window. */
export const RECONCILER_GAP_MS = 12 * HOUR;
const quiet = (): void => undefined;
export const SIM_LOGGER = createLogger('retryproof-simulation');
export const SIM_METRICS = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: 'retryproof-simulation',
  logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
});

/** Errors no function may fail with: they are bugs in our code, not what the world did to it. */
export const PROGRAMMING_ERRORS = [TypeError, ReferenceError, RangeError, SyntaxError] as const;

/** The writes the eventually consistent control replicates (the protocol makes no batch or transaction writes). */
export const WRITE_COMMANDS: ReadonlySet<string> = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);
