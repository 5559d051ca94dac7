/**
 * Issue 43: `order skip` against a redrive of the head landing between the skip's read and its
 * move (DynamoDB Local and fauxqs, over a line the real executor built). The skip fences the head
 * first (fenceSkip); a lease at the skipped place is then refused, so the head never runs beside
 * the waiter the skip wakes.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { createLineControl } from '../../lambdas/routes/line-control.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { fenceSkip } from '../../lambdas/store/record-transitions.ts';
import { conditionalUpdate } from '../../lambdas/store/conditional-write.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { entityLineScene } from '../support/entity-line-scene.ts';
import type { LineScene } from '../support/entity-line-scene.ts';

const dynamo = localDynamoClient(inject('dynamoEndpoint'));
const doc = documentClient(dynamo);

/** cus_1's line: `a` FAILED at place 1, `b` parked behind it. */
async function blocked(scene: LineScene): Promise<{ a: string; b: string }> {
  const [a, b] = [`evt_a_${randomUUID().slice(0, 6)}`, `evt_b_${randomUUID().slice(0, 6)}`];
  scene.failing.add(a);
  const messages = [await scene.deliver(a, 'cus_1'), await scene.deliver(b, 'cus_1')];
  expect((await scene.run(messages[0]!)).outcome).toBe('permanent-error');
  expect((await scene.run(messages[1]!)).outcome).toBe('waiting-turn');
  await scene.takeMessages();
  return { a, b };
}

/** A person's redrive of `key` as it lands on the record: FAILED -> RECEIVED with a fresh budget. */
async function redriven(scene: LineScene, key: string): Promise<void> {
  await doc.send(
    new UpdateCommand({
      TableName: scene.eventsTable,
      Key: { pk: recordPk(scene.route, key), sk: RECORD_SK },
      UpdateExpression: 'SET #status = :received, attempts = :zero',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':received': 'RECEIVED', ':zero': 0 },
    }),
  );
}

function linesOf(scene: LineScene) {
  return createLineControl({ dynamo, eventsTable: scene.eventsTable, sqs: localSqsClient(inject('sqsEndpoint')), queueUrl: scene.queueUrl, config: scene.config });
}

describe('order skip and a redrive of the head', () => {
  it('refuses a lease at the skipped place when the redrive lands after the skip, and the head takes a place at the line\'s end', async () => {
    // Prepare
    const scene = await entityLineScene();
    const { a, b } = await blocked(scene);
    const store = new DynamoDbExecutionStore(dynamo, scene.eventsTable, scene.config.clockSkewSeconds);
    const record = await scene.record(a);
    // Act: the skip, then the redrive, then the head's worker that read its turn at place 1 before the move.
    const skipped = await linesOf(scene).skipHead(scene.route, 'cus_1');
    await redriven(scene, a);
    const lease = (place: number) =>
      store.acquireLease({ route: scene.route, key: a, receivedAt: record!.receivedAt, nowMs: Date.now(), leaseMs: 5_000, token: randomUUID(), maxAttempts: 3, linePlace: place });
    const atSkipped = await lease(1);
    // Assess: refused as locked (its message comes back in a moment); b was woken; the head runs only at a new place.
    expect(skipped).toMatchObject({ kind: 'skipped', skipped: { key: a, place: 1 }, woken: { key: b } });
    expect(atSkipped.kind).toBe('locked');
    expect((await lease(3)).kind).toBe('leased');
  });

  it('refuses the skip when the redrive landed first: the head is RECEIVED, the cursor stays', async () => {
    const scene = await entityLineScene();
    const { a } = await blocked(scene);
    await redriven(scene, a);
    const out = await linesOf(scene).skipHead(scene.route, 'cus_1');
    expect(out.kind).toBe('refused');
    expect((await linesOf(scene).showLine(scene.route, 'cus_1')).next).toBe(1);
  });

  it('finishes a skip that died between its fence and its move, even once the head was redriven', async () => {
    // Prepare: the fence landed, the move did not; then a redrive.
    const scene = await entityLineScene();
    const { a, b } = await blocked(scene);
    const record = await scene.record(a);
    const fenced = await conditionalUpdate(doc, { TableName: scene.eventsTable, Key: { pk: recordPk(scene.route, a), sk: RECORD_SK }, ...fenceSkip({ receivedAt: record!.receivedAt, place: 1 }) });
    await redriven(scene, a);
    // Act
    const out = await linesOf(scene).skipHead(scene.route, 'cus_1');
    // Assess
    expect(fenced.ok).toBe(true);
    expect(out).toMatchObject({ kind: 'skipped', skipped: { key: a }, woken: { key: b } });
    expect((await linesOf(scene).showLine(scene.route, 'cus_1')).next).toBe(2);
  });
});
