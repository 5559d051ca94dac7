/**
 * The replay memory (protocol v3): what stops a captured delivery from paying again once its
 * record has expired, on the schemes that sign no timestamp (GitHub, Shopify, hmac-sha256;
 * domain/idempotency-key.ts, needsReplayMemory). Their signature covers the body alone, so a
 * captured body verifies for as long as its secret does: the 300 s tolerance window that
 * refuses old captures on the other schemes never applies. The record remembers the body
 * only for its TTL (35 days by default); the memory remembers it after that.
 *
 * One small item per body a route accepted, in the events table:
 *   pk = SEEN#<route>#<SHA-256 of the body>   sk = SEEN   firstAt = receivedAt of the generation it belongs to
 * A body is one event on these schemes (the key is the body's hash, or a template over the
 * body's fields, so the same bytes are always the same key), so one item per route and body.
 *
 * Its lifetime: no expiry. A capture can be replayed for as long as the secret that signed it
 * verifies, and retryproof does not know when a team retires a secret (a rotation keeps the
 * previous one live until it is dropped). Any fixed lifetime L would let a capture older than
 * L pay again, so the item carries no TTL attribute and DynamoDB never deletes it. It costs
 * storage only (about 210 B with DynamoDB's 100 B per-item overhead; bench/cost-model.ts
 * prices it); an operator who retired a route's secret may delete the route's SEEN items older
 * than the retirement, since those bodies no longer verify.
 *
 * How it is kept, and why a crash cannot open a hole (see ingest-delivery.ts):
 *  - the record is claimed first (claimKey, one request as ever); a new generation then writes
 *    the memory before anything can run its work: before its message is sent, and before a
 *    duplicate keeps its payload (the only ways work of a record ever runs: a message, or a
 *    kept payload the reconciler re-sends);
 *  - the write is `firstAt = if_not_exists(firstAt, :receivedAt)`: it never fails and never
 *    conflicts, and an SDK retry of it (a write that committed and lost its answer) reads the
 *    same value back, so it needs no nonce;
 *  - the value it returns decides: our generation's receivedAt means the body is new (or we,
 *    or another copy of our generation, remembered it already); any other means the body was
 *    accepted by an earlier generation, whose record has expired: this is a replay, the new
 *    generation is taken back (record-transitions.ts, forgetReplay) and the delivery is
 *    answered as a duplicate, with no effect.
 * A function that dies between its claim and its memory write leaves a record that sent
 * nothing and kept no payload: its work cannot run until a copy arrives, and that copy writes
 * the memory first. So every body whose work ran is remembered.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';

/** The memory item's sort key. */
export const SEEN_SK = 'SEEN';

/** The memory item's partition key: one per route and body. */
export function seenPk(route: string, fingerprint: string): string {
  return `SEEN#${route}#${fingerprint}`;
}

/** The memory item's key. */
export function seenKey(route: string, fingerprint: string): { pk: string; sk: string } {
  return { pk: seenPk(route, fingerprint), sk: SEEN_SK };
}

/**
 * Remembers the body for the generation created at `receivedAt`, unless an earlier one is
 * remembered already; returns the item as it stands after the write (ALL_NEW), whose
 * `firstAt` tells which generation the body belongs to.
 */
export function rememberBody(p: { receivedAt: number }): Required<Pick<UpdateCommandInput, 'UpdateExpression' | 'ExpressionAttributeValues' | 'ReturnValues'>> {
  return {
    UpdateExpression: 'SET firstAt = if_not_exists(firstAt, :receivedAt)',
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt },
    ReturnValues: 'ALL_NEW',
  };
}
