import { RECORD_STATUS, payloadOfMessage } from '../../domain/event-record.ts';
import { keepUntilSeconds } from '../../store/record-transitions.ts';
import { sendDeadLetter } from '../dead-letter.ts';
import { EXECUTION_OUTCOME } from '../execution-report.ts';
import type { ExecutionReport } from '../execution-report.ts';
import type { Gate, MessageContext } from '../message-context.ts';
import { inlineBody, readBody } from '../read-body.ts';

/** The reason of a message whose body object is gone. */
const BODY_MISSING_REASON = "the delivery's body object is not in the bucket (expired, or never stored): nothing ran";

/** The body the work runs on; a body object that is gone stops it (docs/architecture.md#a-record-that-cannot-run-fails). */
export const bodyMissing: Gate = async (ctx) => {
  const kept = payloadOfMessage(ctx.work);
  const body = await readBody(ctx.executor, kept);
  ctx.body = body ?? inlineBody(kept);
  return body === undefined ? bodyGone(ctx) : undefined;
};

/** A dead-letter copy goes on to the DLQ as it is (its last receive marks the record); other work fails its record. */
async function bodyGone(ctx: MessageContext): Promise<ExecutionReport> {
  const { work, executor } = ctx;
  if (work.deadLetterId === undefined) return failRecord(ctx);
  if (ctx.message.receiveCount >= executor.maxReceiveCount) await executor.store.markDeadLettered(work.route, work.key, work.deadLetterId);
  return { ...ctx.about, outcome: EXECUTION_OUTCOME.toDeadLetterQueue, ack: false, visibilitySeconds: 0, deadLetterReason: BODY_MISSING_REASON };
}

/** FAILED whatever its budget, so its line's head is one a person sees; only the record's own object (named by its fingerprint) fails it. */
async function failRecord(ctx: MessageContext): Promise<ExecutionReport> {
  const { work, executor, body } = ctx;
  const record = await executor.store.get(work.route, work.key);
  const ours = record !== undefined && record.receivedAt === work.receivedAt && body.kept.bodyObject?.endsWith(`/${record.fingerprint}`) === true;
  if (ours && record.status === RECORD_STATUS.completed) return { ...ctx.about, outcome: EXECUTION_OUTCOME.duplicate, ack: true };
  if (ours && record.status === RECORD_STATUS.failed) return { ...ctx.about, outcome: EXECUTION_OUTCOME.failedAlready, ack: true };
  if (ours && executor.routes.has(work.route)) {
    const deadLetterId = executor.newId();
    const failedAt = executor.now();
    const failed = await executor.store.failExhausted({
      ...ctx.ref,
      nowMs: failedAt,
      maxAttempts: 0,
      error: BODY_MISSING_REASON,
      deadLetterId,
      payload: body.kept,
      fingerprint: record.fingerprint,
      keepUntilSeconds: keepUntilSeconds(record.expiresAt, failedAt),
    });
    const fields = { attempts: record.attempts, lastError: BODY_MISSING_REASON, deadLetterId, wonAtMs: failedAt };
    if (failed) return sendDeadLetter(ctx, BODY_MISSING_REASON, EXECUTION_OUTCOME.bodyMissing, fields);
  }
  return sendDeadLetter(ctx, BODY_MISSING_REASON, EXECUTION_OUTCOME.bodyMissing);
}
