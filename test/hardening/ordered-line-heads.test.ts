/**
 * Issue 43, defects 1 and 2, with the real ingest, executor and reconciler on DynamoDB Local and
 * fauxqs (SQS and S3), on a route ordered by the body's customer:
 *  - a head that can never run (its body object is gone, or its ingest died at its send) must not
 *    hold its line for a whole TTL: it either holds no place, or is FAILED, shown, flagged
 *    `line-blocked` and skippable;
 *  - a pause longer than a place's life must not lose the accepted order.
 */
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import type { Action, ActionContext } from '../../lambdas/actions/action.ts';
import { createLineControl } from '../../lambdas/routes/line-control.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import type { EntityOrder } from '../../lambdas/ports/entity-order.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { testBodyBucket } from '../support/body-bucket.ts';
import { ROUTE, waitFor } from '../support/executor-fixture.ts';
import { SCHEME_ROUTES, signedDelivery } from '../support/ingest-fixture.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { testConfig } from '../support/test-config.ts';
import { reconcilerFixture } from '../support/reconciler-fixture.ts';
import type { ReconcilerFixture } from '../support/reconciler-fixture.ts';

const DAY_MS = 86_400_000;
const ORDERED_ROUTE = { ...(SCHEME_ROUTES.find((r) => r.name === ROUTE) as (typeof SCHEME_ROUTES)[number]), orderBy: '{body:/customer}' };

/** An action that keeps the keys it ran, in order. */
function recording(): { action: Action; ran: string[] } {
  const ran: string[] = [];
  return {
    ran,
    action: (ctx: ActionContext) => {
      ran.push(ctx.key);
      return Promise.resolve({ ok: true });
    },
  };
}

/** The order's methods bound to it, so a test can replace one of them. */
function bound(order: EntityOrder): EntityOrder {
  const proto = Object.getPrototypeOf(order) as object;
  const methods = Object.getOwnPropertyNames(proto).filter((name) => name !== 'constructor');
  return Object.fromEntries(methods.map((name) => [name, (order as unknown as Record<string, (...args: unknown[]) => unknown>)[name]?.bind(order)])) as unknown as EntityOrder;
}

/**
 * Resumes the route and lets the reconciler re-send its parked work, then hands the messages to
 * the workers in `keys` order (SQS may hand them out in any order), and drains. The messages re-sent.
 */
async function resumeLatestFirst(rf: ReconcilerFixture, states: DynamoDbRouteStateStore, keys: readonly string[]) {
  const { fx } = rf;
  await states.resume(ROUTE, fx.now());
  await rf.reconciler().run({ fromMs: fx.now() - DAY_MS, toMs: fx.now() - 60_000 });
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const got = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MaxNumberOfMessages: 10 }))).Messages ?? [];
  const byKey = (key: string) => got.find((m) => (JSON.parse(m.Body ?? '{}') as { key?: string }).key === key);
  for (const m of got) await sqs.send(new DeleteMessageCommand({ QueueUrl: fx.queueUrl, ReceiptHandle: m.ReceiptHandle }));
  for (const key of keys) await sqs.send(new SendMessageCommand({ QueueUrl: fx.queueUrl, MessageBody: byKey(key)?.Body ?? '' }));
  await fx.drain(30_000);
  return got;
}

function lineControlOf(rf: ReconcilerFixture) {
  return createLineControl({
    dynamo: rf.dynamo,
    eventsTable: rf.eventsTable,
    sqs: localSqsClient(inject('sqsEndpoint')),
    queueUrl: rf.fx.queueUrl,
    config: resolveConfig(testConfig(rf.fx.routes)),
  });
}

