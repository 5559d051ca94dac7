/**
 * A person's side of ordering per entity (routes/line-control.ts) on DynamoDB Local and fauxqs,
 * over lines the real executor built: `order show` names what holds a line and why, `order skip`
 * moves a line past its FAILED head and wakes the next record as a completion does (its message
 * on the queue, the record RECEIVED again, and it runs), and refuses any other head.
 */
import { describe, expect, inject, it } from 'vitest';
import { createLineControl, LineSelectionError } from '../../lambdas/routes/line-control.ts';
import type { LineControl } from '../../lambdas/routes/line-control.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { entityLineScene } from '../support/entity-line-scene.ts';
import type { LineScene } from '../support/entity-line-scene.ts';
import { waitFor } from '../support/executor-fixture.ts';

function linesOf(scene: LineScene): LineControl {
  return createLineControl({
    dynamo: localDynamoClient(inject('dynamoEndpoint')),
    eventsTable: scene.eventsTable,
    sqs: localSqsClient(inject('sqsEndpoint')),
    queueUrl: scene.queueUrl,
    config: scene.config,
  });
}

/** cus_1's line: `a` FAILED at its head, `b` and `c` parked behind it, every message taken off the queue. */
async function blockedLine(scene: LineScene): Promise<{ a: string; b: string; c: string }> {
  const [a, b, c] = ['evt_a', 'evt_b', 'evt_c'];
  scene.failing.add(a);
  const messages = [await scene.deliver(a, 'cus_1'), await scene.deliver(b, 'cus_1'), await scene.deliver(c, 'cus_1')];
  expect((await scene.run(messages[0]!)).outcome).toBe('permanent-error');
  expect((await scene.run(messages[1]!)).outcome).toBe('waiting-turn');
  expect((await scene.run(messages[2]!)).outcome).toBe('waiting-turn');
  // The FAILED head's dead-letter copy: not a test's concern here.
  await scene.takeMessages();
  return { a, b, c };
}

describe('order show', () => {
  it('shows a line held by a FAILED head, why it holds it, and the two records parked behind it', async () => {
    // Prepare
    const scene = await entityLineScene();
    const { a, b, c } = await blockedLine(scene);
    const lines = linesOf(scene);
    // Act
    const line = await lines.showLine(scene.route, 'cus_1');
    const firstTwo = await lines.showLine(scene.route, 'cus_1', 2);
    const other = await lines.showLine(scene.route, 'cus_2');
    // Assess
    expect(line).toMatchObject({ route: scene.route, entity: 'cus_1', entityHash: scene.hashOf('cus_1'), next: 1, more: false });
    expect(line.places).toEqual([
      expect.objectContaining({ place: 1, key: a, status: 'FAILED', attempts: 1, waiting: false }),
      expect.objectContaining({ place: 2, key: b, status: 'PARKED', attempts: 0, waiting: true }),
      expect.objectContaining({ place: 3, key: c, status: 'PARKED', attempts: 0, waiting: true }),
    ]);
    expect(line.head).toMatchObject({ place: 1, key: a, status: 'FAILED', state: 'failed', lastError: expect.stringContaining(`downstream refused ${a}`) as string });
    expect(line.head?.why).toMatch(/redrive it .*or skip it with retryproof order skip/);
    expect(firstTwo.places.map((p) => p.key)).toEqual([a, b]);
    expect(firstTwo.more).toBe(true);
    expect(other).toMatchObject({ entity: 'cus_2', next: 1, places: [], more: false });
    expect(other.head).toBeUndefined();
  });

  it('says a head holds the line because it is retrying, or parked on a paused route', async () => {
    // Prepare: cus_1's head failed once for now; cus_2's head came while the route was paused.
    const scene = await entityLineScene();
    scene.erroring.add('evt_r');
    const retrying = await scene.deliver('evt_r', 'cus_1');
    await scene.deliver('evt_r2', 'cus_1');
    expect((await scene.run(retrying)).outcome).toBe('retryable-error');
    const states = new DynamoDbRouteStateStore(localDynamoClient(inject('dynamoEndpoint')), scene.eventsTable);
    await states.pause(scene.route, { reason: 'test', at: Date.now(), by: 'operator' });
    const held = await scene.deliver('evt_p', 'cus_2');
    expect((await scene.run(held)).outcome).toBe('parked');
    const lines = linesOf(scene);
    // Act
    const retryLine = await lines.showLine(scene.route, 'cus_1');
    const pausedLine = await lines.showLine(scene.route, 'cus_2');
    // Assess
    expect(retryLine.head).toMatchObject({ key: 'evt_r', status: 'RECEIVED', attempts: 1, state: 'retrying', why: expect.stringContaining('1 attempt spent') as string });
    expect(pausedLine.head).toMatchObject({ key: 'evt_p', status: 'PARKED', state: 'paused', why: expect.stringContaining(`routes resume ${scene.route}`) as string });
  });
});

