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
import { CLOCK_SKEW_SECONDS, INGEST_TIMEOUT_SECONDS } from '../../lambdas/config/route-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';

const ROUTE = 'stripe';
const isClaim = (input: Readonly<Record<string, unknown>>): boolean => String(input.UpdateExpression).includes('ADD hits');

describe('a copy claimed after the lease started the count, on clocks at both ends of the bound', () => {
  it('is not counted when it started before the first answer, which left near the end of the ingest\'s timeout', async () => {
    // Prepare: the first delivery's function reads a clock CLOCK_SKEW_SECONDS slow, the copy's one as
    // fast. The first's send takes 3.8 s of its 4 s; meanwhile a worker leases its message, and
    // the copy starts and claims: by true time before the first answer, by the two clocks 13.8 s
    // after the first claim, inside ANSWER_MARGIN_MS (14 s: the ingest's timeout and twice the bound).
    const plain = localDynamoClient(inject('dynamoEndpoint'));
    const table = await createEventsTable(plain, `events-rc-${randomUUID().slice(0, 8)}`);
    const bound = CLOCK_SKEW_SECONDS * 1000;
    const clock = { now: Date.now() };
    const worker = await ingestFixture({ tableName: table, now: () => clock.now });
    const key = uniqueKey(ROUTE);
    const copy = await ingestFixture({ tableName: table, now: () => clock.now + bound });
    let racing: number | undefined;
    const real = new SqsWorkQueue(worker.sqs, worker.queueUrl);
    const slowSend: WorkQueue = {
      send: async (message: WorkMessage) => {
        await real.send(message);
        await worker.takeWork();
        clock.now += INGEST_TIMEOUT_SECONDS * 1000 - 200;
        racing = (await copy.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor((clock.now + bound) / 1000) }))).statusCode;
      },
    };
    const first = await ingestFixture({ tableName: table, queue: slowSend, now: () => clock.now - bound });
    // Act
    const answer = await first.invoke(signedDelivery(ROUTE, key, { nowSeconds: Math.floor((clock.now - bound) / 1000) }));
    // Assess: both 202; the copy raced the answer and is no repeat.
    expect([answer.statusCode, racing]).toEqual([202, 202]);
    const item = (await documentClient(plain).send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }))).Item;
    expect(item?.hits).toBe(2);
    expect(item === undefined ? undefined : fromRecordItem(item).repeats).toBe(0);
  });
});

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
    // Act: the first delivery, its work taken by a worker (the lease starts the count); a copy that
    // arrived at the same moment, its claim retried; a real repeat 30 s later.
    expect((await deliver()).statusCode).toBe(202);
    await fx.takeWork();
    expect((await deliver()).statusCode).toBe(202);
    const afterRacing = await repeats();
    clock.now += 30_000;
    expect((await deliver()).statusCode).toBe(202);
    // Assess: the racing copy counted nothing; the repeat is the first.
    expect(claims).toBe(3);
    expect(afterRacing).toBe(0);
    expect(await repeats()).toBe(1);
  });

  it('is not counted when it claimed in one attempt after the lease started the count, but arrived before the answer', async () => {
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
    // Act: the first copy answers and a worker takes its work; 4 copies that arrived with it claim after that lease, at once.
    expect((await deliver()).statusCode).toBe(202);
    expect(await fx.takeWork()).toBe(1);
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
