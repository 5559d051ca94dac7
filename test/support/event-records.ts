/** Event records written straight to a table, for reconciler tests that set the scene by hand. */
import type { EventRecord } from '../../lambdas/domain/event-record.ts';

/** A record as ingest would have written it at `receivedAt` (35-day TTL), with `extra` laid over it. */
export function sampleRecord(route: string, key: string, receivedAt: number, extra: Partial<EventRecord> = {}): EventRecord {
  const ran = extra.status !== undefined && extra.status !== 'RECEIVED' ? 1 : 0;
  return {
    route,
    key,
    status: 'RECEIVED',
    fingerprint: 'f'.repeat(64),
    body: '{"amount":1}',
    bodyEncoding: 'utf8',
    headers: {},
    receivedAt,
    expiresAt: Math.floor(receivedAt / 1000) + 35 * 86_400,
    answer: { status: 202, body: '{}' },
    hits: 1,
    attempts: ran,
    runs: ran,
    redrives: 0,
    lastEnqueuedAt: receivedAt,
    ...extra,
  };
}
