import type { EventRecord } from '../../domain/event-record.ts';
import type { IngestEventStore } from '../../ports/event-store.ts';
import { dependency } from '../dependency.ts';
import type { IngestContext, Step } from '../ingest-context.ts';
import type { IngestOutcome } from '../ingest-delivery.ts';

/**
 * Checked before the send: no work of a new generation may run if an earlier one's ran with the
 * same body, a capture replayed after its record expired (architecture.md#horizons-are-weeks-long).
 * Routes whose scheme signs no timestamp only.
 */
export const checkReplayMemory: Step = async (ctx) => {
  const takenAt = await replayedCapture(ctx.receiver.store, ctx.record);
  return takenAt === undefined ? undefined : replayAfterExpiry(ctx, takenAt);
};

/**
 * The receivedAt of an earlier generation of the record's body whose work ran, read from the
 * replay memory, after taking this generation back; undefined when the body is this one's own work.
 */
export async function replayedCapture(store: IngestEventStore, record: EventRecord): Promise<number | undefined> {
  const takenAt = await dependency('DynamoDB', () => store.takenBefore(record.route, record.fingerprint, record.receivedAt));
  if (takenAt === undefined) return undefined;
  await dependency('DynamoDB', () => store.forgetReplay(record.route, record.key, record.receivedAt));
  return takenAt;
}

/** A replayed capture is answered as a duplicate, with no effect, and not counted by the breaker. */
export function replayAfterExpiry({ route: { config }, key, accepted, now }: IngestContext, takenAt: number): IngestOutcome {
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
