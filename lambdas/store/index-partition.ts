/**
 * One partition of one of the events table's indexes, read page by page: the Query that the
 * reconciler's window, parked and stranded records and the expiry sweep each make with the
 * partition key alone.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** An index of the events table, by name and partition key attribute (table-schema.ts). */
export interface IndexOfTable {
  readonly name: string;
  readonly partitionKey: string;
}

/** One page of a partition: its items, and whether more follow. */
export interface PartitionPage {
  readonly items: readonly Record<string, unknown>[];
  readonly more: boolean;
}

/**
 * The pages of `partition` on `index`, from just after `startKey` (the table's and the index's
 * keys of the last item read), `limit` items a page at most (DynamoDB's 1 MB a page without one).
 */
export async function* indexPartitionPages(
  doc: DynamoDBDocumentClient,
  table: string,
  index: IndexOfTable,
  partition: string,
  options: { readonly startKey?: Record<string, unknown>; readonly limit?: number } = {},
): AsyncIterable<PartitionPage> {
  let startKey = options.startKey;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: index.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': index.partitionKey },
        ExpressionAttributeValues: { ':pk': partition },
        ExclusiveStartKey: startKey,
        ...(options.limit === undefined ? {} : { Limit: options.limit }),
      }),
    );
    startKey = page.LastEvaluatedKey;
    yield { items: page.Items ?? [], more: startKey !== undefined };
  } while (startKey !== undefined);
}
