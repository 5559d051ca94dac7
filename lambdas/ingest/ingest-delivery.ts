/**
 * The ingest use case: verify, derive the key, claim it with one conditional write,
 * queue new work, and answer. It knows nothing of API Gateway, middy or the SDK.
 *
 * Two writes frame the answer (protocol v3):
 *  - on routes whose scheme signs no timestamp, a new generation is remembered
 *    (store/replay-memory.ts) before anything can run its work, and a body remembered by an
 *    earlier, expired generation is a replayed capture: answered as a duplicate, no effect;
 *  - the last write before an answer below 500, when none stands yet, is markAnswered: the
 *    circuit breaker counts only the deliveries that arrive after it, so a claim whose function
 *    then died, timed out or failed never makes its sender's retries count as repeats.
 */
import { entityHash } from '../domain/entity-order.ts';
import type { EntityOrder } from '../ports/entity-order.ts';
import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';
import { RECORD_STATUS, acceptedAnswer, deliveryId, workMessageOf } from '../domain/event-record.ts';
import {
  DependencyError,
  KeyReusedError,
  MalformedBodyError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnknownRouteError,
  UnqueueableBodyError,
} from '../domain/errors.ts';
import { unqueueableReason } from '../domain/queue-limits.ts';
import { bodyObjectName } from '../domain/body-object.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import { fingerprint } from '../domain/fingerprint.ts';
import { InvalidSigningSecretError } from '../domain/signatures/signing-secret-error.ts';
import { validateKey } from '../domain/idempotency-key.ts';
import type { ClaimResult, IngestEventStore } from '../ports/event-store.ts';
import type { SecretSource } from '../ports/secret-source.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { PreparedRoute } from './prepared-route.ts';
import { crossesThreshold, tripBreaker } from './circuit-breaker.ts';
import { MARK_ANSWERED_MAX_MS, MARK_ANSWERED_RESERVE_MS } from '../config/route-config.ts';
import { ANSWER_MARGIN_MS } from './answer-margin.ts';
import type { BreakerDeps, BreakerResult } from './circuit-breaker.ts';

export { ANSWER_MARGIN_MS, answerMarginMsFor } from './answer-margin.ts';

/** A delivery as the edge received it. Header names are lowercase. */
export interface IncomingDelivery {
  readonly method: string;
  readonly routeName: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: Buffer;
  /** How the body is kept: text as received, or base64 when API Gateway delivered binary. */
  readonly bodyEncoding: 'utf8' | 'base64';
  /** The invocation's time left, in ms (Lambda's context.getRemainingTimeInMillis). @default - unbounded */
  readonly timeLeftMs?: () => number;
}

export interface IngestDeps {
  readonly routes: ReadonlyMap<string, PreparedRoute>;
  readonly store: IngestEventStore;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  /**
   * The bucket of large bodies (the S3 claim check, domain/body-object.ts). @default - none: a
   * body above its route's claimCheckAboveBytes, or one SQS cannot carry, is refused
   */
  readonly bodies?: BodyObjects;
  /**
   * The lines of routes ordered per entity (`orderBy`): a new record takes its place before its
   * message goes out and its 202. @default - none: no places are taken here, and the executor
   * places each record when it first takes it
   */
  readonly order?: EntityOrder;
  readonly now: () => number;
  /**
   * A duplicate that finds the record RECEIVED this long after its last message re-sends
   * it: the first send may have been lost with a crashed function. It must be longer than
   * the queue's visibility timeout, the longest a live message of a RECEIVED record hides.
   * @default 60_000
   */
  readonly resendAfterMs?: number;
  /** The circuit breaker; without it, no route is ever paused. */
  readonly breaker?: BreakerDeps;
  /**
   * How long after the mark a copy must arrive to count as a repeat (ANSWER_MARGIN_MS). Only
   * the local stack, whose functions share one process and one clock, sets it lower.
   * @default ANSWER_MARGIN_MS
   */
  readonly answerMarginMs?: number;
}

