/**
 * The replay memory (protocol v3): what stops a captured delivery from paying again once its
 * record has expired, on the schemes that sign no timestamp (GitHub, Shopify, hmac-sha256;
 * domain/idempotency-key.ts, needsReplayMemory). Their signature covers the body alone, so a
 * captured body verifies for as long as its secret does: the 300 s tolerance window that
 * refuses old captures on the other schemes never applies. The record remembers the body
 * only for its TTL (35 days by default); the memory remembers it after that.
 *
 * One small item per body whose work a worker took, in the events table:
 *   pk = SEEN#<route>#<SHA-256 of the body>   sk = SEEN   takenAt = receivedAt of the earliest generation taken
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
 * What it remembers is that the body's work ran, not that a delivery of it arrived. The
 * executor writes it after its lease and before the action (`rememberTaken`,
 * `takenAt = if_not_exists(takenAt, :receivedAt)`: it never fails and never conflicts, and an
 * SDK retry of it reads the same value back, so it needs no nonce); a failed write fails the
 * run before any effect, as a retryable error. The ingest reads it (one strongly consistent
 * GetItem) when it creates a generation, and before a duplicate keeps a payload (the only ways
 * work of a record ever runs: a message, or a kept payload the reconciler re-sends): a
 * `takenAt` before this generation's receivedAt means an earlier generation's work ran and its
 * record has expired. This is a replay: the new generation is taken back
 * (record-transitions.ts, forgetReplay) and the delivery is answered as a duplicate, with no
 * effect. A body whose earlier generation never ran (its first function died between its
 * claim and its send, and no sender retried before the record expired) is new work: answered
 * as a duplicate, it would never run at all (the simulation found this, seed 64, when the
 * memory was written at the claim).
 *
 * Why a replay cannot slip through: a generation exists only once the previous one's record
 * expired (claimKey, claimExpiredKey), and no work of a record runs near its expiry (every wait
 * moves the expiry on by MESSAGE_COVER_SECONDS, and the synth refuses a TTL shorter than the
 * route's cover). A worker of the earlier generation writes `takenAt` after its lease and before
 * its effect, so by the time a later generation is claimed, every earlier generation whose work
 * ran is remembered, and the ingest's read sees it (DynamoDB's strongly consistent reads
 * "return the most up-to-date data, that reflects the updates from all prior write operations
 * that were successful", Developer Guide, "Read consistency").
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
 * Remembers that a worker took the body's work in the generation created at `receivedAt`,
 * unless an earlier generation's is remembered already.
 */
export function rememberTaken(p: { receivedAt: number }): Required<Pick<UpdateCommandInput, 'UpdateExpression' | 'ExpressionAttributeValues'>> {
  return {
    UpdateExpression: 'SET takenAt = if_not_exists(takenAt, :receivedAt)',
    ExpressionAttributeValues: { ':receivedAt': p.receivedAt },
  };
}

/**
 * The generation before `receivedAt` whose work a worker took, from the memory item as read;
 * undefined when none did. An item written before the memory recorded runs (protocol v3 as it
 * first stood) names the generation that claimed the body (`firstAt`) and no `takenAt`: it is
 * read as taken then, which errs towards refusing a replay, as it was read when it was written.
 */
export function takenBefore(item: Record<string, unknown> | undefined, receivedAt: number): number | undefined {
  const takenAt = item?.takenAt ?? item?.firstAt;
  return typeof takenAt === 'number' && takenAt < receivedAt ? takenAt : undefined;
}
