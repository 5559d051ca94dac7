/**
 * A key whose record is gone was never accepted (every delivery refused, or lost before the
 * claim), or was accepted and is gone after its TTL: then it ran, or it failed and a person had
 * its dead-letter copy.
 */
import type { KeyFacts } from './key-facts.ts';

export function checkAcceptedWorkNotLost({ k }: KeyFacts, violations: string[]): void {
  if (k.answered && k.effects === 0 && !k.everFailed) violations.push(`${k.key}: answered 2xx, never ran, and its record is gone (accepted work lost)`);
}