/** What happened, for the answer, the logs and the metrics. */
export type IngestOutcome =
  | {
      readonly kind: 'accepted';
      readonly route: string;
      readonly key: string;
      readonly answer: StoredAnswer;
      /** The claim committed, lost its answer and was retried by the SDK: still this delivery's own creation. */
      readonly retriedClaim?: boolean;
      /**
       * The breaker's bookkeeping failed (markAnswered, or excuseRacingCopy): the answer stands, but
       * the breaker starts counting one copy later (or counts one racing copy).
       */
      readonly markFailed?: boolean;
      /**
       * Its place in its entity's line could not be taken (DynamoDB failed): the work is accepted
       * all the same, and takes its place when a worker first takes it.
       */
      readonly placeFailed?: boolean;
    }
  /** Slack's url_verification: answered with its challenge, nothing stored or queued. */
  | { readonly kind: 'handshake'; readonly route: string; readonly challenge: string }
  | {
      readonly kind: 'duplicate';
      readonly route: string;
      readonly key: string;
      readonly answer: StoredAnswer;
      /**
       * How the sender is answered: `replay` the stored 2xx (with Idempotent-Replayed), `refuse`
       * with 409 on a strict route, or `accept` when our earlier answer was a 5xx: the sender has
       * no acceptance yet, so this copy gets the first one, a plain 202, on any route.
       */
      readonly answerAs: 'replay' | 'refuse' | 'accept';
      /** The status the previous answer had: 2xx means the ack was lost, 5xx our failure. */
      readonly previousStatus: number;
      readonly hits: number;
      /** Deliveries of the key that came after we had answered 2xx (lost acknowledgements, replays). */
      readonly repeats: number | undefined;
      readonly ageMs: number;
      readonly ttlSeconds: number;
      readonly resent: boolean;
      /** Set when this delivery tripped the circuit breaker. */
      readonly breaker?: BreakerResult;
      /**
       * A capture replayed after its record expired, on a route that signs no timestamp: the
       * replay memory remembered the body (store/replay-memory.ts). Nothing ran; ageMs is the
       * age of the first acceptance.
       */
      readonly replayAfterExpiry?: boolean;
      /** As on 'accepted'. */
      readonly markFailed?: boolean;
    };

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
  const bodyFingerprint = fingerprint(delivery.rawBody);
  if (config.signature.scheme === 'slack') {
    const challenge = slackChallengeOf(json());
    // Slack's signed url_verification carries no event_id: it only asks us to echo the challenge.
    if (challenge !== undefined) return { kind: 'handshake', route: config.name, challenge };
  }
  const key = validateKey(route.keySource({ headers: delivery.headers, json, fingerprint: () => bodyFingerprint }));
  // A route ordered per entity: a body without its entity is refused before anything is written.
  const entity = route.entitySource === undefined ? undefined : entityHash(config.name, route.entitySource(json()));
  const id = deliveryId(config.name, key);
  const accepted = acceptedAnswer(config.name, key);

  // The payload travels in the work message, not in the record the claim writes: no write on
  // the way to completion carries it (see domain/event-record.ts for where it is kept).
  let payload: Payload = {
    body: delivery.bodyEncoding === 'base64' ? delivery.rawBody.toString('base64') : delivery.rawBody.toString('utf8'),
    bodyEncoding: delivery.bodyEncoding,
    headers: keptHeaders(delivery.headers, config.keepHeaders),
  };
  const record: EventRecord = {
    route: config.name,
    key,
    status: RECORD_STATUS.received,
    fingerprint: bodyFingerprint,
    bodyBytes: delivery.rawBody.length,
    receivedAt: now,
    expiresAt: Math.floor(now / 1000) + config.ttlSeconds,
    answer: accepted,
    hits: 1,
    attempts: 0,
    runs: 0,
    redrives: 0,
    lastEnqueuedAt: now,
  };

  // A body above the route's threshold, or one SQS cannot carry, goes to the bucket before the
  // claim (the S3 claim check): the claim never points to an object that is not there. Every copy
  // names the same object, and the write is conditional, so a retry neither duplicates nor
  // overwrites it. A body that cannot be stored is our failure, a 503 the sender's retry heals.
  let unqueueable = unqueueableReason(JSON.stringify(workMessageOf(record, payload)));
  let bodyWrittenAtMs: number | undefined;
  if (deps.bodies !== undefined && (delivery.rawBody.length > config.claimCheckAboveBytes || unqueueable !== undefined)) {
    const bodies = deps.bodies;
    const stored = await dependency('S3', () => bodies.store(bodyObjectName(config.name, key, bodyFingerprint), delivery.rawBody));
    if (stored.created) bodyWrittenAtMs = now;
    payload = { ...payload, body: '', bodyObject: stored.pointer };
    unqueueable = unqueueableReason(JSON.stringify(workMessageOf(record, payload)));
  } else if (deps.bodies === undefined && delivery.rawBody.length > config.claimCheckAboveBytes) {
    // No bucket in this receiver: a large body has nowhere to go.
    throw new PayloadTooLargeError(delivery.rawBody.length, config.claimCheckAboveBytes);
  }
  // Refuse what SQS cannot carry before anything is written: a 503 on every retry would never heal.
  if (unqueueable !== undefined) throw new UnqueueableBodyError(unqueueable);

  const claim: ClaimResult = await dependency('DynamoDB', () => deps.store.claimKey(record, now));
  if (claim.kind === 'created') {
    // Checked before the send: no work of this generation may run if an earlier one's ran.
    if (route.replayMemory) {
      const takenAt = await replayedCapture(deps, record);
      if (takenAt !== undefined) return replayAfterExpiry(config, key, accepted, now, takenAt);
    }
    // An object this delivery did not write (a key re-sent after its record expired, or a retry
    // of a claim that died before it) may be old: the send checks it (fresh-body-work-queue.ts).
    await sendOrRecordFailure(deps, record, payload, false, bodyWrittenAtMs);
    // Its place in its entity's line after its message and before its 202: no place without a
    // message (architecture.md#a-place-follows-its-message).
    let placeFailed = false;
    if (entity !== undefined && deps.order !== undefined) {
      const order = deps.order;
      placeFailed = await order.place({ route: config.name, entity, key, receivedAt: now }, now, record.expiresAt).then(
        () => false,
        () => true,
      );
    }
    const marked = await markAnswered(deps, record, delivery.timeLeftMs);
    return {
      kind: 'accepted',
      route: config.name,
      key,
      answer: accepted,
      ...(claim.retried === true ? { retriedClaim: true } : {}),
      ...(marked ? {} : { markFailed: true }),
      ...(placeFailed ? { placeFailed: true } : {}),
    };
  }

  const old = claim.record;
  if (old.fingerprint !== record.fingerprint) throw new KeyReusedError(id);
  if (old.status === RECORD_STATUS.received && old.runs === 0 && old.body === undefined) {
    // No worker has taken the record, and the table does not keep its payload: the first
    // delivery's function may have died between its claim and its send. Keep the payload
    // before this copy is answered 2xx, so acknowledged work can always be sent again from
    // the table. The same fingerprint means the same bytes. (Copies racing the first one's
    // send pay this second request; a sender's retry after our answer finds the work taken.)
    // On a replay-memory route the memory is read first: the first delivery may have died
    // before it did, and a kept payload is work the reconciler may run.
    if (route.replayMemory) {
      const takenAt = await replayedCapture(deps, old);
      if (takenAt !== undefined) return replayAfterExpiry(config, key, accepted, now, takenAt);
    }
    await dependency('DynamoDB', () => deps.store.keepPayload(config.name, key, old.receivedAt, payload));
  }
  if (entity !== undefined && deps.order !== undefined && old.runs === 0 && (old.status === RECORD_STATUS.received || old.status === RECORD_STATUS.parked)) {
    // Never run: the first copy's place may not be taken yet either, also when a paused route's
    // worker parked its message (a park takes no place). This copy's 202 must not come before it,
    // and the payload is kept first, so the place never holds work nobody can send.
    const order = deps.order;
    await dependency('DynamoDB', () => order.placeIfAbsent({ route: config.name, entity, key, receivedAt: old.receivedAt }, now, old.expiresAt));
  }

  // A 5xx we gave before means our own failure, not a real answer: never replay it. Only a
  // delivery that arrived after an answer below 500 was given is a repeat the circuit breaker
  // counts. Claiming after the mark (claim.answered) does not show that: a copy that arrived
  // before the answer may claim after it, behind a cold start, a Secrets Manager fetch or the
  // SDK's backoff. Only the clocks can order an arrival against an answer given on another
  // machine: this copy's arrival (`now`, read as the handler started) must be more than
  // ANSWER_MARGIN_MS after the mark (`answeredAt`, the marking function's clock). Copies that raced the
  // first answer, and retries of a claim whose function died or failed before answering, are
  // not repeats; nor is a sender's retry within ANSWER_MARGIN_MS of our answer (a missed count,
  // never a false one: the breaker pauses payments, so it errs towards not tripping).
  // The claim counted this delivery's hit; the counts follow from the record as it stood before
  // it. Not so for a claim the SDK re-sent after an uncertain answer (a 5xx, a timeout): `ADD
  // hits` is no idempotent write, and such an attempt may have committed and lost its answer, so
  // the record returned may count this delivery already, up to `attempts` times in all.
  // Such a delivery is never a repeat, and all its attempts' hits are excused.
  const answeredFailure = old.answer.status >= 500;
  const hits = old.hits + 1;
  const attempts = claim.attempts ?? 1;
  const afterAnswer = claim.answered && attempts === 1 && now > (claim.answeredAt ?? Number.POSITIVE_INFINITY) + (deps.answerMarginMs ?? ANSWER_MARGIN_MS);
  const repeats = afterAnswer ? (old.repeats ?? 0) + 1 : undefined;
  // Claimed after the mark, but may have arrived before the answer: its hit is taken out of the count.
  let counted = true;
  if (claim.answered && !afterAnswer && claim.answeredAt !== undefined) {
    counted = await bookkeeping(() => deps.store.excuseRacingCopy(config.name, key, old.receivedAt, claim.answeredAt as number, attempts));
  }
  const resendAfterMs = deps.resendAfterMs ?? 60_000;
  let resent = false;
  if (mayHaveLostItsMessage(old, now, resendAfterMs)) {
    // Of all the duplicates that see the same lost message, one wins this write and sends.
    resent = await dependency('DynamoDB', () =>
      deps.store.claimResend(config.name, key, {
        receivedAt: old.receivedAt,
        nowMs: now,
        sentBeforeMs: now - resendAfterMs,
        answer: accepted,
        answeredFailure,
      }),
    );
    // The same fingerprint means the same bytes: this copy's payload is the record's.
    if (resent) await sendOrRecordFailure(deps, old, payload, claim.answered);
  }
  const answer = answeredFailure ? accepted : old.answer;
  let breaker: BreakerResult | undefined;
  if (deps.breaker !== undefined && repeats !== undefined && crossesThreshold(config, repeats, old.breakerTrippedAt)) {
    const trip = {
      route: config,
      key,
      repeats,
      nowMs: now,
      markTripped: () => deps.store.markBreakerTripped(config.name, key, old.receivedAt, now),
    };
    breaker = await dependency('circuit breaker', () => tripBreaker(deps.breaker as BreakerDeps, trip));
  }
  // This copy is about to be answered below 500 and none such stood when it came: the count starts here.
  const marked = claim.answered ? counted : await markAnswered(deps, old, delivery.timeLeftMs);
  return {
    kind: 'duplicate',
    route: config.name,
    key,
    answer,
    answerAs: answeredFailure ? 'accept' : config.duplicateAnswer === 'strict-409' ? 'refuse' : 'replay',
    previousStatus: old.answer.status,
    hits,
    repeats,
    ageMs: now - old.receivedAt,
    ttlSeconds: config.ttlSeconds,
    resent,
    ...(breaker === undefined ? {} : { breaker }),
    ...(marked ? {} : { markFailed: true }),
  };
}

