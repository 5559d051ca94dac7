import { describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { recordPk } from '../../lambdas/store/record-keys.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

describe('the ingest handler under concurrent copies of a delivery', () => {
  it('turns 50 identical deliveries fired at once into 1 record, 1 message and 49 replays', async () => {
    // Prepare
    const fx = await ingestFixture();
    const key = uniqueKey('standard-webhooks');
    const delivery = signedDelivery('standard-webhooks', key);
    // Act
    const answers = await Promise.all(Array.from({ length: 50 }, () => fx.invoke(delivery)));
    // Assess
    const replays = answers.filter((a) => a.headers?.['idempotent-replayed'] === 'true');
    expect(answers.every((a) => a.statusCode === 202)).toBe(true);
    expect(replays).toHaveLength(49);
    expect(await fx.messagesInQueue()).toBe(1);
    const items = await documentClient(fx.ddb).send(
      new QueryCommand({
        TableName: fx.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': recordPk('standard-webhooks', key) },
      }),
    );
    expect(items.Items).toHaveLength(1);
    expect(items.Items?.[0]?.hits).toBe(50);
  });

  it('turns 20 keys x 10 concurrent copies into exactly 20 messages', async () => {
    const fx = await ingestFixture();
    const deliveries = Array.from({ length: 20 }, () => signedDelivery('stripe', uniqueKey('stripe')));
    const answers = await Promise.all(deliveries.flatMap((d) => Array.from({ length: 10 }, () => fx.invoke(d))));
    expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(200);
    expect(answers.filter((a) => a.headers?.['idempotent-replayed'] === 'true')).toHaveLength(180);
    expect(await fx.messagesInQueue()).toBe(20);
  });
});
