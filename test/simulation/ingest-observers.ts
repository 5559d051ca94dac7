/**
 * The ingest's store, observed. The breaker (defect 9): a key may trip it (pause its route, or be
 * marked tripped) only on a delivery that arrived after one of its deliveries got a 2xx answer.
 * Our own failures (a 5xx, an ingest that died or timed out after its claim, a reconciler's
 * resend) and copies that raced the first answer are not a sender's repeats.
 */
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { ClaimFailedError } from '../../lambdas/ports/event-store.ts';
import type { IngestEventStore } from '../../lambdas/ports/event-store.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { recordPk } from '../../lambdas/store/record-keys.ts';
import type { KeyState } from './key-state.ts';
import { perRegion } from './regions.ts';
import { traced, watchCalls, workKey } from './sim-util.ts';
import { ownWriteOf } from './world-dynamo.ts';
import { rawRecord, rawRecordIn } from './world-ports.ts';
import type { World } from './world.ts';

export function checkTrip(w: World, route: string, key: string | undefined, what: string): void {
  const k = key === undefined ? undefined : w.keys.get(workKey(route, key));
  const arrival = w.sched.current()?.meta.arrival;
  if (k === undefined || typeof arrival !== 'number') return;
  const answeredSeq = breakerAnsweredSeq(k);
  if (answeredSeq === undefined || arrival < answeredSeq) {
    w.violations.push(
      `${k.key}: ${what} on a delivery that arrived ${answeredSeq === undefined ? 'before any delivery of it got a 2xx' : 'before its first 2xx answer'} ` +
        '(our own failure or a racing copy, not its sender repeating)',
    );
  }
}

// The breaker's count, observed: never more repeats than deliveries of the key that arrived
// after one of its deliveries got a 2xx, by the time this one is answered (copies at once claim
// in any order; a missed count is allowed, an invented one never).
export function checkCount(w: World, k: KeyState, repeats: number): void {
  const answeredSeq = breakerAnsweredSeq(k);
  // Copies still on their way to their excuse, or whose excuse never landed, may be in it too.
  const self = w.sched.current();
  const pending = w.sched
    .parked()
    .reduce((sum, a) => sum + (a !== self && a.kind === 'ingest' && a.meta.keyState === k && typeof a.meta.pendingHits === 'number' ? a.meta.pendingHits : 0), 0);
  const after = (k.arrivalSeqs ?? []).filter((a) => answeredSeq !== undefined && a > answeredSeq).length + pending + (k.unexcusedHits ?? 0);
  if (repeats > after) {
    w.violations.push(`${k.key}: a delivery counted ${repeats} repeats, but only ${after} could count (deliveries after a 2xx answer, hits whose excuse is pending or failed)`);
  }
}

/** The first answer the breaker may count from: a 2xx, or a death after a send began. */
export function breakerAnsweredSeq(k: KeyState): number | undefined {
  return k.answeredSeq === undefined || k.diedAfterSendSeq === undefined ? (k.answeredSeq ?? k.diedAfterSendSeq) : Math.min(k.answeredSeq, k.diedAfterSendSeq);
}

