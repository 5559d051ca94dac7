/**
 * The lines of a route ordered per entity (store/dynamodb-entity-order.ts) on DynamoDB Local:
 * places in accepted order, a turn only at the cursor, the cursor moved by completion only,
 * a lost move repaired by the next reader, waiters found, and a person's skip of a FAILED head.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { entityHash } from '../../lambdas/domain/entity-order.ts';
import type { LineRef } from '../../lambdas/ports/entity-order.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { sampleRecord } from '../support/event-records.ts';

const T0 = Date.UTC(2026, 11, 4, 12);
const client = localDynamoClient(inject('dynamoEndpoint'));
const table = inject('eventsTable');
const doc = documentClient(client);
const order = new DynamoDbEntityOrder(client, table);

/** A fresh route name, so each test has lines of its own. */
function lineOf(): { route: string; entity: string; ref: (key: string, receivedAt?: number) => LineRef } {
  const route = `ord-${randomUUID().slice(0, 8)}`;
  const entity = entityHash(route, 'cus_1');
  return { route, entity, ref: (key, receivedAt = T0) => ({ route, entity, key, receivedAt }) };
}

async function writeRecord(route: string, key: string, extra: Partial<EventRecord> = {}): Promise<void> {
  await doc.send(new PutCommand({ TableName: table, Item: toRecordItem(sampleRecord(route, key, T0, extra)) }));
}

const EXPIRES = Math.floor(T0 / 1000) + 35 * 86_400;

describe('an entity line', () => {
  it('gives 20 records placed at once 20 different places, 1 to 20', async () => {
    const { ref } = lineOf();
    const places = await Promise.all(Array.from({ length: 20 }, (_, i) => order.place(ref(`k${i}`), T0, EXPIRES)));
    expect([...places].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('lets only the head run, and the next one once the head completed and moved the line', async () => {
    const { route, ref } = lineOf();
    for (const key of ['a', 'b', 'c']) {
      await writeRecord(route, key);
      await order.place(ref(key), T0, EXPIRES);
    }
    expect(await order.turn(ref('a'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 1 });
    const waiting = await order.turn(ref('b'), T0, EXPIRES);
    expect(waiting).toMatchObject({ kind: 'wait', place: 2, head: { place: 1, key: 'a', status: 'RECEIVED' } });
    await order.markWaiting(ref('b'), 2, EXPIRES + 86_400);
    // a completes: the line moves to b, and b is the waiter to wake.
    await writeRecord(route, 'a', { status: 'COMPLETED' });
    expect(await order.advance(ref('a'), 1, T0, 35 * 86_400)).toEqual({ key: 'b', receivedAt: T0 });
    expect(await order.turn(ref('b'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 2 });
    expect(await order.turn(ref('c'), T0, EXPIRES)).toMatchObject({ kind: 'wait', head: { key: 'b' } });
  });

  it('moves past the second place of a record placed twice and wakes the waiter behind it (seed 1543: a copy placed it while its creator was placing it)', async () => {
    // Prepare: a copy's placeIfAbsent takes place 1 for b before b's creator takes place 2; c waits at 3.
    const { route, ref } = lineOf();
    for (const key of ['b', 'c']) await writeRecord(route, key);
    expect(await order.placeIfAbsent(ref('b'), T0, EXPIRES)).toBe(1);
    expect(await order.place(ref('b'), T0, EXPIRES)).toBe(2);
    expect(await order.place(ref('c'), T0, EXPIRES)).toBe(3);
    expect(await order.turn(ref('b'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 1 });
    await order.markWaiting(ref('c'), 3, EXPIRES + 86_400);
    // Act: b completes at its first place.
    await writeRecord(route, 'b', { status: 'COMPLETED' });
    const waiter = await order.advance(ref('b'), 1, T0, 35 * 86_400);
    // Assess: c is the waiter to wake, and its turn.
    expect(waiter).toEqual({ key: 'c', receivedAt: T0 });
    expect(await order.turn(ref('c'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 3 });
  });

  it('repairs a move lost to a crash: a completed head is passed by the next reader', async () => {
    const { route, entity, ref } = lineOf();
    for (const key of ['a', 'b']) {
      await writeRecord(route, key);
      await order.place(ref(key), T0, EXPIRES);
    }
    // a completed, and its worker died before moving the line.
    await writeRecord(route, 'a', { status: 'COMPLETED' });
    expect(await order.turn(ref('b'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 2 });
    expect((await order.view(route, entity, T0, 10)).next).toBe(2);
  });

  it('holds the line behind a FAILED head until a person skips it', async () => {
    const { route, entity, ref } = lineOf();
    await writeRecord(route, 'a', { status: 'FAILED' });
    await order.place(ref('a'), T0, EXPIRES);
    await writeRecord(route, 'b');
    await order.place(ref('b'), T0, EXPIRES);
    expect(await order.turn(ref('b'), T0, EXPIRES)).toMatchObject({ kind: 'wait', head: { key: 'a', status: 'FAILED' } });
    await order.markWaiting(ref('b'), 2, EXPIRES);
    const skipped = await order.skip(route, entity, T0, 35 * 86_400);
    expect(skipped).toMatchObject({ skipped: { key: 'a', place: 1 }, waiter: { key: 'b' } });
    expect(await order.turn(ref('b'), T0, EXPIRES)).toEqual({ kind: 'turn', place: 2 });
  });

  it('refuses to skip a head that is not FAILED', async () => {
    const { route, entity, ref } = lineOf();
    await writeRecord(route, 'a');
    await order.place(ref('a'), T0, EXPIRES);
    const out = await order.skip(route, entity, T0, 35 * 86_400);
    expect(out.refused).toMatch(/RECEIVED, not FAILED/);
  });

  it('places a runnable record with no place at the end of the line, and gives a done one none', async () => {
    const { route, ref } = lineOf();
    await writeRecord(route, 'a');
    await order.place(ref('a'), T0, EXPIRES);
    await writeRecord(route, 'late');
    expect(await order.turn(ref('late'), T0, EXPIRES)).toMatchObject({ kind: 'wait', place: 2 });
    await writeRecord(route, 'done', { status: 'COMPLETED' });
    expect(await order.turn(ref('done'), T0, EXPIRES)).toEqual({ kind: 'none' });
  });

  it('finds a record its place instead of taking a second one, and takes one when it has none', async () => {
    const { route, ref } = lineOf();
    await writeRecord(route, 'a');
    expect(await order.place(ref('a'), T0, EXPIRES)).toBe(1);
    expect(await order.placeIfAbsent(ref('a'), T0, EXPIRES)).toBe(1);
    await writeRecord(route, 'b');
    expect(await order.placeIfAbsent(ref('b'), T0, EXPIRES)).toBe(2);
    expect(await order.placeIfAbsent(ref('b'), T0, EXPIRES)).toBe(2);
  });
});
