/**
 * The executor use case: one SQS message in, exactly one effect out. Claim the record
 * with a lease, run the route's action with the idempotency key, then complete, release
 * or fail it, each write fenced by the lease token, and log the attempt.
 */
import { randomUUID } from 'node:crypto';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { PermanentActionError } from '../actions/action.ts';
import type { ActionResult } from '../actions/action.ts';
import type { ActionRegistry } from '../actions/action-registry.ts';
import { deliveryId, payloadOfMessage } from '../domain/event-record.ts';
import type { Payload, WorkMessage } from '../domain/event-record.ts';
import { operationFingerprint } from '../domain/operation-fingerprint.ts';
import type { ExecutionStore } from '../ports/execution-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';

/** One SQS message as the event source hands it over. */
export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  /** SQS's ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
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
  /** The queue's redrive policy: a dead-letter copy's receive number this high is its last before the DLQ. */
  readonly maxReceiveCount: number;
  readonly now: () => number;
  /** Time left in this invocation; an action never runs past it. */
  readonly remainingMs?: () => number;
  readonly requestId?: string;
  /** True while the route is paused: its work is parked, not run. @default - never paused */
  readonly isPaused?: (route: string) => Promise<boolean>;
  /** Spreads hand-backs of locked work over a second or two. @default Math.random */
  readonly random?: () => number;
  /** Lease tokens and dead-letter ids. @default crypto.randomUUID */
  readonly newId?: () => string;
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
  parked: 'parked',
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
  /** How long the action ran, as a share of the lease (0..1+). */
  readonly leaseShare?: number;
}

const RESULT_LIMIT = 1024;
const COMPLETION_MARGIN_MS = 2_000;
/** Up to this many seconds are added to a locked hand-back, so waiting copies do not all come back at once. */
const LOCKED_JITTER_SECONDS = 2;

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
  if (error instanceof Error) return { class: error.name, message: error.message.slice(0, 500) };
  return { class: 'Unknown', message: String(error).slice(0, 500) };
}