/**
 * Reads the replay memory for the record's body (store/replay-memory.ts). Returns the
 * receivedAt of an earlier generation whose work ran when there is one: then this generation is
 * a capture replayed after its record expired, and is taken back before anything of it runs.
 * Undefined when no earlier generation's work ran: the body is this generation's own work.
 */
async function replayedCapture(deps: IngestDeps, record: EventRecord): Promise<number | undefined> {
  const takenAt = await dependency('DynamoDB', () => deps.store.takenBefore(record.route, record.fingerprint, record.receivedAt));
  if (takenAt === undefined) return undefined;
  await dependency('DynamoDB', () => deps.store.forgetReplay(record.route, record.key, record.receivedAt));
  return takenAt;
}

/**
 * The answer to a replayed capture: a duplicate's, with no effect. The breaker does not count
 * it: the generation it repeats expired, and the one the replay made was taken back.
 */
function replayAfterExpiry(config: PreparedRoute['config'], key: string, accepted: StoredAnswer, now: number, takenAt: number): IngestOutcome {
  return {
    kind: 'duplicate',
    route: config.name,
    key,
    answer: accepted,
    answerAs: config.duplicateAnswer === 'strict-409' ? 'refuse' : 'replay',
    previousStatus: accepted.status,
    hits: 1,
    repeats: undefined,
    ageMs: now - takenAt,
    ttlSeconds: config.ttlSeconds,
    resent: false,
    replayAfterExpiry: true,
  };
}

