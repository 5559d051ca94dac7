/**
 * After reconciliation at most one ledger entry of a key stays posted. A PARKED record is still
 * in flight (its route is paused): the run that completes it may post the entry to keep, so the
 * reconciler leaves its entries until then (reconciler/phase-effects.ts). Workers killed between
 * their post and their effect leave such entries (seed 128).
 */
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';
import { DAY, EPOCH } from '../sim-constants.ts';
import type { KeyFacts } from './key-facts.ts';

export function checkOneEntryPosted({ k, record, entries, posted, failed }: KeyFacts, violations: string[]): void {
  if (posted > 1 && record?.status !== RECORD_STATUS.parked && !failed) {
    const which = entries.filter((e) => e.status === 'posted').map((e) => `${e.entryId} of run ${e.attempt} under ${JSON.stringify(e.idempotencyKey)} on day ${((e.postedAt - EPOCH) / DAY).toFixed(2)}`);
    violations.push(`${k.key}: ${posted} ledger entries still posted after reconciliation (${which.join('; ')})`);
  }
}
