import { workMessageOf } from '../../domain/event-record.ts';
import { bodyObjectName } from '../../domain/body-object.ts';
import { UnqueueableBodyError } from '../../domain/errors.ts';
import { unqueueableReason } from '../../domain/queue-limits.ts';
import type { BodyObjects } from '../../ports/body-objects.ts';
import { dependency } from '../dependency.ts';
import type { Step } from '../ingest-context.ts';

/**
 * A body above the route's threshold, or one SQS cannot carry, goes to the bucket before the
 * claim, so a claim never points to an object that is not there; what SQS still cannot carry is
 * refused (architecture.md#large-bodies-and-ordering-per-entity). Receivers with a bucket only.
 */
export function stageBody(bodies: BodyObjects): Step {
  return async (ctx) => {
    const { route, delivery, record, key } = ctx;
    let unqueueable = unqueueableReason(JSON.stringify(workMessageOf(record, ctx.payload, true)));
    if (delivery.rawBody.length > route.config.claimCheckAboveBytes || unqueueable !== undefined) {
      const stored = await dependency('S3', () => bodies.store(bodyObjectName(route.config.name, key, record.fingerprint), delivery.rawBody));
      if (stored.created) ctx.bodyWrittenAtMs = ctx.now;
      ctx.payload = { ...ctx.payload, body: '', bodyObject: stored.pointer };
      unqueueable = unqueueableReason(JSON.stringify(workMessageOf(record, ctx.payload, true)));
    }
    if (unqueueable !== undefined) throw new UnqueueableBodyError(unqueueable);
    return undefined;
  };
}
