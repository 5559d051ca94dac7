import type { EventRecord, Payload } from '../../domain/event-record.ts';
import { workMessageOf } from '../../domain/event-record.ts';
import { DependencyError } from '../../domain/errors.ts';
import { dependency } from '../dependency.ts';
import type { Receiver, Step } from '../ingest-context.ts';

/**
 * The new record's message; the answer follows it, so a worker's lease of it starts the breaker's
 * count. An object this delivery did not write may be old: the send renews it
 * (architecture.md#large-bodies-and-ordering-per-entity).
 */
export const sendWork: Step = async (ctx) => {
  await sendOrRecordFailure(ctx.receiver, ctx.record, ctx.payload, { counting: false, startsCount: true, bodyWrittenAtMs: ctx.bodyWrittenAtMs });
  return undefined;
};

/**
 * Sends the record's message. On failure the record stays, with a 503 answer the sender's retry
 * ends and the payload the reconciler re-sends (architecture.md#record-states, "never deleted").
 */
export async function sendOrRecordFailure(
  receiver: Receiver,
  record: EventRecord,
  payload: Payload,
  { counting, startsCount = false, bodyWrittenAtMs }: { counting: boolean; startsCount?: boolean; bodyWrittenAtMs?: number | undefined },
): Promise<void> {
  try {
    await receiver.queue.send(workMessageOf(record, payload, startsCount), bodyWrittenAtMs === undefined ? undefined : { bodyWrittenAtMs });
  } catch (sendError) {
    const failure = new DependencyError('SQS', { cause: sendError });
    const answer = { status: failure.status, body: failure.message };
    await dependency('DynamoDB', () => receiver.store.recordEnqueueFailure(record.route, record.key, record.receivedAt, answer, payload, counting)).catch(
      (recordError: unknown) => {
        throw new DependencyError('SQS', { cause: new AggregateError([sendError, recordError]) });
      },
    );
    throw failure;
  }
}
