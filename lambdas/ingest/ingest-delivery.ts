/**
 * The ingest use case: verify, derive the key, claim it with one conditional write,
 * queue new work, and answer. It knows nothing of API Gateway, middy or the SDK.
 */
import type { EventRecord, StoredAnswer } from '../domain/event-record.ts';
import { RECORD_STATUS, deliveryId, workMessageOf } from '../domain/event-record.ts';
import {
  DependencyError,
  KeyReusedError,
  MalformedBodyError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnknownRouteError,
} from '../domain/errors.ts';
import { fingerprint } from '../domain/fingerprint.ts';
import { InvalidSigningSecretError } from '../domain/signatures/signing-secret-error.ts';
import { validateKey } from '../domain/idempotency-key.ts';
import type { ClaimResult, IngestEventStore } from '../ports/event-store.ts';
import type { SecretSource } from '../ports/secret-source.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { PreparedRoute } from './prepared-route.ts';
import { crossesThreshold, tripBreaker } from './circuit-breaker.ts';
import type { BreakerDeps, BreakerOutcome } from './circuit-breaker.ts';

/** A delivery as the edge received it. Header names are lowercase. */
export interface IncomingDelivery {
  readonly method: string;
  readonly routeName: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: Buffer;
  /** How the body is kept: text as received, or base64 when API Gateway delivered binary. */
  readonly bodyEncoding: 'utf8' | 'base64';
}

export interface IngestDeps {
  readonly routes: ReadonlyMap<string, PreparedRoute>;
  readonly store: IngestEventStore;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  readonly now: () => number;
  /**
   * A duplicate that finds the record still RECEIVED this long after its last send
   * re-sends the message: the first send may have been lost with a crashed function.
   * @default 60_000
   */
  readonly resendAfterMs?: number;
  /** The circuit breaker; without it, no route is ever paused. */
  readonly breaker?: BreakerDeps;
}

/** What happened, for the answer, the logs and the metrics. */
export type IngestOutcome =
  | { readonly kind: 'accepted'; readonly route: string; readonly key: string; readonly answer: StoredAnswer }
  | {
      readonly kind: 'duplicate';
      readonly route: string;
      readonly key: string;
      readonly answer: StoredAnswer;
      /** True for a replay; false when a strict route answers 409 instead. */
      readonly replayed: boolean;
      /** The status the previous answer had: 2xx means the ack was lost, 5xx our failure. */
      readonly previousStatus: number;
      readonly hits: number | undefined;
      readonly ageMs: number;
      readonly ttlSeconds: number;
      readonly resent: boolean;
      /** Set when this delivery tripped the circuit breaker. */
      readonly breaker?: BreakerOutcome;
    };

const ACCEPTED_STATUS = 202;

function acceptedAnswer(id: string): StoredAnswer {
  return { status: ACCEPTED_STATUS, body: JSON.stringify({ id, status: 'accepted' }) };
}

async function dependency<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new DependencyError(name, { cause: err });
  }
}

/**
 * Handles one delivery. Throws a RetryproofError for every refusal; the edge maps it to
 * problem+json. A delivery that fails verification writes nothing.
 */
