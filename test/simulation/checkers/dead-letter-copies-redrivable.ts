/**
 * A dead-letter copy waiting for a person must still be redrivable: its record (that
 * generation) lives, unless the work took effect already (defect 7).
 */
import { workKey } from '../sim-util.ts';
import type { World } from '../world.ts';
import type { EndState } from './records-end-settled.ts';

export async function checkDeadLetterCopiesRedrivable(w: World, dlqBodies: EndState['dlqBodies']): Promise<void> {
  for (const m of dlqBodies) {
    if (typeof m.body.deadLetterId !== 'string' || m.neverHanded) continue;
    const k = w.keys.get(workKey(String(m.body.route), String(m.body.key)));
    if (k === undefined || k.effects > 0 || k.bouncedUnseen === true) continue;
    const record = await w.observerStore.get(k.route, k.key);
    const alive = record !== undefined && record.receivedAt === m.body.receivedAt && record.expiresAt * 1000 > w.nowMs;
    if (!alive) w.violations.push(`${k.key}: its dead-letter copy waits in the DLQ, but its record ${record === undefined ? 'is gone' : 'expired'}: a redrive can never run it`);
  }
}
