import type { EntityOrder } from '../../ports/entity-order.ts';
import type { Step } from '../ingest-context.ts';

/**
 * Its place in its entity's line after its message and before its 202; a place not taken is the
 * executor's to take (architecture.md#a-place-follows-its-message). Ordered routes of a receiver
 * with entity lines only.
 */
export function takePlace(order: EntityOrder): Step {
  return async (ctx) => {
    const { route, entity, key, now, record } = ctx;
    ctx.placeFailed = await order.place({ route: route.config.name, entity, key, receivedAt: now }, now, record.expiresAt).then(
      () => false,
      () => true,
    );
    return undefined;
  };
}
