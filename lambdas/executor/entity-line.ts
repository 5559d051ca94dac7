/** A record's entity and its line, on a route ordered per entity (`orderBy`). */
import type { Buffer } from 'node:buffer';
import { MissingEntityError } from '../domain/errors.ts';
import { entityHash } from '../domain/entity-order.ts';
import type { EntitySource } from '../domain/entity-order.ts';
import type { MessageContext } from './message-context.ts';
import { wakeWaiter } from './wake-waiter.ts';

/**
 * The entity of the body this run gets (its SHA-256 is the record's), hashed. Undefined when the
 * body is no JSON or lacks the field: it was accepted before the route was ordered, and runs out
 * of any line (docs/architecture.md#large-bodies-and-ordering-per-entity).
 */
export function entityOf(route: string, source: EntitySource, rawBody: Buffer): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
  try {
    return entityHash(route, source(body));
  } catch (err) {
    if (err instanceof MissingEntityError) return undefined;
    throw err;
  }
}

/**
 * After this record's completion, or a copy that finds it completed at its turn (its worker died
 * between the two writes): the line moves on, and the next record, if it waits parked, is woken.
 * A failed write or send throws: the message goes back, and its next receive does this again.
 */
export async function moveLine(ctx: MessageContext): Promise<void> {
  const { line, executor } = ctx;
  if (line === undefined) return;
  const waiter = await line.order.advance(line.ref, line.place, executor.now(), ctx.route.ttlSeconds);
  if (waiter !== undefined) await wakeWaiter(executor, ctx.work.route, waiter);
}
