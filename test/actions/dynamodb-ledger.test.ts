/**
 * The package's DynamoDB ledger (`retryproof/actions`), on DynamoDB Local: posting and
 * reversing are idempotent, and a window is read through the byHour index page by page, the
 * next page asked for only when the last one was taken, so a day of any size is never held.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbLedger, LEDGER_STATUS, ledgerEntries } from '../../lambdas/actions/index.ts';
import type { LedgerEntry, NewLedgerEntry } from '../../lambdas/actions/index.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { createLedgerTable } from '../../local/aws-clients.ts';

const HOUR_MS = 3_600_000;
const REVERSAL = { reversalId: 'rev-1', reason: 'duplicate effect', at: 1 };

/** A client that counts the Queries it sends: what a window costs, and when. */
function countingClient(): { client: DynamoDBClient; queries: () => number } {
  let queries = 0;
  const client = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'QueryCommand') queries++;
      return next(args);
    },
    { step: 'initialize', name: 'countQueries' },
  );
  return { client, queries: () => queries };
}

describe('DynamoDbLedger', () => {
  let client: DynamoDBClient;
  let queries: () => number;
  let table: string;

  beforeAll(async () => {
    ({ client, queries } = countingClient());
    table = await createLedgerTable(client, `ledger-${randomUUID().slice(0, 8)}`);
  });

  afterAll(() => {
    client.destroy();
  });

  it('posts an entry once, whatever number of times the same run posts it, and refuses another entry under its id', async () => {
    // Prepare
    const ledger = new DynamoDbLedger(client, table);
    const entry: NewLedgerEntry = { route: 'pay', idempotencyKey: `k-${randomUUID()}`, amount: 1250, currency: 'EUR', postedAt: Date.UTC(2026, 11, 1, 10), attempt: 1 };
    // Act: the SDK's retry of a put whose answer was lost is a second post of the same entry.
    const first = await ledger.post(entry);
    const again = await ledger.post(entry);
    // Assess
    expect(again).toEqual(first);
    expect(first.entryId).toBe(`pay/${entry.idempotencyKey}#1`);
    const window = await ledgerEntries(ledger, Date.UTC(2026, 11, 1, 10), Date.UTC(2026, 11, 1, 11));
    expect(window.filter((e) => e.idempotencyKey === entry.idempotencyKey)).toHaveLength(1);
    // A second run's effect is an entry of its own: the key took effect twice, and shows it.
    expect((await ledger.post({ ...entry, attempt: 2 })).entryId).toBe(`pay/${entry.idempotencyKey}#2`);
    const clash = new DynamoDbLedger<NewLedgerEntry>(client, table, { entryIdOf: () => first.entryId });
    await expect(clash.post({ ...entry, idempotencyKey: 'another' })).rejects.toThrow(`ledger: entry ${first.entryId} is posted for pay/${entry.idempotencyKey}, not pay/another`);
  });

  it('reverses an entry once: a second reverse finds it reversed, an unknown one is not found, and undo runs once', async () => {
    // Prepare
    const undone: string[] = [];
    const ledger = new DynamoDbLedger(client, table, { undo: (e) => Promise.resolve(void undone.push(e.entryId)) });
    const posted = await ledger.post({ route: 'pay', idempotencyKey: `k-${randomUUID()}`, postedAt: Date.UTC(2026, 11, 1, 12), attempt: 1 });
    // Act
    const results = [await ledger.reverse(posted.entryId, REVERSAL), await ledger.reverse(posted.entryId, REVERSAL), await ledger.reverse('no-such-entry', REVERSAL)];
    // Assess
    expect(results).toEqual(['reversed', 'already-reversed', 'not-found']);
    expect(undone).toEqual([posted.entryId]);
    const [entry] = (await ledgerEntries(ledger, Date.UTC(2026, 11, 1, 12), Date.UTC(2026, 11, 1, 13))).filter((e) => e.entryId === posted.entryId);
    expect(entry).toMatchObject({ status: LEDGER_STATUS.reversed, reversalId: 'rev-1', reversalReason: 'duplicate effect' });
    // Without undo, one conditional write: the same three answers.
    const plain = new DynamoDbLedger(client, table);
    const other = await plain.post({ route: 'pay', idempotencyKey: `k-${randomUUID()}`, postedAt: Date.UTC(2026, 11, 1, 12) });
    expect([await plain.reverse(other.entryId, REVERSAL), await plain.reverse(other.entryId, REVERSAL), await plain.reverse('no-such-entry', REVERSAL)]).toEqual([
      'reversed',
      'already-reversed',
      'not-found',
    ]);
  });

  it('reads a day through the byHour index one page at a time: the next Query only once a page was taken, [from, to) exactly', async () => {
    // Prepare: a day of its own, 60 entries an hour, and the window's edges: one entry at its
    // start (in) and one at its end (out). At 330,000 entries a day (13,750 an hour) the same
    // loop reads about four 1 MB pages an hour, each alone in memory.
    const day = Date.UTC(2026, 10, 3);
    const route = `day-${randomUUID().slice(0, 8)}`;
    const writer = new DynamoDbLedger(client, table);
    const posts = Array.from({ length: 24 * 60 }, (_, i) => ({ route, idempotencyKey: `k${i}`, postedAt: day + i * 60_000 + 1 }));
    for (let i = 0; i < posts.length; i += 60) await Promise.all(posts.slice(i, i + 60).map((p) => writer.post(p)));
    await writer.post({ route, idempotencyKey: 'at-start', postedAt: day });
    await writer.post({ route, idempotencyKey: 'at-end', postedAt: day + 24 * HOUR_MS });
    const ledger = new DynamoDbLedger(client, table, { pageSize: 25 });
    // Act
    const before = queries();
    const pages = ledger.listWindow(day, day + 24 * HOUR_MS)[Symbol.asyncIterator]();
    const first = await pages.next();
    const afterFirst = queries() - before;
    const seen: LedgerEntry[] = [...(first.value as LedgerEntry[])];
    let largest = seen.length;
    let pageCount = 1;
    for (let page = await pages.next(); page.done !== true; page = await pages.next()) {
      largest = Math.max(largest, page.value.length);
      pageCount++;
      seen.push(...page.value);
    }
    // Assess
    expect(afterFirst).toBe(1);
    expect(largest).toBeLessThanOrEqual(25);
    const ours = seen.filter((e) => e.route === route);
    expect(ours).toHaveLength(24 * 60 + 1);
    expect(new Set(ours.map((e) => e.entryId)).size).toBe(ours.length);
    expect(ours.some((e) => e.idempotencyKey === 'at-start')).toBe(true);
    expect(ours.some((e) => e.idempotencyKey === 'at-end')).toBe(false);
    expect(pageCount).toBeGreaterThanOrEqual(Math.ceil((24 * 60) / 25));
    expect(queries() - before).toBeGreaterThanOrEqual(24 * 3);
    // The index keys stay in the table: an entry is what the Ledger contract says.
    expect(Object.keys(ours[0]!).sort()).toEqual(['entryId', 'idempotencyKey', 'postedAt', 'route', 'status']);
  });
});
