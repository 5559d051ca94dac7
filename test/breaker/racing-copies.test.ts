/**
 * A copy that arrived before the first answer but whose claim landed after it (the SDK retried
 * the claim through a throttle while the first delivery answered, or its function started cold
 * and fetched its secrets first) is no sender's repeat: its
 * hit is taken out of the count (record-transitions.ts, excuseRacingCopy), so neither it nor a
 * later copy counts it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb } from '../support/ambiguous-dynamodb.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

const ROUTE = 'stripe';
const isClaim = (input: Readonly<Record<string, unknown>>): boolean => String(input.UpdateExpression).includes('ADD hits');

describe('a copy whose retried claim lands after the first answer', () => {
  it('is not counted, and no later copy counts it', async () => {
    // Prepare: the second claim's first attempt is throttled; the SDK retries it.
    const plain = localDynamoClient(inject('dynamoEndpoint'));
    const table = await createEventsTable(plain, `events-rc-${randomUUID().slice(0, 8)}`);
    const faulty = localDynamoClient(inject('dynamoEndpoint'));
    let claims = 0;
    ambiguousDynamoDb(faulty, (name, input, attempt) => {
      if (name !== 'UpdateItemCommand' || !isClaim(input)) return 'ok';
      if (attempt === 1) claims++;
      return claims === 2 && attempt === 1 ? 'throttle' : 'ok';
    });
    const clock = { now: Date.now() };
    const fx = await ingestFixture({ tableName: table, store: new DynamoDbEventStore(faulty, table), now: () => clock.now });
    const key = uniqueKey(ROUTE);
    const deliver = () => fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }));
    const repeats = async (): Promise<number | undefined> => {
      const out = await documentClient(plain).send(
        new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }),
      );
      return out.Item === undefined ? undefined : fromRecordItem(out.Item).repeats;
    };
    // Act: the first delivery; a copy that arrived at the same moment, its claim retried; a real repeat 30 s later.
    expect((await deliver()).statusCode).toBe(202);
    expect((await deliver()).statusCode).toBe(202);
    const afterRacing = await repeats();
    clock.now += 30_000;
    expect((await deliver()).statusCode).toBe(202);
    // Assess: the racing copy counted nothing; the repeat is the first.
    expect(claims).toBe(3);
    expect(afterRacing).toBe(0);
    expect(await repeats()).toBe(1);
  });

  it('is not counted when it claimed in one attempt after the mark, but its function started before the answer', async () => {
    // Prepare: copies whose handlers start (and read the clock) before the first copy answers,
    // and claim after its mark: a cold start, a Secrets Manager fetch.
    const plain = localDynamoClient(inject('dynamoEndpoint'));
    const table = await createEventsTable(plain, `events-rc-${randomUUID().slice(0, 8)}`);
    const clock = { now: Date.now() };
    const fx = await ingestFixture({ tableName: table, now: () => clock.now });
    const key = uniqueKey(ROUTE);
    const deliver = () => fx.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor(clock.now / 1000) }));
    const item = async () =>
      (await documentClient(plain).send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
    // Act: the first copy answers; 4 copies that arrived with it claim after its mark, at once.
    expect((await deliver()).statusCode).toBe(202);
    const answers = await Promise.all(Array.from({ length: 4 }, deliver));
    const racing = await item();
    // then a real repeat, 30 s after the answer
    clock.now += 30_000;
    expect((await deliver()).statusCode).toBe(202);
    // Assess: 5 hits, none of the racing copies counted, the repeat is the first.
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202]);
    expect(racing === undefined ? undefined : fromRecordItem(racing).repeats).toBe(0);
    const last = await item();
    expect(last?.hits).toBe(6);
    expect(last === undefined ? undefined : fromRecordItem(last).repeats).toBe(1);
  });
});
