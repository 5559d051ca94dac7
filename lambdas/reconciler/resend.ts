/** How the phases send a stuck, stranded or parked record's message again. */
import { DEAD_LETTER_SEND_SECONDS } from '../config/route-config.ts';
import { RECORD_STATUS, acceptedAnswer, keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { EventRecord, WorkMessage } from '../domain/event-record.ts';
import { LAST_ERROR_MAX_CHARS, cut } from '../domain/queue-limits.ts';
import type { ResendRequest } from '../ports/event-store.ts';
import type { ReconcileRun } from './reconcile-run.ts';

/**
 * What a re-send of this record claims: one per window, answered as accepted from now on. Its
 * time is read as the write goes out: the claim sets lastEnqueuedAt, which a dead-letter copy's send deadline counts from.
 */
export function resendRequestOf(run: ReconcileRun, full: EventRecord): ResendRequest {
  return {
    receivedAt: full.receivedAt,
    nowMs: run.deps.now(),
    sentBeforeMs: run.stuckBefore,
    answer: acceptedAnswer(full.route, full.key),
    answeredFailure: full.answer.status >= 500,
  };
}

/**
 * Sends a message, and says so in the report when SQS refuses it: one record SQS cannot
 * carry (an old, oversized body, say) must not end the run for every other record.
 * `wonAtMs`: a FAILED record's claimResend time, its dead-letter copy's deadline counts from it.
 */
export async function trySend(run: ReconcileRun, record: { route: string; key: string }, message: WorkMessage, wonAtMs?: number): Promise<boolean> {
  // Sent later, SQS's stamp would pass for a person's redrive (executor/dead-letter.ts); unsent, it stays stranded for the next run.
  const leftMs = wonAtMs === undefined ? undefined : wonAtMs + DEAD_LETTER_SEND_SECONDS * 1000 - run.deps.now();
  if (leftMs !== undefined && leftMs <= 0) {
    run.flag(record, 'reenqueue-failed', `its dead-letter copy was not sent within ${DEAD_LETTER_SEND_SECONDS} s of its claim; the next run sends it`);
    return false;
  }
  try {
    await run.deps.queue.send(message, leftMs === undefined ? undefined : { signal: AbortSignal.timeout(leftMs) });
    return true;
  } catch (err) {
    run.flag(record, 'reenqueue-failed', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    return false;
  }
}

/**
 * The message a stuck record needs: its work, or the dead-letter copy a FAILED record never
 * got out. Undefined, and reported, when the record keeps no payload: then its work message
 * was sent and has not been lost (it waits in the queue, or in the DLQ after workers died on
 * it), or no delivery of it was acknowledged yet and the sender's retry brings it.
 */
export function messageFor(run: ReconcileRun, full: EventRecord): WorkMessage | undefined {
  const payload = keptPayloadOf(full);
  if (payload === undefined) {
    run.flag(full, 'payload-not-kept', 'its work message is in the queue or the DLQ, or no delivery of it was acknowledged yet');
    return undefined;
  }
  return full.status === RECORD_STATUS.failed
    ? {
        ...workMessageOf(full, payload),
        attempts: full.attempts,
        ...(full.lastError === undefined ? {} : { lastError: cut(full.lastError, LAST_ERROR_MAX_CHARS) }),
        reason: `failed after ${full.attempts} attempts; dead-letter copy re-sent by the reconciler`,
        deadLetterId: full.deadLetterId ?? '',
      }
    : workMessageOf(full, payload);
}
