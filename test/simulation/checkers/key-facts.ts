/** What the checkers of one key read: its record, its ledger entries and its downstream charges after the settle. */
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';
import type { EventRecord } from '../../../lambdas/domain/event-record.ts';
import type { KeyState } from '../key-state.ts';
import type { Charge, SimLedgerEntry } from '../sim-downstream.ts';
import type { World } from '../world.ts';

export interface KeyFacts {
  readonly k: KeyState;
  readonly record: EventRecord | undefined;
  /** Every entry posted under any key the protocol ran it under. */
  readonly entries: readonly SimLedgerEntry[];
  /** Those of them still posted. */
  readonly posted: number;
  /** Real effects: the downstream's charges, whatever the ledger says. */
  readonly charges: readonly Charge[];
  /** The charges not refunded. */
  readonly standing: number;
  readonly standingCharges: readonly Charge[];
  /** Charges a contract breach of the downstream excuses (see keyFactsOf). */
  readonly unbookedCharges: readonly Charge[];
  readonly failed: boolean;
}

/** The facts of `k` once its record has been read. */
export function keyFactsOf(w: World, k: KeyState, record: EventRecord | undefined): KeyFacts {
  const ledgerKeys = [...new Set([k.key, ...k.protocolKeys])];
  const posted = ledgerKeys.flatMap((key) => w.simLedger.entriesOf(k.route, key)).filter((e) => e.status === 'posted').length;
  const charges = [...k.chargeIds].map((id) => w.downstream.get(id)).filter((c) => c !== undefined);
  const standing = charges.filter((c) => c.refundedAt === undefined).length;
  // A downstream that keeps no idempotency key breaks rule 4 of the contract: a run cut between
  // its charge and its entry (a crash, a Lambda timeout, its deadline passing before the post)
  // leaves a charge no entry names, and the next run charges again. Nothing can see that first
  // charge, so nothing can reverse it: such charges are the contract breach's, not the
  // protocol's. Every charge some entry names must still come down to one.
  const entries = ledgerKeys.flatMap((key) => w.simLedger.entriesOf(k.route, key));
  const booked = (c: { chargeId: string }): boolean => entries.some((e) => e.chargeId === c.chargeId);
  // A downstream that keeps keys, but not as long as the contract asks (rule 4: the TTL +
  // 15 days for each redrive, and more), breaks it the same way once a record runs on after
  // redrives: a later run of the same generation (a higher run number) charges anew, and
  // the first charge, whose entry never got posted (a post that failed after the effect),
  // is out of reach (seed 157: run 2 on day 0, run 10 on day 41). Both charges must be of one
  // generation: a new generation's charge (a replay after the TTL) is never excused so.
  const forgottenLater = (c: { attempt: number; generation?: number }): boolean =>
    c.generation !== undefined && charges.some((d) => d.afterForgetting === true && d.generation === c.generation && d.attempt > c.attempt);
  const unbookedCharges = k.idempotentDownstream ? charges.filter((c) => !booked(c) && forgottenLater(c)) : charges.filter((c) => !booked(c));
  const standingCharges = charges.filter((c) => c.refundedAt === undefined);
  return { k, record, entries, posted, charges, standing, standingCharges, unbookedCharges, failed: record?.status === RECORD_STATUS.failed };
}
