/**
 * The executor use case: one SQS message in, exactly one effect out. Claim the record
 * with a lease, run the route's action with the idempotency key, then complete, release
 * or fail it, each write fenced by the lease token, and log the attempt.
 *
 * Protocol v3 (AWS as it really behaves):
 *  - every write recognises its own success (the write nonce, store/conditional-write.ts);
 *  - a message is handed back, never deleted, wherever this worker cannot be sure another
 *    message carries the work (a fenced-out write): a surplus message is harmless, a missing one
 *    is not;
 *  - the body runs only when its SHA-256 is the record's fingerprint;
 *  - the action's deadline counts from the instant before the lease write was sent, the lease's
 *    own start, so the SDK's retries of that write eat into the action's time, not past the lease;
 *  - a dead-letter copy is taken for a person's redrive by its SQS stamp (record-transitions.ts,
 *    redrive), not by a mark a lost receive could skip.
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { DEAD_LETTER_SEND_SECONDS, SQS_MAX_DELAY_SECONDS } from '../config/route-config.ts';
import { recordLease } from '../config/route-lease.ts';
import type { LeaseTimes } from '../config/route-lease.ts';
import { PermanentActionError } from '../actions/action.ts';
import type { ActionResult } from '../actions/action.ts';
import type { ActionRegistry } from '../actions/action-registry.ts';
import { RECORD_STATUS, deliveryId, payloadOfMessage } from '../domain/event-record.ts';
import type { Payload, WorkMessage } from '../domain/event-record.ts';
import { fingerprint } from '../domain/fingerprint.ts';
import { needsReplayMemory } from '../domain/idempotency-key.ts';
import { operationFingerprint } from '../domain/operation-fingerprint.ts';
import { DEAD_LETTER_REASON_MAX_CHARS, LAST_ERROR_MAX_CHARS, cut } from '../domain/queue-limits.ts';
import { bodyObjectRenewAfterSeconds, longestTtlSeconds, renewalDue } from '../domain/body-object.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { EntityOrder, LineRef } from '../ports/entity-order.ts';
import { MissingEntityError } from '../domain/errors.ts';
import { entityHash, entitySourceFor } from '../domain/entity-order.ts';
import type { EntitySource } from '../domain/entity-order.ts';
import type { ExecutionStore, LeaseOutcome } from '../ports/execution-store.ts';
import { RATE_START_TOLERANCE_MS, RATE_WAIT_MAX_MS } from '../ports/rate-gate.ts';
import type { RateGate, SlotWindow } from '../ports/rate-gate.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import { TAKEOVER_MARGIN_MS, keepUntilSeconds } from '../store/record-transitions.ts';
import { StartLead } from './start-lead.ts';
import { wakeWaiter } from './wake-waiter.ts';

/** What a record that stands in the way of a write before the lease can be. */
type BlockedOutcome = Exclude<LeaseOutcome, { kind: 'leased' } | { kind: 'exhausted' }>;

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
  /** Time left in this invocation; an action never runs past it. */
  readonly remainingMs?: () => number;
  readonly requestId?: string;
  /**
   * The gate of the routes with a rate limit (DynamoDbRateGate): a run over the limit is
   * deferred, not run. @default - no gate: rate limits are not enforced (tests of other paths)
   */
  readonly rateGate?: RateGate;
  /**
   * Learns how far ahead a rate-limited run asks for its start slot (start-lead.ts): one per
   * executor instance. @default - a fresh one per message
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

export const EXECUTION_OUTCOME = {
  completed: 'completed',
  duplicate: 'duplicate',
  locked: 'locked',
  retry: 'retryable-error',
  permanent: 'permanent-error',
  exhausted: 'retries-exhausted',
  fencedOut: 'fenced-out',
  /** FAILED is terminal until a person redrives it: a stray message is dropped. */
  failedAlready: 'failed-already',
  expired: 'record-expired',
  unreadable: 'unreadable-message',
  /** The body is not the one the record was accepted with: nothing runs, a copy goes to people. */
  forged: 'forged-body',
  /** The message points to a body object that is not there: nothing runs, a copy goes to people. */
  bodyMissing: 'body-missing',
  parked: 'parked',
  /** Over the route's rate limit: a delayed wake-up message was sent, the record waits RECEIVED. */
  rateLimited: 'rate-limited',
  /** Earlier work of its entity is not done: parked in the line, woken at its turn. */
  waitingTurn: 'waiting-turn',
  toDeadLetterQueue: 'to-dead-letter-queue',
} as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOME)[keyof typeof EXECUTION_OUTCOME];