/**
 * markAnswered, the last write before an answer below 500 (record-transitions.ts), stamped with
 * the clock as the call is made: the answer follows at once. ANSWER_MARGIN_MS counts on the
 * answer leaving within MARK_ANSWERED_MAX_MS of that stamp, so the write's time is counted from
 * the stamp, not from the request: a function paused between the two (a GC pause, a starved CPU,
 * the event loop busy with another promise) has that much less, or none, and then goes out
 * unmarked. Seed 860: a mark stamped 1.03 s before its request went out counted three copies that
 * raced the answer as repeats, and the third tripped the breaker. The time since the stamp is
 * read on the invocation's own count (getRemainingTimeInMillis, monotonic), the wall clock only
 * where there is none. Nor is the mark made with less than MARK_ANSWERED_RESERVE_MS of the
 * invocation left after it: the answer goes out unmarked (a missed count), never marked and
 * then cut off by the timeout (a false one).
 */
function markAnswered(deps: IngestDeps, record: EventRecord, timeLeftMs: (() => number) | undefined): Promise<boolean> {
  const markAtMs = deps.now();
  const sinceStamp = elapsedSince(timeLeftMs === undefined ? () => deps.now() : () => -timeLeftMs());
  const budgetMs = (): number => Math.min(MARK_ANSWERED_MAX_MS - sinceStamp(), timeLeftMs === undefined ? Number.POSITIVE_INFINITY : timeLeftMs() - MARK_ANSWERED_RESERVE_MS);
  return bookkeeping(() => deps.store.markAnswered(record.route, record.key, record.receivedAt, markAtMs, budgetMs));
}

