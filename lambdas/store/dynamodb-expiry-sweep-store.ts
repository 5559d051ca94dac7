/**
 * The sweep's reads and deletes on the events table (lambdas/reconciler/expiry-sweep.ts says
 * which items and when). Records are found through the byTime index, whose copies project
 * `expiresAt`; a record's own items (the record and its log items) through a Query of its
 * partition, read strongly consistent, so a delete is decided on the item as it stands.
 *
 * Every delete is one conditional DeleteItem, `expiresAt = :seen AND expiresAt < :cutoff`: an
 * item renewed (its expiry moved on) or re-claimed (a new generation, a new expiry) since it was
 * read is refused and kept. Not BatchWriteItem: its delete requests take no condition
 * (DynamoDB API Reference, BatchWriteItem: "You can't specify conditions on individual put and
 * delete requests"); not TransactWriteItems: MRSC tables refuse transactions (DynamoDB Developer
 * Guide, "How DynamoDB global tables work", multi-Region strong consistency).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BucketPage, ExpirySweepStore, ExpiringItem, IndexedRecord } from '../ports/reconciler-store.ts';
import { documentClient } from './dynamodb-event-store.ts';
import { RECONCILER_CURSOR_KEY } from './record-keys.ts';
import { indexPartitionPages } from './index-partition.ts';
import { EVENTS_TABLE } from './table-schema.ts';

/** Index copies a bucket page holds at most (as the window reads: dynamodb-reconciler-store.ts, PAGE_ITEMS). */
const PAGE_ITEMS = 1_000;

function expiringOf(item: Record<string, unknown>): ExpiringItem | undefined {
  const { pk, sk, expiresAt } = item;
  return typeof pk === 'string' && typeof sk === 'string' && typeof expiresAt === 'number' ? { pk, sk, expiresAt } : undefined;
}

export class DynamoDbExpirySweepStore implements ExpirySweepStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #pageLimit: number;

  /** @param options.pageLimit index copies a bucket Query returns at most. @default PAGE_ITEMS */
  constructor(client: DynamoDBClient, tableName: string, options: { readonly pageLimit?: number } = {}) {
    this.#doc = documentClient(client);
    this.#table = tableName;
    this.#pageLimit = options.pageLimit ?? PAGE_ITEMS;
  }

  async *readBucket(bucket: string, shard: number, after?: IndexedRecord): AsyncIterable<BucketPage> {
    const index = EVENTS_TABLE.byTimeIndex;
    const gsi1pk = `T#${bucket}#${shard}`;
    const startKey = after === undefined ? undefined : { pk: after.pk, sk: after.sk, [index.partitionKey]: gsi1pk, [index.sortKey]: after.gsi1sk };
    for await (const page of indexPartitionPages(this.#doc, this.#table, index, gsi1pk, { ...(startKey === undefined ? {} : { startKey }), limit: this.#pageLimit })) {
      const records: IndexedRecord[] = [];
      for (const item of page.items) {
        const expiring = expiringOf(item);
        const gsi1sk: unknown = item[index.sortKey];
        if (expiring !== undefined && typeof gsi1sk === 'string') records.push({ ...expiring, gsi1sk });
      }
      yield { records, more: page.more };
    }
  }

  async readPartition(pk: string): Promise<ExpiringItem[]> {
    return this.#query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true });
  }

  async readKeyChunks(): Promise<ExpiringItem[]> {
    // The projection keeps the answer small; the read is metered on the chunks' whole size all the same (a few MB at most).
    return this.#query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :keys)',
      ExpressionAttributeValues: { ':pk': RECONCILER_CURSOR_KEY.pk, ':keys': 'KEYS#' },
      ProjectionExpression: 'pk, sk, expiresAt',
    });
  }

  async #query(input: Pick<ConstructorParameters<typeof QueryCommand>[0], 'KeyConditionExpression' | 'ExpressionAttributeValues' | 'ConsistentRead' | 'ProjectionExpression'>): Promise<ExpiringItem[]> {
    const out: ExpiringItem[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.#doc.send(new QueryCommand({ TableName: this.#table, ...input, ExclusiveStartKey: startKey }));
      for (const item of page.Items ?? []) {
        const expiring = expiringOf(item);
        if (expiring !== undefined) out.push(expiring);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return out;
  }

  /*
   *   t0 sweep reads expiresAt = E (< cutoff) | t1 a transition moves it to E' | t2 delete: E' != E, refused -> kept
   *   t0 sweep reads E | t1 the key is re-claimed (a new generation, expiry E'') | t2 refused -> kept
   *   t0 delete commits, its answer is lost | t1 the SDK's retry: nothing there, refused -> gone (ours)
   */
  async deleteExpired(item: ExpiringItem, cutoffSeconds: number): Promise<'deleted' | 'kept' | 'gone'> {
    try {
      await this.#doc.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { pk: item.pk, sk: item.sk },
          ConditionExpression: 'expiresAt = :seen AND expiresAt < :cutoff',
          ExpressionAttributeValues: { ':seen': item.expiresAt, ':cutoff': cutoffSeconds },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'deleted';
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      return err.Item === undefined ? 'gone' : 'kept';
    }
  }
}
