/**
 * `send --dup`'s wait on the local stack: a sender's copies after a lost acknowledgement come
 * after its timeout, by when a worker has taken the work, and only copies after that lease count
 * for the circuit breaker (docs/architecture.md#circuit-breaker). Polls the record until a worker
 * took it (or parked, deferred or lined it up, or the count runs already).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { RECORD_SK, recordPk } from '../lambdas/store/record-keys.ts';
import type { LocalEndpoints } from './endpoints-file.ts';
import { localDynamoClient } from './aws-clients.ts';

const POLL_MS = 25;

/** True once the record is taken, false when `withinMs` passed first. */
export async function workTaken(endpoints: LocalEndpoints, route: string, key: string, withinMs: number): Promise<boolean> {
  const client = localDynamoClient(endpoints.dynamoEndpoint);
  const until = performance.now() + withinMs;
  try {
    for (;;) {
      const out = await client.send(
        new GetItemCommand({ TableName: endpoints.eventsTable, Key: { pk: { S: recordPk(route, key) }, sk: { S: RECORD_SK } }, ConsistentRead: true }),
      );
      const item = out.Item;
      if (item !== undefined && (item.status?.S !== 'RECEIVED' || item.repeatBase !== undefined || item.deferrals !== undefined || item.waitingTurn !== undefined)) return true;
      if (performance.now() >= until) return false;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    client.destroy();
  }
}