export async function ingestDelivery(deps: IngestDeps, delivery: IncomingDelivery): Promise<IngestOutcome> {
  if (delivery.method !== 'POST') throw new MethodNotAllowedError(delivery.method);
  const route = deps.routes.get(delivery.routeName);
  if (route === undefined) throw new UnknownRouteError(delivery.routeName);
  const config = route.config;
  if (delivery.rawBody.length > config.maxBodyBytes) {
    throw new PayloadTooLargeError(delivery.rawBody.length, config.maxBodyBytes);
  }

  const now = deps.now();
  // Verify before anything is written: a forged copy that arrives first must not poison the key.
  const secrets = await dependency('Secrets Manager', () => deps.secrets.secretsFor(config.secretName));
  let verdict: ReturnType<typeof route.verifier.verify>;
  try {
    verdict = route.verifier.verify(
      { headers: delivery.headers, rawBody: delivery.rawBody, nowSeconds: Math.floor(now / 1000) },
      secrets,
    );
  } catch (err) {
    // Only our own misconfiguration throws here (an empty or malformed stored secret):
    // a 5xx, so the sender retries once the secret is fixed, never a 401 it gives up on.
    if (err instanceof InvalidSigningSecretError) throw new DependencyError('signing secret', { cause: err });
    throw err;
  }
  if (!verdict.ok) throw new UnauthorizedError(verdict.reason);

  let parsed: { value: unknown } | undefined;
  const json = (): unknown => {
    if (parsed === undefined) {
      try {
        parsed = { value: JSON.parse(delivery.rawBody.toString('utf8')) as unknown };
      } catch (err) {
        throw new MalformedBodyError('The body is not valid JSON.', { cause: err });
      }
    }
    return parsed.value;
  };
  if (route.requiresJson) json();
  const key = validateKey(route.keySource({ headers: delivery.headers, json }));
  const id = deliveryId(config.name, key);
  const accepted = acceptedAnswer(id);

  const record: EventRecord = {
    route: config.name,
    key,
    status: RECORD_STATUS.received,
    fingerprint: fingerprint(delivery.rawBody),
    body: delivery.bodyEncoding === 'base64' ? delivery.rawBody.toString('base64') : delivery.rawBody.toString('utf8'),
    bodyEncoding: delivery.bodyEncoding,
    headers: keptHeaders(delivery.headers, config.keepHeaders),
    receivedAt: now,
    expiresAt: Math.floor(now / 1000) + config.ttlSeconds,
    answer: accepted,
    hits: 1,
    attempts: 0,
    lastEnqueuedAt: now,
  };

  const claim: ClaimResult = await dependency('DynamoDB', () => deps.store.claim(record, now));
  if (claim.kind === 'created') {
    try {
      await deps.queue.send(workMessageOf(record));
    } catch (sendError) {
      // The record stays (never delete on an error path): the sender's retry re-sends,
      // and the reconciler re-enqueues RECEIVED work that nobody retries.
      const failure = new DependencyError('SQS', { cause: sendError });
      await dependency('DynamoDB', () =>
        deps.store.recordEnqueueFailure(config.name, key, { status: failure.status, body: failure.message }),
      ).catch((recordError: unknown) => {
        throw new DependencyError('SQS', { cause: new AggregateError([sendError, recordError]) });
      });
      throw failure;
    }
    return { kind: 'accepted', route: config.name, key, answer: accepted };
  }

  const old = claim.record;
  if (old.fingerprint !== record.fingerprint) throw new KeyReusedError(id);

  // A 5xx we gave before means our own failure, not a real answer: never replay it.
  const answeredFailure = old.answer.status >= 500;
  const sinceSend = now - (old.lastEnqueuedAt ?? old.receivedAt);
  const lost = old.status === RECORD_STATUS.received && (answeredFailure || sinceSend >= (deps.resendAfterMs ?? 60_000));
  let resentAt: number | undefined;
  if (lost) {
    try {
      await deps.queue.send(workMessageOf(old));
      resentAt = now;
    } catch (sendError) {
      await dependency('DynamoDB', () => deps.store.recordDuplicate(config.name, key, { nowMs: now }));
      throw new DependencyError('SQS', { cause: sendError });
    }
  }
  const answer = answeredFailure ? accepted : old.answer;
  const hits = await dependency('DynamoDB', () =>
    deps.store.recordDuplicate(config.name, key, {
      nowMs: now,
      ...(resentAt === undefined ? {} : { resentAt }),
      ...(answeredFailure ? { answer } : {}),
    }),
  );
  let breaker: BreakerOutcome | undefined;
  if (deps.breaker !== undefined && hits !== undefined && crossesThreshold(config, hits)) {
    breaker = await dependency('circuit breaker', () => tripBreaker(deps.breaker as BreakerDeps, config, key, hits, now));
  }
  return {
    kind: 'duplicate',
    route: config.name,
    key,
    answer,
    replayed: config.duplicateAnswer !== 'strict-409',
    previousStatus: old.answer.status,
    hits,
    ageMs: now - old.receivedAt,
    ttlSeconds: config.ttlSeconds,
    resent: resentAt !== undefined,
    ...(breaker === undefined ? {} : { breaker }),
  };
}

function keptHeaders(
  headers: Readonly<Record<string, string | undefined>>,
  keep: readonly string[],
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of keep) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
