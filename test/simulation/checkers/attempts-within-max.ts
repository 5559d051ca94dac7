/** A record's attempts never pass its route's maxAttempts. */
import { MAX_ATTEMPTS } from '../sim-constants.ts';
import type { EventRecord } from '../../../lambdas/domain/event-record.ts';
import type { KeyState } from '../key-state.ts';

export function checkAttemptsWithinMax(k: KeyState, record: EventRecord, violations: string[]): void {
  if (record.attempts > MAX_ATTEMPTS) violations.push(`${k.key}: attempts ${record.attempts} above maxAttempts ${MAX_ATTEMPTS}`);
}
