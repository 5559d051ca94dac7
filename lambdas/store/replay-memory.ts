/**
 * The replay memory (docs/architecture.md#replay-memory): one item per route and body whose work
 * a worker took, `pk = SEEN#<route>#<SHA-256 of the body>`, `sk = SEEN`, `takenAt` = receivedAt of
 * the earliest generation taken, and no expiry. The executor writes it after its lease and before
 * the action (`rememberTaken`); the ingest reads it, strongly consistent, when it creates a
 * generation and before a duplicate keeps a payload.
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
