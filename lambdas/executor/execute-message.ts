/**
 * The executor use case: one SQS message in, exactly one effect out. Claim the record
 * with a lease, run the route's action with the idempotency key, then complete, release
 * or fail it, each write fenced by the lease token, and log the attempt.
 */
import { randomUUID } from 'node:crypto';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { PermanentActionError, SimulatedCrash } from '../actions/action.ts';
import type { ActionResult } from '../actions/action.ts';
import type { ActionRegistry } from '../actions/action-registry.ts';
import { deliveryId } from '../domain/event-record.ts';
import type { EventRecord, WorkMessage } from '../domain/event-record.ts';
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
  readonly maxReceiveCount: number;
  readonly now: () => number;
  /** Time left in this invocation; an action never runs past it. */
  readonly remainingMs?: () => number;
  readonly requestId?: string;
  /** True while the route is paused: its work is parked, not run. @default - never paused */
  readonly isPaused?: (route: string) => Promise<boolean>;
}

export const EXECUTION_OUTCOME = {
  completed: 'completed',
  duplicate: 'duplicate',
  locked: 'locked',
  retry: 'retryable-error',
  permanent: 'permanent-error',
  exhausted: 'retries-exhausted',
  fencedOut: 'fenced-out',
  expired: 'record-expired',
  crashed: 'crashed',
  unreadable: 'unreadable-message',
  parked: 'parked',
  toDeadLetterQueue: 'to-dead-letter-queue',
} as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOME)[keyof typeof EXECUTION_OUTCOME];

