import type { EventRecord } from '../../domain/event-record.ts';
import { LAST_ERROR_MAX_CHARS, cut } from '../../domain/queue-limits.ts';
import { keepUntilSeconds } from '../../store/record-transitions.ts';
import { describeError, lastErrorOf } from '../attempt-error.ts';
import { sendDeadLetter } from '../dead-letter.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { MessageContext } from '../message-context.ts';
import { fencedOut } from '../reports.ts';

/**
 * FAILED after a permanent error or the budget's last attempt, then its dead-letter copy with the
 * whole operation context; the record outlives the copy's 14 days in the DLQ
 * (docs/architecture.md#the-retry-budget-and-the-dlq).
 */
export async function failAfterRun(ctx: MessageContext, error: unknown, permanent: boolean): Promise<ExecutionReport> {
  const { executor, lease, body } = ctx;
  const { record, attempt } = lease;
  const described = describeError(error);
  const errorText = lastErrorOf(described);
  const endedAt = executor.now();
  const deadLetterId = executor.newId();
  const owned = await executor.store.fail({
    ...lease.fence,
    receivedAt: record.receivedAt,
    nowMs: endedAt,
    error: errorText,
    deadLetterId,
    payload: body.kept,
    keepUntilSeconds: keepUntilSeconds(record.expiresAt, endedAt),
  });
  const outcome = !owned ? EXECUTION_OUTCOME.fencedOut : permanent ? EXECUTION_OUTCOME.permanent : EXECUTION_OUTCOME.exhausted;
  await executor.store.appendLog({ ...lease.log, endedAt, outcome, error: described });
  if (!owned) return fencedOut(ctx, attempt, errorText);
  const reason = permanent ? 'permanent error' : `retries exhausted after ${record.attempts} attempts`;
  return sendDeadLetter(ctx, reason, outcome, { attempts: record.attempts, lastError: errorText, deadLetterId, attempt, wonAtMs: endedAt });
}

/** The lease found the budget spent: the last attempt's worker died without a word (a crash, a timeout). */
export async function failSpentBudget(ctx: MessageContext, record: EventRecord): Promise<ExecutionReport> {
  const { executor, route, body } = ctx;
  const attempts = record.attempts;
  const lastError = cut(record.lastError ?? 'the worker of the last attempt stopped without an answer', LAST_ERROR_MAX_CHARS);
  const deadLetterId = executor.newId();
  const failedAt = executor.now();
  const owned = await executor.store.failExhausted({
    ...ctx.ref,
    nowMs: failedAt,
    maxAttempts: route.maxAttempts,
    error: lastError,
    deadLetterId,
    payload: body.kept,
    fingerprint: body.fingerprint,
    keepUntilSeconds: keepUntilSeconds(record.expiresAt, failedAt),
  });
  if (!owned) return fencedOut(ctx, undefined);
  return sendDeadLetter(ctx, `retries exhausted after ${attempts} attempts`, EXECUTION_OUTCOME.exhausted, { attempts, lastError, deadLetterId, wonAtMs: failedAt });
}
