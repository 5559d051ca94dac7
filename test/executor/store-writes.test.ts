/**
 * The writes of route control and the reconciler on DynamoDB Local when a write commits and
 * its answer is lost (test/support/ambiguous-dynamodb.ts): each recognises its own success by
 * its nonce (store/conditional-write.ts), and the writes that send a message keep the record
 * alive past the 14 days the message may wait, without ever shortening its life.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { MESSAGE_COVER_SECONDS } from '../../lambdas/config/route-config.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbParkedRecords } from '../../lambdas/store/dynamodb-parked-records.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { conditionalUpdate } from '../../lambdas/store/conditional-write.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { claimResend, clearStranded, parkedIndexKeys, strandedIndexKeys } from '../../lambdas/store/record-transitions.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ambiguousDynamoDb, once } from '../support/ambiguous-dynamodb.ts';
import { sampleRecord } from '../support/event-records.ts';

const ROUTE = 'store-writes';
const table = (): string => inject('eventsTable');

/** Writes a record by hand, as the scene of one spec. */
async function seed(extra: Parameters<typeof sampleRecord>[3] = {}, item: Record<string, unknown> = {}) {
  const key = `k-${randomUUID()}`;
  const record = sampleRecord(ROUTE, key, Date.now() - 60_000, extra);
  const doc = documentClient(localDynamoClient(inject('dynamoEndpoint')));
  await doc.send(new PutCommand({ TableName: table(), Item: { ...toRecordItem(record), ...item } }));
  return { key, record, doc };
}

async function itemOf(doc: ReturnType<typeof documentClient>, key: string): Promise<Record<string, unknown>> {
  const out = await doc.send(new GetCommand({ TableName: table(), Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ConsistentRead: true }));
  return out.Item ?? {};
}

describe('writes that recognise their own success', () => {
  it('unparks a record whose unpark lost its answer, and keeps it alive 15 days past the message just sent', async () => {
    // Prepare: a PARKED record 34 days into its 35-day life, whose resume just sent its message.
    const index = parkedIndexKeys(ROUTE, 'k', 0);
    const now = Date.now();
    const { key, record, doc } = await seed(
      { status: 'PARKED', expiresAt: Math.floor(now / 1000) + 86_400 },
      { gsi2pk: index.gsi2pk, gsi2sk: index.gsi2sk },
    );
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const lost = once('UpdateItemCommand', 'commit-then-error', (input) => String(input.UpdateExpression).includes('#status = :received'));
    const heal = ambiguousDynamoDb(client, lost);
    // Act
    const unparked = await new DynamoDbParkedRecords(client, table()).unpark(record, now);
    heal();
    // Assess
    expect(lost.fired()).toBe(true);
    expect(unparked).toBe(true);
    const item = await itemOf(doc, key);
    expect(item).toMatchObject({ status: 'RECEIVED', lastEnqueuedAt: now });
    expect(item.expiresAt).toBe(Math.floor(now / 1000) + MESSAGE_COVER_SECONDS);
  });

  it('never shortens a record\'s life when it sends: a resend early in a 35-day life leaves the expiry as it was', async () => {
    const now = Date.now();
    const { key, record, doc } = await seed({ lastEnqueuedAt: now - 3_600_000 });
    const out = await conditionalUpdate(doc, {
      TableName: table(),
      Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK },
      ...claimResend({
        receivedAt: record.receivedAt,
        nowMs: now,
        sentBeforeMs: now - 600_000,
        answer: record.answer,
        includeFailed: false,
        answeredFailure: false,
      }),
    });
    expect(out.ok).toBe(true);
    const item = await itemOf(doc, key);
    expect(item).toMatchObject({ lastEnqueuedAt: now, expiresAt: record.expiresAt });
    expect(record.expiresAt).toBeGreaterThan(Math.floor(now / 1000) + MESSAGE_COVER_SECONDS);
  });

  it('takes the refused retry of its own resend claim for the claim, and moves a near expiry 15 days on', async () => {
    const now = Date.now();
    // A FAILED record whose dead-letter copy never left, its life nearly over.
    const { key, record, doc } = await seed(
      { status: 'FAILED', lastEnqueuedAt: now - 3_600_000, expiresAt: Math.floor(now / 1000) + 3_600 },
      { deadLetterId: 'dl-1' },
    );
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const lost = once('UpdateItemCommand', 'commit-then-error', (input) => String(input.UpdateExpression).includes('ADD resends'));
    const heal = ambiguousDynamoDb(client, lost);
    const out = await conditionalUpdate(documentClient(client), {
      TableName: table(),
      Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK },
      ...claimResend({
        receivedAt: record.receivedAt,
        nowMs: now,
        sentBeforeMs: now - 600_000,
        answer: record.answer,
        includeFailed: true,
        answeredFailure: false,
      }),
    });
    heal();
    expect(lost.fired()).toBe(true);
    expect(out).toMatchObject({ ok: true, replayed: true });
    expect(await itemOf(doc, key)).toMatchObject({ lastEnqueuedAt: now, resends: 1, expiresAt: Math.floor(now / 1000) + MESSAGE_COVER_SECONDS });
  });

  it('takes the refused retry of its own exit from the retry partition for the exit', async () => {
    // Prepare: a record in the retry partition; its clearStranded commits, and its retry finds the keys gone.
    const { key, record, doc } = await seed({}, strandedIndexKeys(ROUTE, 'k', 0));
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const lost = once('UpdateItemCommand', 'commit-then-error');
    const heal = ambiguousDynamoDb(client, lost);
    const out = await conditionalUpdate(documentClient(client), { TableName: table(), Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK }, ...clearStranded(record) });
    heal();
    expect(lost.fired()).toBe(true);
    expect(out).toMatchObject({ ok: true, replayed: true });
    expect((await itemOf(doc, key)).gsi2pk).toBeUndefined();
  });

  it('pauses a route once when the pause lost its answer: the caller still knows the pause is its own', async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const route = `paused-${randomUUID().slice(0, 8)}`;
    const lost = once('PutItemCommand', 'commit-then-error');
    const heal = ambiguousDynamoDb(client, lost);
    const states = new DynamoDbRouteStateStore(client, table());
    const paused = await states.pause(route, { reason: 'test', at: Date.now(), by: 'operator' });
    const again = await states.pause(route, { reason: 'test', at: Date.now(), by: 'operator' });
    heal();
    expect(lost.fired()).toBe(true);
    // Ours, though its retry was refused; a second pause is not.
    expect([paused, again]).toEqual([true, false]);
    expect((await states.get(route)).state).toBe('paused');
  });
});
