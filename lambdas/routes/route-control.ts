/**
 * Operator verbs on routes: list, pause, resume. Resuming re-enqueues every parked record
 * of the route, found through the sparse `parked` index with Query, never Scan.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { workMessageOf } from '../domain/event-record.ts';
import type { RouteState } from '../ports/route-state-store.ts';
import { SqsWorkQueue } from '../queue/sqs-work-queue.ts';
import { documentClient } from '../store/dynamodb-event-store.ts';
import { parkedPartition } from '../store/dynamodb-execution-store.ts';
import { DynamoDbReconcilerStore } from '../store/dynamodb-reconciler-store.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';
import { fromRecordItem } from '../store/record-item.ts';
import { EVENTS_TABLE } from '../store/table-schema.ts';

export interface RouteControlOptions {
  readonly dynamo: DynamoDBClient;
  readonly eventsTable: string;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly config: ResolvedConfig;
  readonly now?: () => number;
}

export interface ResumeResult {
  /** False when the route was not paused; parked leftovers are re-enqueued all the same. */
  readonly resumed: boolean;
  readonly reenqueued: number;
}

export interface RouteControl {
  list(): Promise<RouteState[]>;
  pause(route: string, reason?: string): Promise<boolean>;
  resume(route: string, onProgress?: (reenqueued: number) => void): Promise<ResumeResult>;
}

/** @throws Error naming the route when it is not in the configuration */
export function createRouteControl(options: RouteControlOptions): RouteControl {
  const now = options.now ?? Date.now;
  const doc = documentClient(options.dynamo);
  const states = new DynamoDbRouteStateStore(options.dynamo, options.eventsTable);
  const queue = new SqsWorkQueue(options.sqs, options.queueUrl);
  const records = new DynamoDbReconcilerStore(options.dynamo, options.eventsTable);
  const known = (route: string): void => {
    if (!options.config.routes.some((r) => r.name === route)) {
      throw new Error(`route "${route}" is not configured; configured routes: ${options.config.routes.map((r) => r.name).join(', ')}`);
    }
  };

  return {
    list: () => Promise.all(options.config.routes.map((r) => states.get(r.name))),
    pause: (route, reason = 'paused by an operator') => {
      known(route);
      return states.pause(route, { reason, at: now(), by: 'operator' });
    },
    async resume(route, onProgress) {
      known(route);
      const resumed = await states.resume(route, now());
      const index = EVENTS_TABLE.parkedIndex;
      let reenqueued = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new QueryCommand({
            TableName: options.eventsTable,
            IndexName: index.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': index.partitionKey },
            ExpressionAttributeValues: { ':pk': parkedPartition(route) },
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) {
          const record = fromRecordItem(item);
          // Unpark first, conditionally: of two concurrent resumes, one sends each message.
          if (!(await records.unpark(record, now()))) continue;
          // If this send fails the record is RECEIVED with no message: the reconciler re-enqueues it.
          await queue.send(workMessageOf(record));
          reenqueued++;
          onProgress?.(reenqueued);
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
      return { resumed, reenqueued };
    },
  };
}
