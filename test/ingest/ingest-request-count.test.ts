import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventStore, documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';
import { countRequests } from '../../local/request-counter.ts';

describe('DynamoDB requests per delivery, counted on the wire', () => {
  const table = inject('eventsTable');
  const uncounted = localDynamoClient(inject('dynamoEndpoint'));
  const item = async (key: string) =>
    (await documentClient(uncounted).send(new GetCommand({ TableName: table, Key: { pk: recordPk('stripe', key), sk: RECORD_SK } }))).Item ?? {};
  /** A worker takes the record, as the executor does on the work message. */
  const take = async (key: string): Promise<void> => {
    const receivedAt = (await item(key)).receivedAt as number;
    const lease = await new DynamoDbExecutionStore(uncounted, table).acquireLease({
      route: 'stripe',
      key,
      receivedAt,
      nowMs: Date.now(),
      leaseMs: 15_000,
      token: 'worker',
      maxAttempts: 5,
      startsCount: true,
    });
    expect(lease.kind).toBe('leased');
  };

  /** An ingest whose store's requests are counted, and a fresh stripe delivery for it. */
  const counted = async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const counter = countRequests(client);
    const fx = await ingestFixture({ store: new DynamoDbEventStore(client, table) });
    const key = uniqueKey('stripe');
    return { counter, fx, key, delivery: signedDelivery('stripe', key) };
  };

  it('makes 1 request for a new delivery (the claim), 1 for a duplicate and a conflict', async () => {
    // Prepare
    const { counter, fx, key, delivery } = await counted();
    // Act + Assess: new: the claim alone; the breaker's count starts at the worker's lease of the
    // message, so the ingest writes nothing for it
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect(counter.total()).toBe(1);
    expect(Object.fromEntries(counter.byOperation)).toEqual({ UpdateItemCommand: 1 });
    expect((await item(key)).repeatBase).toBeUndefined();
    // duplicate, a sender's retry after a worker took the work: the same write counts its hit and
    // returns the record, which shows the count running
    // (twice the clock bound after our answer: a copy sooner may have raced it, and pays one
    // more write that takes its hit out of the breaker's count)
    await take(key);
    fx.advance(ANSWER_MARGIN_MS + 1);
    counter.reset();
    expect((await fx.invoke(delivery)).headers?.['idempotent-replayed']).toBe('true');
    expect(counter.total()).toBe(1);
    expect(Object.fromEntries(counter.byOperation)).toEqual({ UpdateItemCommand: 1 });
    // same key, another body
    counter.reset();
    expect((await fx.invoke(signedDelivery('stripe', key, { payload: { amount: 1 } }))).statusCode).toBe(422);
    expect(counter.total()).toBe(1);
    // refused before the claim: nothing at all
    counter.reset();
    expect((await fx.invoke({ ...delivery, body: `${delivery.body} ` })).statusCode).toBe(401);
    expect(counter.total()).toBe(0);
  });

  it('makes 2 requests for the first copy that finds the work not yet taken, which keeps the payload, and 1 for every copy after it', async () => {
    // Prepare: no worker takes the work, as when the first delivery's function died before its send.
    const { counter, fx, key, delivery } = await counted();
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect((await item(key)).body).toBeUndefined();
    // Act + Assess: the first copy keeps the payload before it is answered
    fx.advance(ANSWER_MARGIN_MS + 1);
    counter.reset();
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect(counter.total()).toBe(2);
    expect((await item(key)).body).toBe(delivery.body);
    // the next finds it kept
    fx.advance(ANSWER_MARGIN_MS + 1);
    counter.reset();
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect(counter.total()).toBe(1);
  });
});