export interface ExecutionReport {
  readonly outcome: ExecutionOutcome;
  /** False: hand the message back to SQS (a batch item failure). */
  readonly ack: boolean;
  /** With ack false: make it visible again at once (a dead-letter copy on its way to the DLQ). */
  readonly release?: boolean;
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

function parseBody(record: EventRecord): unknown {
  if (record.bodyEncoding === 'base64') return record.body;
  try {
    return JSON.parse(record.body) as unknown;
  } catch {
    return record.body;
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
  const work = parseWorkMessage(message.body);
  if (work === undefined) {
    // Not ours to execute, and no record to name: the queue moves it to the DLQ as it is.
    return { outcome: EXECUTION_OUTCOME.unreadable, ack: false, release: true, deadLetterReason: 'unreadable message' };
  }
  const base = { route: work.route, key: work.key };
  const route = deps.routes.get(work.route);
  const action = route === undefined ? undefined : deps.actions.get(route.action);
  /** Sends a dead-letter copy with the whole context, and acknowledges this message. */
  const toPeople = async (
    reason: string,
    outcome: ExecutionOutcome,
    extra: { attempts?: number; lastError?: string; deadLetterId?: string; attempt?: number } = {},
  ): Promise<ExecutionReport> => {
    const { attempt, ...fields } = extra;
    await deps.workQueue.send({ ...work, ...fields, reason, deadLetterId: fields.deadLetterId ?? randomUUID() });
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
    const inFlight = await deadLetterInFlight(deps, work, message, route === undefined || action === undefined);
    if (inFlight !== undefined) return inFlight;
    // Otherwise a person redrove it from the DLQ: run it as any other message.
  }
  if (route === undefined || action === undefined) {
    const reason = route === undefined ? `route "${work.route}" is not configured` : `action "${route.action}" is not registered`;
    return toPeople(reason, EXECUTION_OUTCOME.unreadable);
  }

  if ((await deps.isPaused?.(work.route)) === true) {
    // The route is paused: keep the work, run nothing. Resuming the route re-enqueues it.
    const parked = await deps.store.park({ route: work.route, key: work.key, receivedAt: work.receivedAt, nowMs: deps.now() });
    switch (parked.kind) {
      case 'parked':
      case 'already-parked':
        return { ...base, outcome: EXECUTION_OUTCOME.parked, ack: true };
      case 'completed':
        return { ...base, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
      case 'locked':
        return { ...base, outcome: EXECUTION_OUTCOME.locked, ack: false };
      case 'missing':
        return toPeople('record expired before execution', EXECUTION_OUTCOME.expired);
      case 'route-active':
        break;
    }
  }

  const startedAt = deps.now();
  const token = randomUUID();
  const claim = await deps.store.claim({
    route: work.route,
    key: work.key,
    receivedAt: work.receivedAt,
    nowMs: startedAt,
    leaseMs: route.leaseSeconds * 1000,
    token,
  });
  if (claim.kind === 'completed') return { ...base, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
  if (claim.kind === 'locked') return { ...base, outcome: EXECUTION_OUTCOME.locked, ack: false };
  if (claim.kind === 'missing') return toPeople('record expired before execution', EXECUTION_OUTCOME.expired);

  const record = claim.record;
  const attempt = record.attempts;
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
    ...(deps.requestId === undefined ? {} : { requestId: deps.requestId }),
  };
  const fence = { route: work.route, key: work.key, token };

  let result: ActionResult;
  try {
    result = await action({
      route: work.route,
      key: work.key,
      idempotencyKey: deliveryId(work.route, work.key),
      body: parseBody(record),
      headers: record.headers,
      attempt,
      deadline: startedAt + budgetMs,
      signal,
    });
  } catch (error) {
    if (error instanceof SimulatedCrash) {
      // A dead worker writes nothing more: its lease runs out and SQS redelivers.
      return { ...base, attempt, outcome: EXECUTION_OUTCOME.crashed, ack: false };
    }
    const described = describeError(error);
    const errorText = `${described.class}: ${described.message}`;
    const permanent = error instanceof PermanentActionError;
    const exhausted = !permanent && message.receiveCount >= deps.maxReceiveCount;
    const endedAt = deps.now();
    if (permanent || exhausted) {
      const deadLetterId = randomUUID();
      const owned = await deps.store.fail({ ...fence, nowMs: endedAt, error: errorText, deadLetterId });
      const outcome = !owned ? EXECUTION_OUTCOME.fencedOut : permanent ? EXECUTION_OUTCOME.permanent : EXECUTION_OUTCOME.exhausted;
      await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
      if (!owned) return { ...base, attempt, outcome, ack: true, error: errorText };
      // The dead-letter copy carries the whole operation context, enough for an audit without the table.
      const reason = permanent ? 'permanent error' : `retries exhausted after ${attempt} attempts`;
      return toPeople(reason, outcome, { attempts: attempt, lastError: errorText, deadLetterId, attempt });
    }
    const owned = await deps.store.release({ ...fence, nowMs: endedAt, error: errorText });
    const outcome = owned ? EXECUTION_OUTCOME.retry : EXECUTION_OUTCOME.fencedOut;
    await deps.store.appendLog({ ...log, endedAt, outcome, error: described });
    // Fenced out: another worker owns the record now; this copy of the message is surplus.
    return { ...base, attempt, outcome, ack: !owned, error: errorText };
  }

  const endedAt = deps.now();
  const completed = await deps.store.complete({ ...fence, nowMs: endedAt, result: resultOf(result) });
  const outcome = completed ? EXECUTION_OUTCOME.completed : EXECUTION_OUTCOME.fencedOut;
  await deps.store.appendLog({ ...log, endedAt, outcome });
  return { ...base, attempt, outcome, ack: true, leaseShare: (endedAt - startedAt) / (route.leaseSeconds * 1000) };
}

/**
 * A dead-letter copy on its way to the DLQ is handed back at once, receive after receive,
 * until the queue's redrive policy moves it (after maxReceiveCount receives). Its record
 * names it in `deadLetterId` until its last receive here; a copy that comes back after
 * that was redriven by a person, and runs. Returns undefined for such a redrive.
 */
async function deadLetterInFlight(
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
    release: true,
    ...(work.reason === undefined ? {} : { deadLetterReason: work.reason }),
  };
  // No route or no action: nothing could run it, whoever sent it.
  if (unrunnable) return handBack;
  const record = await deps.store.get(work.route, work.key);
  const nowSeconds = Math.floor(deps.now() / 1000);
  // No record of this generation: it can never run; keep it for people.
  if (record?.receivedAt !== work.receivedAt || record.expiresAt <= nowSeconds) return handBack;
  if (record.deadLetterId !== id) return undefined;
  if (message.receiveCount >= deps.maxReceiveCount) await deps.store.markDeadLettered(work.route, work.key, id);
  return handBack;
}
