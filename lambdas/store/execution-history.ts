/**
 * A record's execution history, every attempt and repair: the log items of the attempts that
 * did not complete and of the reconciler's corrections, plus the attempt that completed,
 * which the completion wrote on the record itself instead of a log item of its own.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS } from '../domain/event-record.ts';
import { logSortKey } from './dynamodb-execution-store.ts';
import type { RecordItem } from './record-item.ts';
import { recordPk } from './record-keys.ts';

/**
 * The completing attempt of a record item, in the shape of a log item; undefined unless the
 * record completed (and did so with the attempt on the record: older records logged it as an item).
 */
export function completedAttemptOf(item: RecordItem): Record<string, unknown> | undefined {
  const { status, receivedAt, runs, claimedAt, completedAt, operationFingerprint, requestId, redrives } = item;
  if (status !== RECORD_STATUS.completed || typeof operationFingerprint !== 'string') return undefined;
  if (typeof receivedAt !== 'number' || typeof runs !== 'number' || typeof claimedAt !== 'number' || typeof completedAt !== 'number') {
    return undefined;
  }
  const entry = {
    receivedAt,
    kind: 'execution',
    attempt: runs,
    startedAt: claimedAt,
    endedAt: completedAt,
    outcome: 'completed',
    operationFingerprint,
    ...(typeof requestId === 'string' ? { requestId } : {}),
    ...(typeof redrives === 'number' && redrives > 0 ? { detail: { redrive: redrives } } : {}),
  };
  return { pk: item.pk, sk: logSortKey({ ...entry, kind: 'execution' }, 'record'), route: item.route, key: item.key, ...entry };
}

/** The log items of a key, with the record's completing attempt among them, in time order. */
export function historyOf(logItems: readonly Record<string, unknown>[], recordItem: RecordItem | undefined): Record<string, unknown>[] {
  const completed = recordItem === undefined ? undefined : completedAttemptOf(recordItem);
  const all = completed === undefined ? [...logItems] : [...logItems, completed];
  return all.sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : String(a.sk) > String(b.sk) ? 1 : 0));
}

/** Every log item of a key, page by page. */
export async function readLogItems(doc: DynamoDBDocumentClient, table: string, route: string, key: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :log)',
        ExpressionAttributeValues: { ':pk': recordPk(route, key), ':log': 'LOG#' },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}