export function observeEventStore(w: World): IngestEventStore {
  const realEventStore = traced(perRegion(w, (table) => new DynamoDbEventStore(w.clientOf.ingest, table, { timeShards: w.shape.timeShards })), 'events', w.trace);
  const trippedWatched = watchCalls(realEventStore, 'markBreakerTripped', (args) => {
    w.stats.breakerTrips++;
    checkTrip(w, args[0] as string, args[1] as string, 'marked the circuit breaker tripped');
  });
  // A claim that created its record must count as created, also when its first attempt
  // committed and lost its answer and the SDK's retry met it (defect 6): a delivery taken for
  // a copy of itself is answered as a replay, and no work is sent for it.
  return new Proxy(trippedWatched, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop === 'markAnswered' && typeof value === 'function') {
        const markAnswered = value as IngestEventStore['markAnswered'];
        return async (...args: Parameters<IngestEventStore['markAnswered']>): Promise<void> => {
          const meta = w.sched.current()?.meta;
          if (meta !== undefined) meta.marking = true;
          try {
            await markAnswered.apply(target, args);
          } finally {
            if (meta !== undefined) meta.marking = false;
          }
        };
      }
      if ((prop === 'excuseRacingCopy' || prop === 'excuseFailedClaim') && typeof value === 'function') {
        const excuse = value as (...args: unknown[]) => Promise<void>;
        return async (...args: unknown[]): Promise<void> => {
          const meta = w.sched.current()?.meta;
          try {
            await excuse.apply(target, args);
          } catch (error) {
            // Its bookkeeping failed: the answer stands, and the count may include this copy's hits
            // (a racing copy's, or a failed claim's: the claim wrapper below set them pending).
            const k = meta?.keyState as KeyState | undefined;
            if (k !== undefined) k.unexcusedHits = (k.unexcusedHits ?? 0) + ((meta?.pendingHits as number | undefined) ?? 0);
            throw error;
          } finally {
            if (meta !== undefined) meta.pendingHits = 0;
          }
        };
      }
      if (prop !== 'claimKey' || typeof value !== 'function') return value;
      const claimKey = value as IngestEventStore['claimKey'];
      return async (record: EventRecord, claimNowMs: number) => {
        const actor = w.sched.current()?.id;
        const pk = recordPk(record.route, record.key);
        const before = await w.observerStore.get(record.route, record.key);
        const noneLive = before === undefined || before.expiresAt <= Math.floor(claimNowMs / 1000);
        const call = ++w.portCalls;
        const out = await w.callScope.run(call, () => claimKey.call(target, record, claimNowMs)).catch((error: unknown) => {
          // A failed claim's hits may be in a count until its excuse lands (excuseFailedClaim).
          const meta = w.sched.current()?.meta;
          if (meta !== undefined && error instanceof ClaimFailedError) meta.pendingHits = error.uncertain;
          throw error;
        });
        const ownClaimId = actor === undefined ? undefined : w.committedUnanswered.get(ownWriteOf(actor, pk, call));
        if (actor !== undefined) w.committedUnanswered.delete(ownWriteOf(actor, pk, call));
        // Ours only if the record that stands carries this delivery's own claimId: copies that
        // arrived together may share a receivedAt (two clocks with the same skew), and one's
        // committed claim may have only added its hit to the other's record (seed 1374).
        const standing = out.kind === 'exists' && noneLive && ownClaimId !== undefined ? await rawRecord(w, record.route, record.key) : undefined;
        if (standing !== undefined && standing.claimId?.S === ownClaimId) {
          w.violations.push(`${record.key}: a delivery's own claim, committed and then retried by the SDK, was taken for another delivery's: answered as a replay, no work sent`);
        }
        if (w.eventual && out.kind === 'created') await checkDoubleClaim(w, record.route, record.key, claimNowMs);
        // A duplicate's hits while a count ran, until it is answered or excused: a racing copy's are
        // in the count until then (a claim before the count started is in its base).
        const meta = w.sched.current()?.meta;
        if (meta !== undefined && out.kind === 'exists' && out.answered) meta.pendingHits = out.attempts ?? 1;
        return out;
      };
    },
  });
}

/**
 * The eventually consistent control's hazard, seen where it happens: a claim that created a
 * record in its Region while another Region's table holds a live record of the same key
 * under another claim. Both Regions then run it. (On one table the two are the same record.)
 */
export async function checkDoubleClaim(w: World, route: string, key: string, claimNowMs: number): Promise<void> {
  const own = w.regionTables[w.regionOfActor()] ?? w.eventsTable;
  const mine = (await rawRecordIn(w, own, route, key))?.claimId?.S;
  for (const table of w.regionTables) {
    if (table === own) continue;
    const other = await rawRecordIn(w, table, route, key);
    if (other !== undefined && Number(other.expiresAt?.N ?? 0) > claimNowMs / 1000 && other.claimId?.S !== mine) {
      w.stats.doubleClaims++;
      w.trace?.(`  ${key}: claimed in two Regions at once (eventual consistency)`);
      return;
    }
  }
}
