/**
 * Waking a record parked in its entity's line (issue 24), once the cursor reached its place. One
 * copy, for the two that move a line on: the executor after a completion (phases/complete.ts)
 * and a person's skip of a FAILED head (routes/line-control.ts).
 */
import { RECORD_STATUS, keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { Waiter } from '../ports/entity-order.ts';
import type { ExecutionStore } from '../ports/execution-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';

/** What a wake needs: the record read and its unpark, the queue its message goes to, a clock. */
export interface WakeDeps {
  readonly store: Pick<ExecutionStore, 'get' | 'unpark'>;
  readonly workQueue: WorkQueue;
  readonly now: () => number;
}

/**
 * Wakes a record parked in its line: a wake-up message from its kept payload, then back to
 * RECEIVED (as a resume does: a failed send leaves it PARKED, where the reconciler finds it).
 * A waiter that is not this generation's PARKED record any more (woken already, gone) or keeps
 * no payload is left as it is.
 * @returns whether a wake-up message was sent
 */
export async function wakeWaiter(deps: WakeDeps, route: string, waiter: Waiter): Promise<boolean> {
  const record = await deps.store.get(route, waiter.key);
  if (record === undefined || record.receivedAt !== waiter.receivedAt || record.status !== RECORD_STATUS.parked) return false;
  const payload = keptPayloadOf(record);
  if (payload === undefined) return false;
  await deps.workQueue.send(workMessageOf(record, payload));
  await deps.store.unpark(record, deps.now());
  return true;
}
