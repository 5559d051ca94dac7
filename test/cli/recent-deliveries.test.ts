/**
 * The console's deliveries page: one route's FAILED records come from the sparse failed index,
 * newest first and exact across its shards page after page, however much other work the day
 * holds. Records written to DynamoDB Local as the executor's fail writes them (failedIndexKeys).
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { recentDeliveries } from '../../cli/operations/recent-deliveries.ts';
import type { DeliveryFilter } from '../../cli/operations/recent-deliveries.ts';
import type { Target } from '../../cli/target.ts';
import { acceptedAnswer } from '../../lambdas/domain/event-record.ts';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { failedIndexKeys } from '../../lambdas/store/record-conditions.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';

const T0 = Date.UTC(2026, 11, 7, 9, 0, 0);

async function tableWith(records: readonly (EventRecord & { lastError?: string })[]): Promise<Target> {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const eventsTable = await createEventsTable(dynamo, `recent-${randomUUID().slice(0, 8)}`);
  const doc = documentClient(dynamo);
  for (const r of records) {
    const failed = r.status === 'FAILED' ? failedIndexKeys(r.route, r.key, r.receivedAt) : {};
    await doc.send(new PutCommand({ TableName: eventsTable, Item: { ...toRecordItem(r), ...failed, ...(r.lastError === undefined ? {} : { lastError: r.lastError }) } }));
  }
  return { dynamo, eventsTable } as unknown as Target;
}

function record(route: string, n: number, status: 'FAILED' | 'COMPLETED', lastError?: string): EventRecord & { lastError?: string } {
  const key = `${route}-${String(n).padStart(3, '0')}`;
  return {
    route, key, status, fingerprint: 'f'.repeat(64), receivedAt: T0 + n * 60_000, expiresAt: Math.floor(T0 / 1000) + 86_400 * 35,
    answer: acceptedAnswer(route, key), hits: 1, attempts: 1, runs: 1, redrives: 0, ...(lastError === undefined ? {} : { lastError }),
  };
}

const day: DeliveryFilter = { route: 'pay', status: 'FAILED', sinceMs: T0 - 3_600_000, untilMs: T0 + 86_400_000 };

describe("the deliveries page's FAILED filter", () => {
  it('reads one route\'s FAILED records page by page, newest first, each once, from the failed index alone', async () => {
    // Prepare: 11 FAILED of pay (over the index's shards), and other work that must cost no read.
    const failed = Array.from({ length: 11 }, (_, n) => record('pay', n * 3, 'FAILED', n % 2 === 0 ? 'card declined' : 'timeout'));
    const other = [...Array.from({ length: 30 }, (_, n) => record('pay', n * 3 + 1, 'COMPLETED')), ...Array.from({ length: 5 }, (_, n) => record('ship', n, 'FAILED'))];
    const target = await tableWith([...failed, ...other]);
    // Act
    const pages: { keys: string[]; read: number }[] = [];
    let after: string | undefined;
    do {
      const page = await recentDeliveries(target, day, { limit: 3, ...(after === undefined ? {} : { after }) });
      pages.push({ keys: page.rows.map((r) => r.key), read: page.read });
      expect(page.rows.every((r) => r.status === 'FAILED' && r.route === 'pay')).toBe(true);
      after = page.next;
    } while (after !== undefined && pages.length < 10);
    // Assess
    expect(pages.flatMap((p) => p.keys)).toEqual(failed.map((r) => r.key).reverse());
    expect(pages.slice(0, -1).every((p) => p.keys.length === 3)).toBe(true);
    expect(pages.reduce((n, p) => n + p.read, 0)).toBeLessThanOrEqual(failed.length * 3);
  });

  it('stays exact when the read budget cuts its shards short: every matching record once, newest first, over the pages', async () => {
    const failed = Array.from({ length: 64 }, (_, n) => record('pay', n, 'FAILED', n % 5 === 0 ? 'card declined' : 'timeout'));
    const target = await tableWith(failed);
    const keys: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 40; page++) {
      const got = await recentDeliveries(target, { ...day, errorContains: 'declined' }, { limit: 2, readBudget: 8, ...(after === undefined ? {} : { after }) });
      keys.push(...got.rows.map((r) => r.key));
      after = got.next;
      if (after === undefined) break;
    }
    expect(keys).toEqual(failed.filter((r) => r.lastError === 'card declined').map((r) => r.key).reverse());
  });

  it('keeps the key prefix and error text filters, and the time range', async () => {
    const failed = Array.from({ length: 8 }, (_, n) => record('pay', n, 'FAILED', n < 4 ? 'card declined' : 'timeout'));
    const target = await tableWith(failed);
    const declined = await recentDeliveries(target, { ...day, errorContains: 'declined' }, { limit: 50 });
    expect(declined.rows.map((r) => r.key)).toEqual(['pay-003', 'pay-002', 'pay-001', 'pay-000']);
    expect(declined.next).toBeUndefined();
    const prefixed = await recentDeliveries(target, { ...day, keyPrefix: 'pay-00' }, { limit: 50 });
    expect(prefixed.rows).toHaveLength(8);
    const band = await recentDeliveries(target, { ...day, sinceMs: T0 + 2 * 60_000, untilMs: T0 + 5 * 60_000 }, { limit: 50 });
    expect(band.rows.map((r) => r.key)).toEqual(['pay-004', 'pay-003', 'pay-002']);
  });
});