export interface ExecutionReport {
  readonly outcome: ExecutionOutcome;
  /** False: hand the message back to SQS (a batch item failure). */
  readonly ack: boolean;
  /**
   * With ack false: hide the message this many seconds instead of the queue's visibility
   * timeout (0 for a dead-letter copy on its way to the DLQ; the lease's remaining time
   * for a message that found a live lease).
   */
  readonly visibilitySeconds?: number;
  readonly route?: string;
  readonly key?: string;
  readonly attempt?: number;
  /** Set when the message went to the DLQ. */
  readonly deadLetterReason?: string;
  readonly error?: string;
  /** How long the action ran, as a share of its record's lease (0..1+). */
  readonly leaseShare?: number;
}

/** A dead-letter copy's send did not go out within DEAD_LETTER_SEND_SECONDS of the write that won it: the reconciler re-sends it. */
export class DeadLetterSendLateError extends Error {
  constructor(route: string, key: string) {
    super(`the dead-letter copy of ${deliveryId(route, key)} was not sent within ${DEAD_LETTER_SEND_SECONDS} s of its failure; the reconciler re-sends it`);
    this.name = 'DeadLetterSendLateError';
  }
}

const RESULT_LIMIT = 1024;
const COMPLETION_MARGIN_MS = 2_000;
/** Up to this many seconds are added to a locked hand-back, so waiting copies do not all come back at once. */
const LOCKED_JITTER_SECONDS = 2;
/** The reason of a message whose body does not hash to its record's fingerprint. */
const FORGED_REASON = "the body does not match the delivery's fingerprint (SHA-256): it was not sent by retryproof";

/** The reason of a message whose body object is gone. */
const BODY_MISSING_REASON = "the delivery's body object is not in the bucket (expired, or never stored): nothing ran";

/** Reads a work message; undefined when it is not one. */
export function parseWorkMessage(body: string): WorkMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const m = parsed as Partial<WorkMessage>;
  const ok =
    typeof m.route === 'string' &&
    typeof m.key === 'string' &&
    typeof m.fingerprint === 'string' &&
    typeof m.receivedAt === 'number' &&
    typeof m.body === 'string';
  return ok ? (m as WorkMessage) : undefined;
}

/** The action's body: the message carries the payload (the record keeps it only on some paths). */
function parseBody(payload: Payload): unknown {
  if (payload.bodyEncoding === 'base64') return payload.body;
  try {
    return JSON.parse(payload.body) as unknown;
  } catch {
    return payload.body;
  }
}

function describeError(error: unknown): { class: string; message: string } {
  if (error instanceof Error) return { class: error.name, message: error.message.slice(0, LAST_ERROR_MAX_CHARS) };
  return { class: 'Unknown', message: String(error).slice(0, LAST_ERROR_MAX_CHARS) };
}

/** The last error as the record and a dead-letter copy keep it: at most LAST_ERROR_MAX_CHARS (queue-limits.ts). */
function lastErrorOf(described: { class: string; message: string }): string {
  return cut(`${described.class}: ${described.message}`, LAST_ERROR_MAX_CHARS);
}

function resultOf(result: ActionResult): string {
  const text = JSON.stringify(result ?? {});
  return text.length <= RESULT_LIMIT ? text : JSON.stringify({ truncated: true, head: text.slice(0, RESULT_LIMIT - 40) });
}

/** The bytes of an inline payload's body, as the ingest received them. */
function bytesOf(payload: Payload): Buffer {
  return Buffer.from(payload.body, payload.bodyEncoding === 'base64' ? 'base64' : 'utf8');
}

/** SHA-256 of a payload's body, as the ingest fingerprinted the raw bytes it received. */
export function fingerprintOf(payload: Payload): string {
  return fingerprint(bytesOf(payload));
}

