import { RECORD_STATUS } from '../../domain/event-record.ts';
import type { EntityOrder } from '../../ports/entity-order.ts';
import { dependency } from '../dependency.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';

/**
 * Work that never ran, RECEIVED or PARKED, may have no place yet: this copy's 202 must not come
 * before it, and its payload is kept first (architecture.md#a-place-follows-its-message). Ordered
 * routes of a receiver with entity lines only.
 */
export function placeIfAbsent(order: EntityOrder): Step<DuplicateContext> {
  return async ({ route, entity, key, old, now }) => {
    if (old.runs !== 0 || (old.status !== RECORD_STATUS.received && old.status !== RECORD_STATUS.parked)) return undefined;
    await dependency('DynamoDB', () => order.placeIfAbsent({ route: route.config.name, entity, key, receivedAt: old.receivedAt }, now, old.expiresAt));
    return undefined;
  };
}