/** The ms a clock has run since this call, read each time the returned function is. */
function elapsedSince(clock: () => number): () => number {
  const start = clock();
  return () => clock() - start;
}

/**
 * The breaker's bookkeeping (markAnswered, excuseRacingCopy). Its failure does not turn the
 * answer into a 5xx: the work is on its way, and a lost mark only means the breaker starts
 * counting one copy later (a lost excuse, that it counts one racing copy). The outcome says
 * so (markFailed), and the handler logs it.
 */
async function bookkeeping(write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a duplicate should try to re-send (the write in claimResend decides): the record
 * waits to run but its last message is older than the window, or our first send failed.
 */
function mayHaveLostItsMessage(record: EventRecord, nowMs: number, windowMs: number): boolean {
  const before = nowMs - windowMs;
  const lastSent = record.lastEnqueuedAt ?? record.receivedAt;
  if (record.status === RECORD_STATUS.received) return record.answer.status >= 500 || lastSent < before;
  return record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) < before && lastSent < before;
}

/**
 * Sends the record's message. On failure the record stays (never delete on an error path),
 * keeps a 5xx answer, so the sender's retry re-sends at once, and keeps the payload, so the
 * reconciler re-sends RECEIVED work that nobody retries.
 */
async function sendOrRecordFailure(
  deps: IngestDeps,
  record: EventRecord,
  payload: Payload,
  counting: boolean,
  bodyWrittenAtMs?: number,
): Promise<void> {
  try {
    await deps.queue.send(workMessageOf(record, payload), bodyWrittenAtMs === undefined ? undefined : { bodyWrittenAtMs });
  } catch (sendError) {
    const failure = new DependencyError('SQS', { cause: sendError });
    await dependency('DynamoDB', () =>
      deps.store.recordEnqueueFailure(
        record.route,
        record.key,
        record.receivedAt,
        { status: failure.status, body: failure.message },
        payload,
        counting,
      ),
    ).catch((recordError: unknown) => {
      throw new DependencyError('SQS', { cause: new AggregateError([sendError, recordError]) });
    });
    throw failure;
  }
}

/** The challenge of a Slack `url_verification` body, or undefined for any other body. */
function slackChallengeOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const { type, challenge } = body as { type?: unknown; challenge?: unknown };
  return type === 'url_verification' && typeof challenge === 'string' && challenge.length > 0 ? challenge : undefined;
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
