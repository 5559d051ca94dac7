import { entityHash } from '../../domain/entity-order.ts';
import type { EntitySource } from '../../domain/entity-order.ts';
import type { Step } from '../ingest-context.ts';

/**
 * A route ordered per entity: a body without its entity is refused (400) before anything is
 * written (architecture.md#answers-to-senders). Routes with `orderBy` only.
 */
export function readEntity(entitySource: EntitySource): Step {
  return (ctx) => {
    ctx.entity = entityHash(ctx.route.config.name, entitySource(ctx.json()));
    return undefined;
  };
}