function resultOf(result: ActionResult): string {
  const text = JSON.stringify(result ?? {});
  return text.length <= RESULT_LIMIT ? text : JSON.stringify({ truncated: true, head: text.slice(0, RESULT_LIMIT - 40) });
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
  // send it again from the table keep it on the record.
  const payload = payloadOfMessage(work);
  const route = deps.routes.get(work.route);
  const action = route === undefined ? undefined : deps.actions.get(route.action);
  /** Sends a dead-letter copy with the whole context, and acknowledges this message. */
  const toPeople = async (
    reason: string,
    outcome: ExecutionOutcome,
    extra: { attempts?: number; lastError?: string; deadLetterId?: string; attempt?: number } = {},
  ): Promise<ExecutionReport> => {
    const { attempt, ...fields } = extra;
    await deps.workQueue.send({ ...work, ...fields, reason, deadLetterId: fields.deadLetterId ?? newId() });
    return {
      ...base,
      ...(attempt === undefined ? {} : { attempt }),
      outcome,
      ack: true,
      deadLetterReason: reason,
      ...(fields.lastError === undefined ? {} : { error: fields.lastError }),
    };
  };
  if (work.deadLetterId !== undefined) {
    const copy = await deadLetterCopy(deps, work, message, route === undefined || action === undefined);
    if (copy !== undefined) return copy;
    // Otherwise an ordinary wake-up call for the record (a redrive won, or an old copy).
  }
  if (route === undefined || action === undefined) {
    const reason = route === undefined ? `route "${work.route}" is not configured` : `action "${route.action}" is not registered`;
    return toPeople(reason, EXECUTION_OUTCOME.unreadable);
  }
  const ref = { route: work.route, key: work.key, receivedAt: work.receivedAt };
  const lockedUntil = (leaseUntil: number | undefined): ExecutionReport => {
    // Locked is not a failure: come back just when the lease ends, and take over if its worker died.
    const waitMs = Math.max(0, (leaseUntil ?? 0) - deps.now());
    const jitter = (deps.random ?? Math.random)() * LOCKED_JITTER_SECONDS;
    return { ...base, outcome: EXECUTION_OUTCOME.locked, ack: false, visibilitySeconds: Math.max(1, Math.ceil(waitMs / 1000 + jitter)) };
  };

  if ((await deps.isPaused?.(work.route)) === true) {
    // The route is paused: keep the work, run nothing. Resuming the route re-enqueues it.
    const parked = await deps.store.park({ ...ref, nowMs: deps.now(), ttlSeconds: route.ttlSeconds, payload });
    switch (parked.kind) {
      case 'parked':
      case 'already-parked':
        return { ...base, outcome: EXECUTION_OUTCOME.parked, ack: true };
      case 'completed':
        return { ...base, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
      case 'failed':
        return { ...base, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
      case 'locked':
        return lockedUntil(parked.record.leaseUntil);
      case 'missing':
        return toPeople('record expired before execution', EXECUTION_OUTCOME.expired);
      case 'route-active':
        break;
    }
  }

  const startedAt = deps.now();
  const token = newId();
  const lease = await deps.store.acquireLease({
    ...ref,
    nowMs: startedAt,
    leaseMs: route.leaseSeconds * 1000,
    token,
    maxAttempts: route.maxAttempts,
    // Not the first receive: the worker of an earlier one may have died, so keep the payload
    // where the reconciler finds it, should this message too be lost (the queue's backstop).
    ...(message.receiveCount > 1 ? { payload } : {}),
  });
  switch (lease.kind) {
    case 'completed':
      return { ...base, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
    case 'failed':
      return { ...base, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
    case 'locked':
      return lockedUntil(lease.record.leaseUntil);
    case 'missing':
      return toPeople('record expired before execution', EXECUTION_OUTCOME.expired);
    case 'exhausted': {
      // The last attempt's worker died without a word (a crash, a timeout): the budget is spent.
      const attempts = lease.record.attempts;
      const lastError = lease.record.lastError ?? 'the worker of the last attempt stopped without an answer';
      const deadLetterId = newId();
      const owned = await deps.store.failExhausted({ ...ref, nowMs: startedAt, maxAttempts: route.maxAttempts, error: lastError, deadLetterId, payload });
      if (!owned) return { ...base, outcome: EXECUTION_OUTCOME.fencedOut, ack: true };
      return toPeople(`retries exhausted after ${attempts} attempts`, EXECUTION_OUTCOME.exhausted, { attempts, lastError, deadLetterId });
    }
    case 'leased':
      break;
  }

  const record = lease.record;
  // The run number across redrives: what the action and the log see. The budget is `attempts`.
  const attempt = record.runs;
  const remaining = deps.remainingMs?.() ?? Number.POSITIVE_INFINITY;
  const budgetMs = Math.max(1, Math.min(route.actionDeadlineSeconds * 1000, remaining - COMPLETION_MARGIN_MS));
  const signal = AbortSignal.timeout(budgetMs);
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
    result = await action({
      route: work.route,
      key: work.key,
      idempotencyKey: deliveryId(work.route, work.key),
      body: parseBody(payload),
      headers: payload.headers,
      attempt,
      deadline: startedAt + budgetMs,
      signal,
    });
  } catch (error) {
    const described = describeError(error);
    const errorText = `${described.class}: ${described.message}`;
    const permanent = error instanceof PermanentActionError;
    // The budget is the record's: this message's receive count plays no part.
    const exhausted = !permanent && record.attempts >= route.maxAttempts;
    const endedAt = deps.now();
    if (permanent || exhausted) {
      const deadLetterId = newId();
      const owned = await deps.store.fail({ ...fence, receivedAt: record.receivedAt, nowMs: endedAt, error: errorText, deadLetterId, payload });
      const outcome = !owned ? EXECUTION_OUTCOME.fencedOut : permanent ? EXECUTION_OUTCOME.permanent : EXECUTION_OUTCOME.exhausted;
      await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
      if (!owned) return { ...base, attempt, outcome, ack: true, error: errorText };
      // The dead-letter copy carries the whole operation context, enough for an audit without the table.
      const reason = permanent ? 'permanent error' : `retries exhausted after ${record.attempts} attempts`;
      return toPeople(reason, outcome, { attempts: record.attempts, lastError: errorText, deadLetterId, attempt });
    }
    const owned = await deps.store.release({ ...fence, nowMs: endedAt, error: errorText });
    const outcome = owned ? EXECUTION_OUTCOME.retry : EXECUTION_OUTCOME.fencedOut;
    await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
    // Released: this message stays the record's wake-up call, back after the visibility timeout.
    // Fenced out: another worker owns the record now; this copy of the message is surplus.
    return { ...base, attempt, outcome, ack: !owned, error: errorText };
  }

  const endedAt = deps.now();
  const completed = await deps.store.complete({
    ...fence,
    nowMs: endedAt,
    result: resultOf(result),
    operationFingerprint: log.operationFingerprint,
    ...(deps.requestId === undefined ? {} : { requestId: deps.requestId }),
  });
  const outcome = completed ? EXECUTION_OUTCOME.completed : EXECUTION_OUTCOME.fencedOut;
  // The completing attempt is logged on the record by the completion itself; a fenced-out one gets a log item.
  if (!completed) await deps.store.appendLog({ ...log, endedAt, outcome });
  return { ...base, attempt, outcome, ack: true, leaseShare: (endedAt - startedAt) / (route.leaseSeconds * 1000) };
}

/**
 * A dead-letter copy. While its record names it and it has not yet left, it is on its way
 * to the DLQ: handed back at once, receive after receive, until the queue's redrive policy
 * moves it; its last receive here marks the record. A copy that comes back after that
 * was redriven by a person (the console's move task or `retryproof dlq redrive`): it wins
 * the redrive transition once, and runs. Returns undefined when the copy is to run as an
 * ordinary wake-up call (a redrive won, or an old copy: the record decides).
 */
async function deadLetterCopy(
  deps: ExecutorDeps,
  work: WorkMessage,
  message: QueuedMessage,
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
  if (record.deadLetterId !== id) return undefined;
  if (record.deadLettered === id) {
    const won = await deps.store.redrive({ route: work.route, key: work.key, receivedAt: work.receivedAt, nowMs: now, deadLetterId: id });
    // Lost: another copy of the same redrive ran it already; this one is surplus.
    return won ? undefined : { route: work.route, key: work.key, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
  }
  if (message.receiveCount >= deps.maxReceiveCount) await deps.store.markDeadLettered(work.route, work.key, id);
  return handBack;
}
