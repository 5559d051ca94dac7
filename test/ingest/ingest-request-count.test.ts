import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { countRequests } from '../../local/request-counter.ts';

describe('DynamoDB requests per delivery, counted on the wire', () => {
  it('makes 1 request for a new delivery, a duplicate and a conflict alike', async () => {
    // Prepare
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const counter = countRequests(client);
    const fx = await ingestFixture({ store: new DynamoDbEventStore(client, inject('eventsTable')) });
    const key = uniqueKey('stripe');
    const delivery = signedDelivery('stripe', key);
    // Act + Assess: new
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect(counter.total()).toBe(1);
    expect(Object.fromEntries(counter.byOperation)).toEqual({ UpdateItemCommand: 1 });
    // duplicate: the same write counts its hit and returns the record
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
});
