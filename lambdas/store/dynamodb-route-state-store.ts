/**
 * Route state items on the events table: pk ROUTE#<route>, sk STATE. No item means active.
 * Pause and resume carry the write nonce (conditional-write.ts): a pause whose answer was lost
 * and whose retry met itself is still this caller's pause, so its notice is not lost.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PauseRequest, RouteState, RouteStateStore } from '../ports/route-state-store.ts';
import { WRITE_ID, WRITE_ID_VALUE, conditionalPut, conditionalUpdate, newWriteId } from './conditional-write.ts';
import { documentClient } from './dynamodb-event-store.ts';

export const ROUTE_STATE_SK = 'STATE';

export function routeStatePk(route: string): string {
  return `ROUTE#${route}`;
}

export class DynamoDbRouteStateStore implements RouteStateStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = documentClient(client);
    this.#table = tableName;
  }

  async get(route: string): Promise<RouteState> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: routeStatePk(route), sk: ROUTE_STATE_SK }, ConsistentRead: true }),
    );
    const item = out.Item;
    if (item === undefined) return { route, state: 'active' };
    return {
      route,
      state: item.state === 'paused' ? 'paused' : 'active',
      ...(typeof item.reason === 'string' ? { reason: item.reason } : {}),
      ...(typeof item.key === 'string' ? { key: item.key } : {}),
      ...(typeof item.pausedAt === 'number' ? { pausedAt: item.pausedAt } : {}),
      ...(typeof item.pausedBy === 'string' ? { pausedBy: item.pausedBy } : {}),
      ...(typeof item.resumedAt === 'number' ? { resumedAt: item.resumedAt } : {}),
      ...(typeof item.repeats === 'number' ? { repeats: item.repeats } : {}),
      ...(typeof item.threshold === 'number' ? { threshold: item.threshold } : {}),
      ...(typeof item.whatNow === 'string' ? { whatNow: item.whatNow } : {}),
    };
  }

  async pause(route: string, request: PauseRequest): Promise<boolean> {
    const out = await conditionalPut(this.#doc, {
      TableName: this.#table,
      Item: {
        pk: routeStatePk(route),
        sk: ROUTE_STATE_SK,
        route,
        state: 'paused',
        reason: request.reason,
        ...(request.key === undefined ? {} : { key: request.key }),
        pausedAt: request.at,
        pausedBy: request.by,
        ...(request.repeats === undefined ? {} : { repeats: request.repeats }),
        ...(request.threshold === undefined ? {} : { threshold: request.threshold }),
        ...(request.whatNow === undefined ? {} : { whatNow: request.whatNow }),
        [WRITE_ID]: newWriteId(),
      },
      // One pause event per pause: concurrent trips race here and one wins.
      ConditionExpression: 'attribute_not_exists(pk) OR #state <> :paused',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':paused': 'paused' },
    });
    return out.ok;
  }

  async resume(route: string, at: number): Promise<boolean> {
    const out = await conditionalUpdate(this.#doc, {
      TableName: this.#table,
      Key: { pk: routeStatePk(route), sk: ROUTE_STATE_SK },
      ConditionExpression: '#state = :paused',
      UpdateExpression: `SET #state = :active, resumedAt = :at, ${WRITE_ID} = ${WRITE_ID_VALUE}`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':paused': 'paused', ':active': 'active', ':at': at, [WRITE_ID_VALUE]: newWriteId() },
    });
    return out.ok;
  }
}
