/**
 * Redeploying after a destroy, on DynamoDB Local: the events table a destroy retained keeps
 * every claim, so a receiver redeployed over it (`existingEventsTable`) answers a sender's
 * retry of a key claimed before the destroy as the replay it is, and runs nothing again.
 */
import { randomUUID } from 'node:crypto';
import { inject, describe, expect, it } from 'vitest';
import { createEventsTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

describe('an ingest redeployed over the kept events table', () => {
  it('answers a key claimed before the destroy as a replay: the first answer, Idempotent-Replayed, nothing queued', async () => {
    // Prepare: the table of the first deployment, which `cdk destroy` retains.
    const ddb = localDynamoClient(inject('dynamoEndpoint'));
    const kept = await createEventsTable(ddb, `kept-events-${randomUUID().slice(0, 8)}`);
    const before = await ingestFixture({ tableName: kept });
    const delivery = signedDelivery('stripe', uniqueKey('stripe'));
    const first = await before.invoke(delivery);
    expect(first.statusCode).toBe(202);
    // Act: a fresh deployment (new handler, new stores, a queue of its own) over the same
    // table, as `existingEventsTable` wires it; Stripe retries the event.
    const after = await ingestFixture({ tableName: kept });
    const retry = await after.invoke(delivery);
    // Assess
    expect(retry.statusCode).toBe(202);
    expect(retry.headers?.['idempotent-replayed']).toBe('true');
    expect(JSON.parse(retry.body as string)).toEqual(JSON.parse(first.body as string));
    expect(await after.messagesInQueue()).toBe(0);
    ddb.destroy();
  });

  it('claims afresh on a new, empty table: what a deploy after a destroy did without existingEventsTable', async () => {
    // Prepare
    const ddb = localDynamoClient(inject('dynamoEndpoint'));
    const before = await ingestFixture({ tableName: await createEventsTable(ddb, `old-events-${randomUUID().slice(0, 8)}`) });
    const delivery = signedDelivery('stripe', uniqueKey('stripe'));
    expect((await before.invoke(delivery)).statusCode).toBe(202);
    // Act
    const fresh = await ingestFixture({ tableName: await createEventsTable(ddb, `new-events-${randomUUID().slice(0, 8)}`) });
    const retry = await fresh.invoke(delivery);
    // Assess: accepted as new, and queued to run a second time.
    expect(retry.statusCode).toBe(202);
    expect(retry.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await fresh.messagesInQueue()).toBe(1);
    ddb.destroy();
  });
});
