import { MARK_ANSWERED_MAX_MS, MARK_ANSWERED_RESERVE_MS } from '../config/route-config.ts';
import type { EventRecord } from '../domain/event-record.ts';
import { bookkeeping } from './dependency.ts';
import type { IngestContext } from './ingest-context.ts';

/**
 * Marks the record's answer, stamped as the call is made; its time is counted from the stamp on
 * the invocation's own clock, and it is never made with too little of the invocation left
 * (architecture.md#circuit-breaker, "The mark's second is counted from its stamp").
 */
export function markAnswer({ receiver, delivery }: IngestContext, record: EventRecord): Promise<boolean> {
  const { timeLeftMs } = delivery;
  const markAtMs = receiver.now();
  const sinceStamp = elapsedSince(timeLeftMs === undefined ? () => receiver.now() : () => -timeLeftMs());
  const budgetMs = (): number => Math.min(MARK_ANSWERED_MAX_MS - sinceStamp(), timeLeftMs === undefined ? Number.POSITIVE_INFINITY : timeLeftMs() - MARK_ANSWERED_RESERVE_MS);
  return bookkeeping(() => receiver.store.markAnswered(record.route, record.key, record.receivedAt, markAtMs, budgetMs));
}

/** The ms a clock has run since this call, read each time the returned function is. */
function elapsedSince(clock: () => number): () => number {
  const start = clock();
  return () => clock() - start;
}