describe('a head that can never run', () => {
  it('holds no place when its ingest died at its send, so the next delivery of its customer runs', async () => {
    // Prepare: the send of `dying` never answers (a stalled request, then the Lambda timeout).
    const dying = `evt_dying_${randomUUID().slice(0, 8)}`;
    const stalled: WorkQueue = {
      send: () => new Promise<void>(() => undefined),
    };
    const runs = recording();
    const rf = await reconcilerFixture({
      routes: [ORDERED_ROUTE],
      actions: { recorder: runs.action },
      action: 'recorder',
      ordered: true,
      ingestQueue: (queue) => ({ send: (message, options) => (message.key === dying ? stalled.send(message, options) : queue.send(message, options)) }),
    });
    const { fx } = rf;
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    // Act: the first delivery's function dies at its send (it is never answered: a sender such as
    // GitHub does not retry it), and the customer's next delivery is accepted after it.
    void fx.ingest.invoke(signedDelivery(ROUTE, dying, { payload: { customer, n: 1 } }));
    await waitFor('the dying delivery\'s claim', async () => ((await fx.record(dying)) === undefined ? undefined : true));
    const next = await fx.deliver({ customer, n: 2 });
    await fx.drain();
    // Assess: the next delivery ran; nothing of the dead one holds the line.
    expect(runs.ran).toEqual([next]);
    expect((await fx.record(next))?.status).toBe('COMPLETED');
    // The next delivery held place 1, and its completion moved the line past it: nothing waits.
    expect(await lineControlOf(rf).showLine(ROUTE, customer)).toMatchObject({ next: 2, places: [] });
  });

  it('is FAILED when its body object is gone: shown with the reason, flagged line-blocked, and skipped, after which the next one runs', async () => {
    // Prepare: a large head (its body in the bucket) and a small delivery behind it; the head's object is deleted.
    const bucket = await testBodyBucket();
    const runs = recording();
    const rf = await reconcilerFixture({ routes: [ORDERED_ROUTE], actions: { recorder: runs.action }, action: 'recorder', ordered: true, bodies: bucket.bodies });
    const { fx } = rf;
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const head = await fx.deliver({ customer, pad: 'h'.repeat(150 * 1024) });
    const behind = await fx.deliver({ customer, n: 2 });
    const [name] = await bucket.names();
    await bucket.s3.send(new DeleteObjectCommand({ Bucket: bucket.bucket, Key: name }));
    // Act 1: the executor takes both messages; the reconciler looks at the line.
    await fx.drain(30_000);
    fx.clockOffsetMs = 20 * 60_000;
    const report = await rf.reconciler().run({ fromMs: Date.now() - 3_600_000, toMs: Date.now() + 60_000 });
    const lines = lineControlOf(rf);
    const shown = await lines.showLine(ROUTE, customer);
    // Assess 1
    expect(runs.ran).toEqual([]);
    expect(await fx.record(head)).toMatchObject({ status: 'FAILED', lastError: expect.stringContaining('body object') as string });
    expect((await fx.record(behind))?.status).toBe('PARKED');
    expect(report.needsAttention).toContainEqual(expect.objectContaining({ key: behind, finding: 'line-blocked' }));
    expect(shown.head).toMatchObject({ key: head, state: 'failed', lastError: expect.stringContaining('body object') as string });
    expect((await fx.takeDeadLetters()).map((d) => d.key)).toEqual([head]);
    // Act 2: a person skips the head.
    const skipped = await lines.skipHead(ROUTE, customer);
    await fx.drain(30_000);
    // Assess 2
    expect(skipped).toMatchObject({ kind: 'skipped', skipped: { key: head }, woken: { key: behind } });
    expect(runs.ran).toEqual([behind]);
    expect((await fx.record(behind))?.status).toBe('COMPLETED');
  });
});

describe('a pause longer than a place lives', () => {
  it('keeps the accepted order when a paused route parked a message whose ingest died before its place (seed 1231): the sender\'s retry takes the place before its 202', async () => {
    // Prepare: the route is paused; A's first ingest sends its message, then dies at its place.
    const runs = recording();
    const a = `evt_unplaced_${randomUUID().slice(0, 8)}`;
    let placing: () => void = () => undefined;
    const placeStarted = new Promise<void>((resolve) => (placing = resolve));
    const rf = await reconcilerFixture({
      routes: [ORDERED_ROUTE],
      actions: { recorder: runs.action },
      action: 'recorder',
      ordered: true,
      ingestOrder: (order) => ({
        ...bound(order),
        place: (ref, nowMs, expiresAt) => {
          if (ref.key !== a) return order.place(ref, nowMs, expiresAt);
          placing();
          return new Promise<number>(() => undefined);
        },
      }),
    });
    const { fx } = rf;
    const states = new DynamoDbRouteStateStore(rf.dynamo, rf.eventsTable);
    await states.pause(ROUTE, { reason: 'an investigation', at: fx.now(), by: 'operator' });
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    void fx.ingest.invoke(signedDelivery(ROUTE, a, { payload: { customer, n: 1 } }));
    await placeStarted;
    // Act: the paused route's worker parks A's message; the sender's retry of A is answered 202
    // (it found A parked, never run); B is accepted after it.
    await fx.drain();
    expect((await fx.record(a))?.status).toBe('PARKED');
    await fx.deliver({ customer, n: 1 }, a);
    const b = await fx.deliver({ customer, n: 2 });
    await fx.drain();
    const got = await resumeLatestFirst(rf, states, [b, a]);
    // Assess
    expect(got).toHaveLength(2);
    expect(runs.ran).toEqual([a, b]);
  });

  it('keeps the accepted order: the record accepted first runs first when the route is resumed 36 days on', async () => {
    // Prepare: the route is paused; A is accepted on day 0 and B on day 2, both parked.
    const runs = recording();
    const rf = await reconcilerFixture({ routes: [ORDERED_ROUTE], actions: { recorder: runs.action }, action: 'recorder', ordered: true, ingestFollowsClock: true });
    const { fx } = rf;
    const states = new DynamoDbRouteStateStore(rf.dynamo, rf.eventsTable);
    await states.pause(ROUTE, { reason: 'a long investigation', at: fx.now(), by: 'operator' });
    const customer = `cus_${randomUUID().slice(0, 8)}`;
    const a = await fx.deliver({ customer, n: 1 });
    await fx.drain();
    fx.clockOffsetMs = 2 * DAY_MS;
    const b = await fx.deliver({ customer, n: 2 });
    await fx.drain();
    // Act: the hourly reconciler keeps the parked work alive (a run every 10 days suffices here: it keeps what ends within 7 days).
    for (const day of [10, 20, 30, 36]) {
      fx.clockOffsetMs = day * DAY_MS;
      await rf.reconciler().run({ fromMs: fx.now() - DAY_MS, toMs: fx.now() - 60_000 });
    }
    const got = await resumeLatestFirst(rf, states, [b, a]);
    // Assess
    expect(got).toHaveLength(2);
    expect(runs.ran).toEqual([a, b]);
    expect((await fx.record(a))?.status).toBe('COMPLETED');
    expect((await fx.record(b))?.status).toBe('COMPLETED');
  });
});
