import { DEAD_LETTER_SEND_SECONDS } from '../config/route-config.ts';
import { deliveryId } from '../domain/event-record.ts';
import type { WorkMessage } from '../domain/event-record.ts';
import { DEAD_LETTER_REASON_MAX_CHARS, cut } from '../domain/queue-limits.ts';
import type { ExecutionOutcome, ExecutionReport } from './execution-report.ts';
import type { MessageContext } from './message-context.ts';

/** A dead-letter copy's send did not go out within DEAD_LETTER_SEND_SECONDS of the write that won it: the reconciler re-sends it. */
export class DeadLetterSendLateError extends Error {
  constructor(route: string, key: string) {
    super(`the dead-letter copy of ${deliveryId(route, key)} was not sent within ${DEAD_LETTER_SEND_SECONDS} s of its failure; the reconciler re-sends it`);
    this.name = 'DeadLetterSendLateError';
  }
}

/** What a dead-letter copy carries beyond the work, and the write that won it. */
export interface DeadLetterFields {
  readonly attempts?: number;
  readonly lastError?: string;
  readonly deadLetterId?: string;
  readonly attempt?: number;
  /** The instant the FAILED write set lastEnqueuedAt: the copy is sent within DEAD_LETTER_SEND_SECONDS of it, or not at all. */
  readonly wonAtMs?: number;
}

/**
 * Sends a dead-letter copy with the whole operation context, and acknowledges this message. A
 * FAILED record's copy is stamped by SQS within its write's bound, so that a person's redrive is
 * told apart by its own stamp (docs/architecture.md#every-write-can-be-ambiguous).
 */
export async function sendDeadLetter(ctx: MessageContext, reason: string, outcome: ExecutionOutcome, extra: DeadLetterFields = {}): Promise<ExecutionReport> {
  const { work, executor, body } = ctx;
  const { attempt, wonAtMs, ...fields } = extra;
  const copy: WorkMessage = { ...work, ...fields, reason: cut(reason, DEAD_LETTER_REASON_MAX_CHARS), deadLetterId: fields.deadLetterId ?? executor.newId() };
  if (wonAtMs === undefined) {
    await executor.workQueue.send(copy, body.sendHint);
  } else {
    const leftMs = wonAtMs + DEAD_LETTER_SEND_SECONDS * 1000 - executor.now();
    // Too late already: the record is FAILED in the retry partition, and the reconciler re-sends its copy.
    if (leftMs <= 0) throw new DeadLetterSendLateError(work.route, work.key);
    await executor.workQueue.send(copy, { signal: AbortSignal.timeout(leftMs), ...body.sendHint });
  }
  return {
    ...ctx.about,
    ...(attempt === undefined ? {} : { attempt }),
    outcome,
    ack: true,
    deadLetterReason: reason,
    ...(fields.lastError === undefined ? {} : { error: fields.lastError }),
  };
}