describe('order skip', () => {
  it('skips the FAILED head and wakes the next record: its message arrives, it is RECEIVED again, runs, and wakes the one after it', async () => {
    // Prepare
    const scene = await entityLineScene();
    const { a, b, c } = await blockedLine(scene);
    const lines = linesOf(scene);
    // Act
    const out = await lines.skipHead(scene.route, 'cus_1');
    // Assess: b is woken, a stays FAILED, c still waits.
    expect(out).toMatchObject({ kind: 'skipped', skipped: { place: 1, key: a, status: 'FAILED' }, woken: { key: b } });
    const [wakeUp] = await waitFor('the wake-up of b on the queue', async () => {
      const found = (await scene.takeMessages()).filter((m) => m.key === b);
      return found.length > 0 ? found : undefined;
    });
    expect(wakeUp).toMatchObject({ route: scene.route, key: b });
    expect(wakeUp?.deadLetterId).toBeUndefined();
    const woken = await scene.record(b);
    expect(woken?.status).toBe('RECEIVED');
    expect(woken?.waitingTurn).toBeUndefined();
    expect((await scene.record(a))?.status).toBe('FAILED');
    expect((await scene.record(c))?.status).toBe('PARKED');
    expect((await lines.showLine(scene.route, 'cus_1')).head).toMatchObject({ place: 2, key: b, state: 'queued' });

    // Act 2: the wake-up runs b, whose completion wakes c.
    expect((await scene.run(wakeUp!)).outcome).toBe('completed');
    // Assess 2
    const next = await waitFor('the wake-up of c on the queue', async () => {
      const found = (await scene.takeMessages()).filter((m) => m.key === c);
      return found.length > 0 ? found : undefined;
    });
    expect(next).toHaveLength(1);
    expect((await scene.record(c))?.status).toBe('RECEIVED');
    expect(scene.ran).toEqual([a, b]);
    expect((await lines.showLine(scene.route, 'cus_1')).next).toBe(3);
  });

  it('refuses a head that is RECEIVED, and changes nothing: no cursor move, no wake-up', async () => {
    // Prepare: b waits behind a, which has not run yet.
    const scene = await entityLineScene();
    await scene.deliver('evt_a', 'cus_1');
    const b = await scene.deliver('evt_b', 'cus_1');
    expect((await scene.run(b)).outcome).toBe('waiting-turn');
    await scene.takeMessages();
    const lines = linesOf(scene);
    // Act
    const out = await lines.skipHead(scene.route, 'cus_1');
    // Assess
    expect(out.kind).toBe('refused');
    expect(out.kind === 'refused' ? out.reason : '').toMatch(new RegExp(`^route ${scene.route}, entity cus_1: the head of the line \\(place 1, key evt_a\\) is RECEIVED, not FAILED`));
    expect((await lines.showLine(scene.route, 'cus_1')).next).toBe(1);
    expect((await scene.record('evt_b'))?.status).toBe('PARKED');
    expect(await scene.takeMessages()).toEqual([]);
  });

  it('refuses a line that holds no work', async () => {
    const scene = await entityLineScene();
    const out = await linesOf(scene).skipHead(scene.route, 'cus_nobody');
    expect(out).toEqual({ kind: 'refused', reason: `the line of route ${scene.route}, entity cus_nobody holds no work: nothing to skip` });
  });
});

describe('a line named wrongly', () => {
  it('is refused for a route without orderBy, an unknown route and an empty entity, each naming the route', async () => {
    const scene = await entityLineScene();
    const lines = linesOf(scene);
    await expect(lines.showLine(scene.unordered, 'cus_1')).rejects.toThrow(new LineSelectionError(`route "${scene.unordered}" is not ordered per entity (it has no orderBy), so it has no lines; ordered routes: ${scene.route}`));
    await expect(lines.skipHead(scene.unordered, 'cus_1')).rejects.toThrow(LineSelectionError);
    await expect(lines.skipHead('nope', 'cus_1')).rejects.toThrow(/^route "nope" is not configured; configured routes: /);
    await expect(lines.showLine(scene.route, '')).rejects.toThrow(`the entity is empty: give the value whose line route "${scene.route}" keeps ({body:/customer}), such as a customer id`);
  });
});
