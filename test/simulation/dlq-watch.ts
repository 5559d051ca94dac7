/** What the world knows of the dead-letter copies: the ones a person made, and those SQS sent straight back unseen. */
import { workKey } from './sim-util.ts';
import type { World } from './world.ts';

/**
 * A person's copy that no receiver was ever handed: where a move task keeps the receive
 * count (moveTaskResetsReceiveCount false, the worst case AWS does not document), SQS moves
 * it straight back to the DLQ at its first receive, with the move's stamp. No code of ours
 * sees it, so nothing can keep its record for it (seeds 542, 97); `retryproof dlq redrive`
 * makes a message with a count of 0, which runs.
 */
export function neverHanded(w: World, m: { readonly messageId: string; readonly sentAt: number; readonly body: string }): boolean {
  const id = (JSON.parse(m.body) as { deadLetterId?: string }).deadLetterId;
  return id !== undefined && w.personCopies.has(`${id}\u0000${String(m.sentAt)}`) && !w.delivered.has(m.messageId);
}
/** Marks the key of a copy SQS sent straight back unseen (neverHanded); answers whether `m` is one. */
export function noteBouncedUnseen(w: World, m: { readonly messageId: string; readonly sentAt: number; readonly body: string }): boolean {
  if (!neverHanded(w, m)) return false;
  const body = JSON.parse(m.body) as { route?: string; key?: string };
  const k = body.route === undefined || body.key === undefined ? undefined : w.keys.get(workKey(body.route, body.key));
  if (k !== undefined) k.bouncedUnseen = true;
  return true;
}
