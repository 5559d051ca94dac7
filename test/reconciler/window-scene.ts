/**
 * A window set by hand for the reconciler's scale tests: its own tables, records and ledger
 * entries written straight to them (BatchWriteItem), a store that reads small pages, a ledger
 * that hands its entries back in small pages, and a work queue that counts what each record
 * was sent. The clock is the test's: it moves one millisecond each time it is read, so a
 * budget ends after a fixed amount of work, the same on every machine.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import { hourBucket } from '../../lambdas/domain/event-record.ts';
import type { EventRecord, RecordStatus, WorkMessage } from '../../lambdas/domain/event-record.ts';
import { ledgerPages } from '../../lambdas/ledger/ledger.ts';
import type { Ledger, LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import type { ReconcileDeps } from '../../lambdas/reconciler/reconcile.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { LEDGER_TABLE } from '../../lambdas/store/table-schema.ts';
import { createEventsTable, createLedgerTable, localDynamoClient } from '../../local/aws-clients.ts';
import { sampleRecord } from '../support/event-records.ts';
import { testConfig } from '../support/test-config.ts';

export const HOUR = 3_600_000;
/** The scene's "now" at its start: records lie hours before it. */
export const T0 = Date.UTC(2026, 10, 29, 12, 0);

export const config = resolveConfig(
  testConfig([
    { name: 'pay', signature: { scheme: 'standard-webhooks' }, secretName: 't/pay', action: 'payout', actionTimeSeconds: 5 },
    { name: 'notify', signature: { scheme: 'stripe' }, secretName: 't/notify', action: 'notify', actionTimeSeconds: 5 },
  ]),
);

/** A ledger that hands the real one's entries back `size` at a time: many pages from a few entries. */
export function smallPages(ledger: Ledger, size: number): Ledger & { lists: number } {
  const paged = {
    lists: 0,
    post: ledger.post.bind(ledger),
    reverse: ledger.reverse.bind(ledger),
    async *listWindow(fromMs: number, toMs: number): AsyncIterable<readonly LedgerEntry[]> {
      paged.lists++;
      for await (const page of ledgerPages(ledger.listWindow(fromMs, toMs))) {
        for (let i = 0; i < page.length; i += size) yield page.slice(i, i + size);
      }
    },
  };
  return paged;
}

export interface Scene {
  readonly eventsTable: string;
  readonly ledger: DynamoDbLedger;
  readonly store: DynamoDbReconcilerStore;
  /** Sends per `route/key`. */
  readonly sent: Map<string, number>;
  readonly clock: { t: number };
  deps(overrides?: Partial<ReconcileDeps>): ReconcileDeps;
  record(route: string, key: string, receivedAt: number, status: RecordStatus, extra?: Partial<EventRecord>): Record<string, unknown>;
  entry(route: string, key: string, postedAt: number, attempt?: number): Record<string, unknown>;
  writeRecords(items: readonly Record<string, unknown>[]): Promise<void>;
  writeEntries(items: readonly Record<string, unknown>[]): Promise<void>;
  /** The posted and reversed entries of a key. */
  statuses(route: string, key: string): Promise<Record<string, string>>;
}

export async function scene(options: { pageLimit?: number; ledgerPage?: number } = {}): Promise<Scene> {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const suffix = randomUUID().slice(0, 8);
  const eventsTable = await createEventsTable(dynamo, `events-s-${suffix}`);
  const ledgerTable = await createLedgerTable(dynamo, `ledger-s-${suffix}`);
  const doc = documentClient(dynamo);
  const ledger = new DynamoDbLedger(dynamo, ledgerTable);
  const store = new DynamoDbReconcilerStore(dynamo, eventsTable, options.pageLimit === undefined ? {} : { pageLimit: options.pageLimit });
  const sent = new Map<string, number>();
  const clock = { t: T0 };
  const write = async (table: string, items: readonly Record<string, unknown>[]): Promise<void> => {
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          let pending = (batches[next++] ?? []).map((Item) => ({ PutRequest: { Item } }));
          while (pending.length > 0) {
            const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
            pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
          }
        }
      }),
    );
  };
  return {
    eventsTable,
    ledger,
    store,
    sent,
    clock,
    deps: (overrides = {}) => ({
      store,
      ledgers: new Map([['payout', options.ledgerPage === undefined ? ledger : smallPages(ledger, options.ledgerPage)]]),
      queue: {
        send: (m: WorkMessage) => {
          const k = `${m.route}/${m.key}`;
          sent.set(k, (sent.get(k) ?? 0) + 1);
          return Promise.resolve();
        },
      },
      routes: new Map(config.routes.map((r) => [r.name, r])),
      now: () => ++clock.t,
      ...overrides,
    }),
    record: (route, key, receivedAt, status, extra = {}) => {
      const item = toRecordItem(sampleRecord(route, key, receivedAt, { status, ...extra }));
      if (status === 'COMPLETED') item.completedAt = receivedAt + 2_000;
      return item;
    },
    entry: (route, key, postedAt, attempt) => {
      const entryId = `ent_${key}_${postedAt}`;
      return {
        entryId,
        route,
        idempotencyKey: key,
        amount: 1,
        currency: 'EUR',
        postedAt,
        status: 'posted',
        ...(attempt === undefined ? {} : { attempt }),
        [LEDGER_TABLE.byHourIndex.partitionKey]: hourBucket(postedAt),
        [LEDGER_TABLE.byHourIndex.sortKey]: `${new Date(postedAt).toISOString()}#${entryId}`,
      };
    },
    writeRecords: (items) => write(eventsTable, items),
    writeEntries: (items) => write(ledgerTable, items),
    statuses: async (route, key) => {
      const out: Record<string, string> = {};
      for await (const page of ledger.listWindow(T0 - 48 * HOUR, T0 + HOUR)) {
        for (const e of page) if (e.route === route && e.idempotencyKey === key) out[e.entryId] = e.status;
      }
      return out;
    },
  };
}