/** Handles one message. Never throws for a problem of the message itself; only for our own dependencies. */
export async function executeMessage(deps: ExecutorDeps, message: QueuedMessage): Promise<ExecutionReport> {
  const newId = deps.newId ?? randomUUID;
  const work = parseWorkMessage(message.body);
  if (work === undefined) {
    // Not ours to execute, and no record to name: the queue moves it to the DLQ as it is.
    return { outcome: EXECUTION_OUTCOME.unreadable, ack: false, visibilitySeconds: 0, deadLetterReason: 'unreadable message' };
  }
  const base = { route: work.route, key: work.key };
  // The message is the payload's carrier: the work runs on it, and the paths that may have to
  // send it again from the table keep it on the record. Only a body the record was accepted
  // with (its SHA-256 the record's fingerprint) runs or is kept: every write that could run or
  // keep it checks that in its condition. A large body travels as a pointer (the S3 claim check):
  // it runs on the bytes read back, and the record and every copy keep the pointer (`carried`).
  const carried = payloadOfMessage(work);
  const resolved = await resolveBody(deps, carried);
  const payload = resolved?.payload ?? carried;
  const rawBody = resolved?.bytes ?? bytesOf(carried);
  const bodyFingerprint = fingerprint(rawBody);
  // The executor's own sends (a wake-up, a dead-letter copy) know when the object was last written.
  const sendHint = resolved?.writtenAtMs === undefined ? {} : { bodyWrittenAtMs: resolved.writtenAtMs };
  const route = deps.routes.get(work.route);
  const action = route === undefined ? undefined : deps.actions.get(route.action);
  /**
   * Sends a dead-letter copy with the whole context, and acknowledges this message. A FAILED
   * record's copy (`wonAtMs`: the instant its write set lastEnqueuedAt) is sent within
   * DEAD_LETTER_SEND_SECONDS of it or not at all, so that SQS's stamp on every copy of ours
   * stays within that of the write, and a person's redrive is told apart by its own stamp.
   */
  const toPeople = async (
    reason: string,
    outcome: ExecutionOutcome,
    extra: { attempts?: number; lastError?: string; deadLetterId?: string; attempt?: number; wonAtMs?: number } = {},
  ): Promise<ExecutionReport> => {
    const { attempt, wonAtMs, ...fields } = extra;
    const copy: WorkMessage = { ...work, ...fields, reason: cut(reason, DEAD_LETTER_REASON_MAX_CHARS), deadLetterId: fields.deadLetterId ?? newId() };
    if (wonAtMs === undefined) {
      await deps.workQueue.send(copy, sendHint);
    } else {
      const leftMs = wonAtMs + DEAD_LETTER_SEND_SECONDS * 1000 - deps.now();
      // Too late already (the write itself took that long): the record is FAILED in the retry
      // partition, and the reconciler re-sends its copy.
      if (leftMs <= 0) throw new DeadLetterSendLateError(work.route, work.key);
      await deps.workQueue.send(copy, { signal: AbortSignal.timeout(leftMs), ...sendHint });
    }
    return {
      ...base,
      ...(attempt === undefined ? {} : { attempt }),
      outcome,
      ack: true,
      deadLetterReason: reason,
      ...(fields.lastError === undefined ? {} : { error: fields.lastError }),
    };
  };
  /** Another worker's write won: this message may be the only one left, so it goes back (a surplus message is harmless). */
  const fencedOut = (attempt: number | undefined, error?: string): ExecutionReport => ({
    ...base,
    ...(attempt === undefined ? {} : { attempt }),
    outcome: EXECUTION_OUTCOME.fencedOut,
    ack: false,
    ...(error === undefined ? {} : { error }),
  });
  if (resolved === undefined) {
    // The body object is gone: nothing can run. A dead-letter copy goes on to the DLQ as it is
    // (its last receive marks the record, so the reconciler does not send it again).
    if (work.deadLetterId !== undefined) {
      if (message.receiveCount >= deps.maxReceiveCount) await deps.store.markDeadLettered(work.route, work.key, work.deadLetterId);
      return { ...base, outcome: EXECUTION_OUTCOME.toDeadLetterQueue, ack: false, visibilitySeconds: 0, deadLetterReason: BODY_MISSING_REASON };
    }
    return bodyMissing(deps, work, carried, newId, toPeople);
  }
  if (work.deadLetterId !== undefined) {
    const copy = await deadLetterCopy(deps, work, message, bodyFingerprint, route === undefined || action === undefined);
    if (copy !== undefined) return copy;
    // Otherwise an ordinary wake-up call for the record (a redrive won, or an old copy).
  }
  if (route === undefined || action === undefined) {
    const reason = route === undefined ? `route "${work.route}" is not configured` : `action "${route.action}" is not registered`;
    return toPeople(reason, EXECUTION_OUTCOME.unreadable);
  }
  const ref = { route: work.route, key: work.key, receivedAt: work.receivedAt };
  const lockedUntil = (leaseUntil: number | undefined): ExecutionReport => {
    // Locked is not a failure: come back just when the lease ends (for us: twice the clock
    // bound after its end), and take over if its worker died.
    const waitMs = Math.max(0, (leaseUntil ?? 0) + (deps.takeoverMarginMs ?? TAKEOVER_MARGIN_MS) - deps.now());
    const jitter = (deps.random ?? Math.random)() * LOCKED_JITTER_SECONDS;
    return { ...base, outcome: EXECUTION_OUTCOME.locked, ack: false, visibilitySeconds: Math.max(1, Math.ceil(waitMs / 1000 + jitter)) };
  };

  /** This record's place in its entity's line, once it is its turn (a route with `orderBy`). */
  let line: { readonly ref: LineRef; readonly place: number } | undefined;
  /**
   * After this record's completion: the line moves on, and the next record, if it waits parked,
   * is sent a wake-up. Also for a copy that finds the record completed at the cursor: its worker
   * died between the two writes. A failed write or send throws: the message goes back, and its
   * next receive does this again.
   */
  const moveLine = async (): Promise<void> => {
    if (line === undefined || deps.order === undefined) return;
    const waiter = await deps.order.advance(line.ref, line.place, deps.now(), route.ttlSeconds);
    if (waiter !== undefined) await wakeWaiter(deps, work.route, waiter);
  };

  /** The record stood in the way of a write before the lease: done, failed, leased by another, gone, or not this body's. */
  const inTheWay = async (blocked: BlockedOutcome): Promise<ExecutionReport> => {
    switch (blocked.kind) {
      case 'completed':
        await moveLine();
        return { ...base, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
      case 'failed':
        return { ...base, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
      case 'locked':
        return lockedUntil(blocked.record.leaseUntil);
      case 'missing':
        return toPeople('record expired before execution', EXECUTION_OUTCOME.expired);
      case 'forged':
        // Nothing runs and nothing is kept; the genuine work keeps its own message.
        return toPeople(FORGED_REASON, EXECUTION_OUTCOME.forged);
    }
  };

  if ((await deps.isPaused?.(work.route)) === true) {
    // The route is paused: keep the work, run nothing. Resuming the route re-enqueues it. On an
    // ordered route its place lives as long as the parked record (architecture.md#a-pause-keeps-the-line).
    const nowMs = deps.now();
    const lineEntity = route.orderBy === undefined || deps.order === undefined ? undefined : entityOf(route.name, route.orderBy, rawBody);
    const parked = await deps.store.park({ ...ref, nowMs, ttlSeconds: route.ttlSeconds, payload: carried, fingerprint: bodyFingerprint, ...(lineEntity === undefined ? {} : { lineEntity }) });
    if (parked.kind === 'parked' || parked.kind === 'already-parked') {
      if (lineEntity !== undefined) await deps.order?.keep({ ...ref, entity: lineEntity }, nowMs, Math.floor(nowMs / 1000) + route.ttlSeconds);
      return { ...base, outcome: EXECUTION_OUTCOME.parked, ack: true };
    }
    if (parked.kind !== 'route-active') return inTheWay(parked);
  }

  if (route.orderBy !== undefined && deps.order !== undefined) {
    const entity = entityOf(route.name, route.orderBy, rawBody);
    if (entity !== undefined) {
      const order = deps.order;
      const ref: LineRef = { ...refOf(work), entity };
      // A place lives as long as its record may run: a whole TTL from this look at the line.
      const placeExpiresAt = Math.floor(deps.now() / 1000) + route.ttlSeconds;
      let turn = await order.turn(ref, deps.now(), placeExpiresAt);
      if (turn.kind === 'wait') {
        // Earlier work of the entity is not done: the record waits parked in the line (kept a
        // whole TTL, as paused work is), its place marked waiting, and this message is
        // acknowledged. The worker that completes the head wakes it; the park and the mark come
        // before the second look at the line, and that worker's cursor move before its look at
        // the mark, so one of the two sees the other (each one item, linearizable): no wait is
        // forgotten. Should both see it, the record gets two wake-ups, and the lease takes one.
        const nowMs = deps.now();
        const parked = await deps.store.parkInLine({ ...ref, nowMs, ttlSeconds: route.ttlSeconds, payload: carried, fingerprint: bodyFingerprint, place: turn.place });
        if (parked.kind === 'route-active') return { ...base, outcome: EXECUTION_OUTCOME.locked, ack: false, visibilitySeconds: 1 };
        if (parked.kind !== 'parked' && parked.kind !== 'already-parked') return inTheWay(parked);
        await order.markWaiting(ref, turn.place, Math.floor(nowMs / 1000) + route.ttlSeconds);
        turn = await order.turn(ref, deps.now(), placeExpiresAt);
        // Still waiting: parked, and this message is done with. Its turn came meanwhile: this
        // message runs it now (the lease takes a PARKED record).
        if (turn.kind === 'wait') return { ...base, outcome: EXECUTION_OUTCOME.waitingTurn, ack: true };
      }
      if (turn.kind === 'turn') line = { ref, place: turn.place };
      else if (turn.waiter !== undefined) await wakeWaiter(deps, work.route, turn.waiter);
    }
  }

  // This record's own lease: on a route with a time per destination, the one its body picks.
  // The body is the record's (the lease write refuses any other fingerprint), so no message can
  // choose a lease its record would not get.
  const own = recordLease(route, payload.body, payload.bodyEncoding);

  /** A rate-limited run's start slot, when the gate gave one: the action starts there or not at all. */
  let slot: { readonly startAtMs: number; readonly askedAtMs: number; readonly lead: StartLead } | undefined;
  if (route.rateLimit !== undefined && deps.rateGate !== undefined) {
    const lead = deps.startLead ?? new StartLead();
    const askedAtMs = deps.now();
    const decision = await deps.rateGate.admit(work.route, route.rateLimit, askedAtMs, slotWindow(own, lead.ms()));
    if (decision.admitted) slot = { startAtMs: decision.startAtMs, askedAtMs, lead };
    else {
      // Over the limit: the work waits in the queue, not in this invocation and not on a
      // hand-back. A hand-back would count toward maxReceiveCount (every receive does: Lambda
      // Developer Guide, "Using Lambda with Amazon SQS") and dead-letter work that only waited.
      // A fresh wake-up message with a delay starts at receive 0; the record first notes when
      // it comes back, so no resend takes the waiting work for lost.
      const nowMs = deps.now();
      const delaySeconds = Math.min(SQS_MAX_DELAY_SECONDS, Math.max(1, Math.ceil((decision.retryAtMs - nowMs) / 1000)));
      const deferred = await deps.store.deferForRate({ ...ref, nowMs, untilMs: nowMs + delaySeconds * 1000, fingerprint: bodyFingerprint });
      if (deferred.kind !== 'deferred') return inTheWay(deferred);
      // The plain wake-up of the record: a dead-letter copy's context stays on the record.
      const { deadLetterId: _id, reason: _reason, attempts: _attempts, lastError: _lastError, ...wakeUp } = work;
      // A failed send throws: our dependency failed, and this message goes back (backed off)
      // and is still the record's wake-up call. Only a sent one lets it be acknowledged.
      await deps.workQueue.send(wakeUp, { delaySeconds, ...sendHint });
      return { ...base, outcome: EXECUTION_OUTCOME.rateLimited, ack: true };
    }
  }

  // The lease's own start: the instant before its write is sent. The action's deadline counts
  // from here, so the time the SDK spends retrying the write is taken from the action, never
  // added past the lease (leaseUntil = this + the lease).
  const startedAt = deps.now();
  const token = newId();
  const lease = await deps.store.acquireLease({
    ...ref,
    nowMs: startedAt,
    leaseMs: own.leaseSeconds * 1000,
    token,
    maxAttempts: route.maxAttempts,
    fingerprint: bodyFingerprint,
    // Not the first receive: the worker of an earlier one may have died, so keep the payload
    // where the reconciler finds it, should this message too be lost (the queue's backstop).
    ...(message.receiveCount > 1 ? { payload: carried } : {}),
    ...(line === undefined ? {} : { linePlace: line.place }),
  });
  switch (lease.kind) {
    case 'completed':
    case 'failed':
    case 'locked':
    case 'missing':
    case 'forged':
      return inTheWay(lease);
    case 'exhausted': {
      // The last attempt's worker died without a word (a crash, a timeout): the budget is spent.
      const attempts = lease.record.attempts;
      const lastError = cut(lease.record.lastError ?? 'the worker of the last attempt stopped without an answer', LAST_ERROR_MAX_CHARS);
      const deadLetterId = newId();
      const failedAt = deps.now();
      const owned = await deps.store.failExhausted({
        ...ref,
        nowMs: failedAt,
        maxAttempts: route.maxAttempts,
        error: lastError,
        deadLetterId,
        payload: carried,
        fingerprint: bodyFingerprint,
        // The copy may wait 14 days in the DLQ: the record outlives it.
        keepUntilSeconds: keepUntilSeconds(lease.record.expiresAt, failedAt),
      });
      if (!owned) return fencedOut(undefined);
      return toPeople(`retries exhausted after ${attempts} attempts`, EXECUTION_OUTCOME.exhausted, { attempts, lastError, deadLetterId, wonAtMs: failedAt });
    }
    case 'leased':
      break;
  }

  const record = lease.record;
  // The run number across redrives: what the action and the log see. The budget is `attempts`.
  const attempt = record.runs;
  // The deadline: this record's action deadline from the lease's start (a margin before its lease
  // ends, for the completion write), and never past this invocation's own end.
  const deadlineFrom = startedAt;
  const afterLease = deps.now();
  const invocationEndsAt = afterLease + (deps.remainingMs?.() ?? Number.POSITIVE_INFINITY);
  const deadline = Math.min(deadlineFrom + own.actionDeadlineSeconds * 1000, invocationEndsAt - COMPLETION_MARGIN_MS);
  const log = {
    route: work.route,
    key: work.key,
    receivedAt: record.receivedAt,
    kind: 'execution' as const,
    attempt,
    startedAt,
    operationFingerprint: operationFingerprint(work.route, work.key, route.action, record.fingerprint),
    expiresAt: record.expiresAt,
    ...(record.redrives > 0 ? { detail: { redrive: record.redrives } } : {}),
    ...(deps.requestId === undefined ? {} : { requestId: deps.requestId }),
  };
  const fence = { route: work.route, key: work.key, token };

  let result: ActionResult;
  try {
    // The lease write took the whole deadline (the SDK retried it that long): run nothing.
    if (deadline - afterLease < 1) throw new LeaseTooSlowError(deadline - deadlineFrom, 'the lease write');
    // A scheme that signs no timestamp: the replay memory learns that this body's work runs,
    // before any effect (store/replay-memory.ts). Its failure is a retryable one, with no effect.
    const remembers = needsReplayMemory(route.signature.scheme);
    if (remembers) await deps.store.rememberTaken(work.route, record.fingerprint, record.receivedAt);
    // A rate-limited run starts at its slot, never later than the tolerance after it: else its
    // start could fall within a unit of its limit's others (ports/rate-gate.ts).
    if (slot !== undefined) await startAtSlot(slot, deps);
    // Its answer can be late too (the SDK sets no timeout): the action is never called past its
    // deadline, when another worker may hold the lease (simulation seed 128), and its signal
    // fires at the deadline itself, not that write's time after it.
    const leftMs = deadline - deps.now();
    if (leftMs < 1) throw new LeaseTooSlowError(deadline - deadlineFrom, remembers ? 'the lease and replay-memory writes' : 'the lease write');
    result = await action({
      route: work.route,
      key: work.key,
      idempotencyKey: deliveryId(work.route, work.key),
      body: parseBody(payload),
      rawBody,
      headers: payload.headers,
      attempt,
      deadline,
      signal: AbortSignal.timeout(leftMs),
    });
  } catch (error) {
    if (error instanceof SlotMissedError) {
      // Nothing ran: the lease's attempt goes back, and a wake-up comes back in a moment
      // to ask the gate again. A failed write or send throws: the message goes back, and it is
      // still the record's wake-up call (its lease ends, and the next worker takes it over).
      const nowMs = deps.now();
      const owned = await deps.store.deferLeased({ ...fence, receivedAt: record.receivedAt, nowMs, untilMs: nowMs + SLOT_MISSED_RETRY_SECONDS * 1000 });
      if (!owned) return fencedOut(attempt);
      const { deadLetterId: _id, reason: _reason, attempts: _attempts, lastError: _lastError, ...wakeUp } = work;
      await deps.workQueue.send(wakeUp, { delaySeconds: SLOT_MISSED_RETRY_SECONDS, ...sendHint });
      return { ...base, attempt, outcome: EXECUTION_OUTCOME.rateLimited, ack: true };
    }
    const described = describeError(error);
    const errorText = lastErrorOf(described);
    const permanent = error instanceof PermanentActionError;
    // The budget is the record's: this message's receive count plays no part.
    const exhausted = !permanent && record.attempts >= route.maxAttempts;
    const endedAt = deps.now();
    if (permanent || exhausted) {
      const deadLetterId = newId();
      const owned = await deps.store.fail({
        ...fence,
        receivedAt: record.receivedAt,
        nowMs: endedAt,
        error: errorText,
        deadLetterId,
        payload: carried,
        // The copy may wait 14 days in the DLQ: the record outlives it.
        keepUntilSeconds: keepUntilSeconds(record.expiresAt, endedAt),
      });
      const outcome = !owned ? EXECUTION_OUTCOME.fencedOut : permanent ? EXECUTION_OUTCOME.permanent : EXECUTION_OUTCOME.exhausted;
      await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
      if (!owned) return fencedOut(attempt, errorText);
      // The dead-letter copy carries the whole operation context, enough for an audit without the table.
      const reason = permanent ? 'permanent error' : `retries exhausted after ${record.attempts} attempts`;
      return toPeople(reason, outcome, { attempts: record.attempts, lastError: errorText, deadLetterId, attempt, wonAtMs: endedAt });
    }
    const owned = await deps.store.release({ ...fence, nowMs: endedAt, error: errorText });
    const outcome = owned ? EXECUTION_OUTCOME.retry : EXECUTION_OUTCOME.fencedOut;
    await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
    // Released: this message stays the record's wake-up call, back after the visibility timeout.
    // Fenced out: another worker's write won, and this message may be the only one left for
    // the work (a lost release answer whose retry was refused after another write): it goes
    // back all the same. Either way it is never deleted here.
    return owned ? { ...base, attempt, outcome, ack: false, error: errorText } : fencedOut(attempt, errorText);
  }

  const endedAt = deps.now();
  const completed = await deps.store.complete({
    ...fence,
    nowMs: endedAt,
    result: resultOf(result),
    operationFingerprint: log.operationFingerprint,
    ...(deps.requestId === undefined ? {} : { requestId: deps.requestId }),
  });
  const leaseShare = (endedAt - startedAt) / (own.leaseSeconds * 1000);
  if (completed) {
    await moveLine();
    return { ...base, attempt, outcome: EXECUTION_OUTCOME.completed, ack: true, leaseShare };
  }
  // The completing attempt is logged on the record by the completion itself; a fenced-out one gets a log item.
  await deps.store.appendLog({ ...log, endedAt, outcome: EXECUTION_OUTCOME.fencedOut });
  return { ...fencedOut(attempt), leaseShare };
}

/**
 * A message whose body object is gone can never run, and neither can its record: the record is
 * FAILED (whatever its budget) with the reason, so its line's head is one a person can see, skip
 * or redrive, and its copy reaches the DLQ (architecture.md#a-record-that-cannot-run-fails). Only
 * the record's own object fails it: the object's name ends with the record's fingerprint.
 */
async function bodyMissing(
  deps: ExecutorDeps,
  work: WorkMessage,
  carried: Payload,
  newId: () => string,
  toPeople: (reason: string, outcome: ExecutionOutcome, extra?: { attempts?: number; lastError?: string; deadLetterId?: string; wonAtMs?: number }) => Promise<ExecutionReport>,
): Promise<ExecutionReport> {
  const record = await deps.store.get(work.route, work.key);
  const ours = record !== undefined && record.receivedAt === work.receivedAt && carried.bodyObject?.endsWith(`/${record.fingerprint}`) === true;
  if (ours && record.status === RECORD_STATUS.completed) return { route: work.route, key: work.key, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
  if (ours && record.status === RECORD_STATUS.failed) return { route: work.route, key: work.key, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
  if (ours && deps.routes.has(work.route)) {
    const deadLetterId = newId();
    const failedAt = deps.now();
    const failed = await deps.store.failExhausted({
      route: work.route,
      key: work.key,
      receivedAt: work.receivedAt,
      nowMs: failedAt,
      // Whatever its budget: no attempt can ever run it.
      maxAttempts: 0,
      error: BODY_MISSING_REASON,
      deadLetterId,
      payload: carried,
      fingerprint: record.fingerprint,
      keepUntilSeconds: keepUntilSeconds(record.expiresAt, failedAt),
    });
    if (failed) return toPeople(BODY_MISSING_REASON, EXECUTION_OUTCOME.bodyMissing, { attempts: record.attempts, lastError: BODY_MISSING_REASON, deadLetterId, wonAtMs: failedAt });
  }
  return toPeople(BODY_MISSING_REASON, EXECUTION_OUTCOME.bodyMissing);
}

/** The writes before the action (the lease, the replay memory) ended past its deadline: the action is not run. */
class LeaseTooSlowError extends Error {
  constructor(deadlineMs: number, what: string) {
    super(`${what} took longer than the action's ${Math.max(0, deadlineMs)} ms deadline; not run`);
    this.name = 'LeaseTooSlowError';
  }
}

/** A rate-limited run ready too late for its slot comes back this soon to ask the gate again. */
const SLOT_MISSED_RETRY_SECONDS = 1;

/** The writes before the action ended past the run's start slot and its tolerance: the slot is given up, nothing runs. */
class SlotMissedError extends Error {
  constructor(lateMs: number) {
    super(`ready ${lateMs} ms after its rate-limit slot (at most ${RATE_START_TOLERANCE_MS} ms late); not run`);
    this.name = 'SlotMissedError';
  }
}

/**
 * Where a run's slot may fall: its lead ahead, and no further than it can wait in its
 * invocation without cutting its action's time. The action's deadline counts from the lease's
 * start, a margin before the lease's end, so the room is what the deadline leaves past the
 * declared action time (LEASE_FACTOR makes it large); at least the lead, at most RATE_WAIT_MAX_MS.
 */
function slotWindow(own: LeaseTimes, leadMs: number): SlotWindow {
  const roomMs = (own.actionDeadlineSeconds - own.actionTimeSeconds) * 1000;
  return { leadMs, maxWaitMs: Math.min(RATE_WAIT_MAX_MS, Math.max(leadMs, roomMs)) };
}

/**
 * Waits for the run's start slot and returns at it; throws SlotMissedError when the run was
 * ready (or woke) more than RATE_START_TOLERANCE_MS past it. The time from asking the gate to
 * being ready teaches the instance's lead.
 */
async function startAtSlot(slot: { readonly startAtMs: number; readonly askedAtMs: number; readonly lead: StartLead }, deps: ExecutorDeps): Promise<void> {
  slot.lead.observe(deps.now() - slot.askedAtMs);
  const sleep = deps.sleep ?? ((ms: number) => setTimeout(ms));
  for (let now = deps.now(); now < slot.startAtMs; now = deps.now()) await sleep(slot.startAtMs - now);
  const lateMs = deps.now() - slot.startAtMs;
  if (lateMs > RATE_START_TOLERANCE_MS) throw new SlotMissedError(lateMs);
}

/**
 * The body a message carries, read back from the bucket when it points to one (the S3 claim
 * check). An object older than the renewal threshold is renewed here, at once: every message
 * this receive may send for it (a wake-up, a dead-letter copy, whose send has 2 s at most) then
 * points to an object with the whole pointer cover ahead (domain/body-object.ts). Undefined when
 * the object is gone. S3's own failures throw: the message goes back and is tried again.
 */
async function resolveBody(deps: ExecutorDeps, carried: Payload): Promise<{ payload: Payload; bytes?: Buffer; writtenAtMs?: number } | undefined> {
  const pointer = carried.bodyObject;
  if (pointer === undefined) return { payload: carried };
  if (deps.bodies === undefined) throw new Error('a work message points to a body object, and this executor has no bucket of bodies');
  const stored = await deps.bodies.read(pointer);
  if (stored === undefined) return undefined;
  let writtenAtMs = stored.lastModifiedMs;
  const renewAfterMs = bodyObjectRenewAfterSeconds(longestTtlSeconds(deps.routes.values())) * 1000;
  const now = deps.now();
  if (renewalDue(writtenAtMs, now, renewAfterMs, deps.takeoverMarginMs ?? TAKEOVER_MARGIN_MS)) {
    if (!(await deps.bodies.renew(pointer))) return undefined;
    writtenAtMs = now;
  }
  const body = carried.bodyEncoding === 'base64' ? stored.bytes.toString('base64') : stored.bytes.toString('utf8');
  return { payload: { body, bodyEncoding: carried.bodyEncoding, headers: carried.headers }, bytes: stored.bytes, writtenAtMs };
}

/**
 * A dead-letter copy. While its record names it and a copy of ours may still be on its way,
 * it is handed back at once, receive after receive, until the queue's redrive policy moves it
 * to the DLQ; its last receive marks the record (a hint for the reconciler). A copy that SQS
 * stamped after every copy of ours (a person's redrive: the console's move task or `retryproof
 * dlq redrive` make a new message) wins the redrive transition once, and runs. Returns
 * undefined when the copy is to run as an ordinary wake-up call (a redrive won, or an old
 * copy: the record decides).
 */
async function deadLetterCopy(
  deps: ExecutorDeps,
  work: WorkMessage,
  message: QueuedMessage,
  bodyFingerprint: string,
  unrunnable: boolean,
): Promise<ExecutionReport | undefined> {
  const id = work.deadLetterId ?? '';
  const handBack: ExecutionReport = {
    route: work.route,
    key: work.key,
    outcome: EXECUTION_OUTCOME.toDeadLetterQueue,
    ack: false,
    visibilitySeconds: 0,
    ...(work.reason === undefined ? {} : { deadLetterReason: work.reason }),
  };
  // No route or no action: nothing could run it, whoever sent it.
  if (unrunnable) return handBack;
  const record = await deps.store.get(work.route, work.key);
  const now = deps.now();
  // No record of this generation: it can never run; keep it for people.
  if (record?.receivedAt !== work.receivedAt || record.expiresAt <= Math.floor(now / 1000)) return handBack;
  // Not the body the record was accepted with: it never runs; people see it in the DLQ.
  if (record.fingerprint !== bodyFingerprint) return handBack;
  if (record.deadLetterId !== id) return undefined;
  // Whether a person made this copy is the redrive transition's whole rule (its SQS stamp after
  // every copy of ours could be): one conditional write decides, as for every transition. A
  // copy of ours on its way (or SQS's duplicate of one) is refused, and so is a copy that lost
  // the race to another copy of the same redrive or to a resend of ours.
  if (message.sentAt !== undefined) {
    const won = await deps.store.redrive({
      route: work.route,
      key: work.key,
      receivedAt: work.receivedAt,
      nowMs: now,
      deadLetterId: id,
      stampedAtMs: message.sentAt,
      keepUntilSeconds: keepUntilSeconds(record.expiresAt, now),
    });
    if (won) return undefined;
  }
  // Refused: back it goes rather than away, to the DLQ for a person (a copy that lost to another
  // copy of its redrive finds the record RECEIVED next time, and is an ordinary wake-up then).
  if (message.receiveCount >= deps.maxReceiveCount) await deps.store.markDeadLettered(work.route, work.key, id);
  return handBack;
}

const entitySources = new Map<string, EntitySource>();

/**
 * The entity of a route ordered per entity, read from the body this run gets (its SHA-256 is the
 * record's), hashed. Undefined when the body is no JSON or lacks the field: the ingest refuses
 * such a body on an ordered route, so it was accepted before the route was ordered, and runs out
 * of any line, as it was accepted.
 */
function entityOf(route: string, template: string, rawBody: Buffer): string | undefined {
  let source = entitySources.get(template);
  if (source === undefined) entitySources.set(template, (source = entitySourceFor(template)));
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
  try {
    return entityHash(route, source(body));
  } catch (err) {
    if (err instanceof MissingEntityError) return undefined;
    throw err;
  }
}

function refOf(work: WorkMessage): { route: string; key: string; receivedAt: number } {
  return { route: work.route, key: work.key, receivedAt: work.receivedAt };
}
