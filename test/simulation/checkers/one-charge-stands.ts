/**
 * After reconciliation one charge of a key stands on the downstream, but for charges a contract
 * breach excuses (key-facts.ts). FAILED work with two entries waits for a person (reported as
 * failed-with-entries): a redrive's completing run names the entry to keep (seed 961).
 */
import { DAY, EPOCH } from '../sim-constants.ts';
import type { KeyFacts } from './key-facts.ts';

export function checkOneChargeStands({ k, standing, standingCharges, unbookedCharges, failed }: KeyFacts, violations: string[]): void {
  const unbooked = standingCharges.filter((c) => unbookedCharges.includes(c));
  const excusedUnbooked = Math.min(unbooked.length, standing - 1);
  if (standing - excusedUnbooked > 1 && !failed) {
    const which = standingCharges.map((c) => `${c.chargeId} by run ${c.attempt} on day ${((c.at - EPOCH) / DAY).toFixed(2)}${unbooked.includes(c) ? ', no entry' : ''}`).join('; ');
    violations.push(`${k.key}: ${standing} charges stand on the downstream after reconciliation (paid ${standing} times: ${which})`);
  }
}
