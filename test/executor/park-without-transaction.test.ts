/**
 * Parking with no transaction (DynamoDbExecutionStore.park): MRSC global tables refuse
 * TransactWriteItems, so the park is one conditional update and the route's state is read after
 * it. These specs run on DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { sampleRecord } from '../support/event-records.ts';

const table = (): string => inject('eventsTable');

async function scene() {
  const route = `park-${randomUUID().slice(0, 8)}`;
  const key = `k-${randomUUID()}`;
  const client = localDynamoClient(inject('dynamoEndpoint'));
  const doc = documentClient(client);
  const record = sampleRecord(route, key, Date.now() - 60_000);
  await doc.send(new PutCommand({ TableName: table(), Item: toRecordItem(record) }));
  const item = async (): Promise<Record<string, unknown>> =>
    (await doc.send(new GetCommand({ TableName: table(), Key: { pk: recordPk(route, key), sk: RECORD_SK }, ConsistentRead: true }))).Item ?? {};
  const park = () =>
    new DynamoDbExecutionStore(client, table()).park({
      route,
      key,
      receivedAt: record.receivedAt,
      nowMs: Date.now(),
      ttlSeconds: 35 * 86_400,
      payload: { body: record.body ?? '', bodyEncoding: 'utf8', headers: {} },
      fingerprint: record.fingerprint,
    });
  return { route, routes: new DynamoDbRouteStateStore(client, table()), item, park };
}

describe('parking a record of a paused route', () => {
  it('parks it while the route is still paused', async () => {
    // Prepare
    const s = await scene();
    await s.routes.pause(s.route, { reason: 'test', at: Date.now(), by: 'test' });
    // Act
    const parked = await s.park();
    // Assess
    expect(parked).toEqual({ kind: 'parked' });
    const item = await s.item();
    expect(item.status).toBe('PARKED');
    expect(typeof item.gsi2pk).toBe('string');
  });

  it('takes the record back when the route was resumed before the park landed, so no resume sweep can miss it', async () => {
    // Prepare: the worker saw the route paused; the resume and its sweep ran before its park.
    const s = await scene();
    await s.routes.pause(s.route, { reason: 'test', at: Date.now(), by: 'test' });
    await s.routes.resume(s.route, Date.now());
    // Act
    const parked = await s.park();
    // Assess: the caller leases and runs it; the record is RECEIVED again and out of the parked index.
    expect(parked).toEqual({ kind: 'route-active' });
    const item = await s.item();
    expect(item.status).toBe('RECEIVED');
    expect(item.gsi2pk).toBeUndefined();
  });

  it('takes back a record parked earlier once its route is active', async () => {
    // Prepare: parked while paused; the route resumed; another copy of its message arrives.
    const s = await scene();
    await s.routes.pause(s.route, { reason: 'test', at: Date.now(), by: 'test' });
    expect(await s.park()).toEqual({ kind: 'parked' });
    await s.routes.resume(s.route, Date.now());
    // Act
    const again = await s.park();
    // Assess
    expect(again).toEqual({ kind: 'route-active' });
    expect((await s.item()).status).toBe('RECEIVED');
  });
});
