import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

describe('the ingest handler and expired records', () => {
  it('treats a record whose expiry has passed, but which TTL has not yet deleted, as absent', async () => {
    // Prepare: a clock we move past the route's TTL. DynamoDB's TTL deletes days late,
    // so the old record is still in the table when the copy arrives.
    const ttl = SCHEME_ROUTES.find((r) => r.name === 'stripe')?.ttlSeconds ?? 35 * 86_400;
    let now = Date.now();
    const fx = await ingestFixture({ now: () => now });
    const key = uniqueKey('stripe');
    const first = await fx.invoke(signedDelivery('stripe', key, { nowSeconds: Math.floor(now / 1000) }));
    // Act
    now += (ttl + 1) * 1000;
    const later = await fx.invoke(signedDelivery('stripe', key, { nowSeconds: Math.floor(now / 1000) }));
    // Assess
    expect(first.statusCode).toBe(202);
    expect(later.statusCode).toBe(202);
    expect(later.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await fx.messagesInQueue()).toBe(2);
    const stored = await documentClient(fx.ddb).send(
      new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk('stripe', key), sk: RECORD_SK } }),
    );
    expect(stored.Item?.receivedAt).toBe(now);
    expect(stored.Item?.hits).toBe(1);
  });

  it('still replays a copy that arrives one second before the expiry', async () => {
    const ttl = 35 * 86_400;
    const firstAt = Date.now();
    let now = firstAt;
    const fx = await ingestFixture({ now: () => now });
    const key = uniqueKey('stripe');
    await fx.invoke(signedDelivery('stripe', key, { nowSeconds: Math.floor(now / 1000) }));
    now += (ttl - 1) * 1000;
    const later = await fx.invoke(signedDelivery('stripe', key, { nowSeconds: Math.floor(now / 1000) }));
    expect(later.headers?.['idempotent-replayed']).toBe('true');
    const stored = await documentClient(fx.ddb).send(
      new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk('stripe', key), sk: RECORD_SK } }),
    );
    expect(stored.Item?.receivedAt).toBe(firstAt);
    expect(stored.Item?.hits).toBe(2);
  });
});
