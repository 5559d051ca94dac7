import { RECORD_STATUS } from '../../domain/event-record.ts';
import type { EventRecord } from '../../domain/event-record.ts';
import { dependency } from '../dependency.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';

/**
 * A 2xx is answered only for durable work: the first copy's function may have died between its
 * claim and its send, so the payload is kept before this copy's answer (architecture.md#record-states).
 */
export const keepPayload: Step<DuplicateContext> = async ({ receiver, route, key, old, payload }) => {
  if (payloadUnkept(old)) await dependency('DynamoDB', () => receiver.store.keepPayload(route.config.name, key, old.receivedAt, payload));
  return undefined;
};

/** No worker has taken the record, and the table does not keep its payload. */
export function payloadUnkept(old: EventRecord): boolean {
  return old.status === RECORD_STATUS.received && old.runs === 0 && old.body === undefined;
}
