import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { dieAsWorker } from '../../lambdas/demo/worker-death.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { sqsRecordOf } from '../../local/sqs-event-source.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { TAKEOVER_MARGIN_MS } from '../../lambdas/store/record-transitions.ts';
import { executorFixture, MAX_ATTEMPTS } from '../support/executor-fixture.ts';
import { lambdaContext } from '../../local/http-api-event.ts';

/** An action that waits on a gate the test opens, and counts its runs. */
function gatedAction(): { action: Action; runs: () => number; open: () => void; started: Promise<void> } {
  let runs = 0;
  let open!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const started = new Promise<void>((r) => (markStarted = r));
  const action: Action = async (ctx) => {
    runs++;
    if (ctx.attempt === 1) {
      markStarted();
      await gate;
    }
    return { attempt: ctx.attempt };
  };
  return { action, runs: () => runs, open, started };
}

describe('the executor lease and its fencing', () => {
  it('rejects the completion of a worker that outlived its lease, leaving the record COMPLETED by its successor', async () => {
    // Prepare
    const gated = gatedAction();
    const fx = await executorFixture({ actions: { gated: gated.action }, action: 'gated' });
    const key = await fx.deliver({ amount: 1 });
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MessageSystemAttributeNames: ['All'] }));
    const record = sqsRecordOf(out.Messages![0]!, 'arn:aws:sqs:us-east-1:000000000000:exec');
    // Act: worker A claims and stalls inside the action.
    const workerA = fx.handler({ Records: [{ ...record, messageId: 'A' }] }, lambdaContext());
    await gated.started;
    // Worker B arrives after A's lease (the clock moves past it), claims and completes.
    fx.clockOffsetMs = 60_000;
    const workerB = await fx.handler({ Records: [{ ...record, messageId: 'B' }] }, lambdaContext());
    const afterB = await fx.record(key);
    // A wakes up and tries to complete.
    gated.open();
    const resultA = await workerA;
    // Assess
    expect(workerB.batchItemFailures).toEqual([]);
    expect(afterB).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    // Fenced out, A hands its message back rather than deleting it: it cannot know that another
    // message carries the work (a surplus message is harmless; it finds the record COMPLETED).
    expect(resultA.batchItemFailures).toEqual([{ itemIdentifier: 'A' }]);
    const final = await fx.record(key);
    expect(final).toMatchObject({ status: 'COMPLETED', attempts: 2, leaseToken: afterB?.leaseToken });
    expect(JSON.parse(String(final?.result))).toEqual({ attempt: 2 });
    const log = await fx.log(key);
    expect(log.map((e) => [e.attempt, e.outcome]).sort()).toEqual([
      [1, 'fenced-out'],
      [2, 'completed'],
    ]);
  });

  it('hands a message back without running the action while another worker holds a live lease', async () => {
    const gated = gatedAction();
    const fx = await executorFixture({ actions: { gated: gated.action }, action: 'gated' });
    await fx.deliver({ amount: 1 });
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MessageSystemAttributeNames: ['All'] }));
    const record = sqsRecordOf(out.Messages![0]!, 'arn:aws:sqs:us-east-1:000000000000:exec');
    const holder = fx.handler({ Records: [{ ...record, messageId: 'holder' }] }, lambdaContext());
    await gated.started;
    const second = await fx.handler({ Records: [{ ...record, messageId: 'second' }] }, lambdaContext());
    expect(second.batchItemFailures).toEqual([{ itemIdentifier: 'second' }]);
    expect(gated.runs()).toBe(1);
    gated.open();
    expect((await holder).batchItemFailures).toEqual([]);
  });

  it('hands a message that finds a live lease back for about the lease\'s remaining time, and nothing reaches the DLQ', async () => {
    // Prepare: a worker holds the lease, stalled inside the action, on the real message (hidden a minute, so only the copy is visible).
    const gated = gatedAction();
    const fx = await executorFixture({ actions: { gated: gated.action }, action: 'gated' });
    const key = await fx.deliver({ amount: 1 });
    const work = await fx.workMessage(key);
    const sqs = localSqsClient(inject('sqsEndpoint'));
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, VisibilityTimeout: 60, MessageSystemAttributeNames: ['All'] }),
    );
    const original = out.Messages![0]!;
    const holder = fx.handler({ Records: [sqsRecordOf(original, 'arn:aws:sqs:us-east-1:000000000000:exec')] }, lambdaContext());
    await gated.started;
    const leased = await fx.record(key);
    // Act: a copy of the work message arrives, as a duplicate delivery's or the reconciler's resend would.
    await fx.redrive(work);
    const before = fx.now();
    const round = await fx.pollUntilReceived();
    const after = fx.now();
    const changes = [...fx.visibilityChanges];
    // The holder finishes; the copy comes back (fauxqs was told at most a second) and finds the work done.
    gated.open();
    const held = await holder;
    await sqs.send(new DeleteMessageCommand({ QueueUrl: fx.queueUrl, ReceiptHandle: original.ReceiptHandle }));
    await fx.drain();
    // Assess: handed back for the lease's remaining time plus at most 2 s of jitter, never run twice, never dead-lettered.
    const leaseUntil = Number(leased?.leaseUntil);
    expect(leased).toMatchObject({ status: 'EXECUTING', attempts: 1 });
    expect(round).toMatchObject({ received: 1, handedBack: 1 });
    expect(changes).toHaveLength(1);
    // The lease is over for another worker only twice the clock bound after its end.
    expect(changes[0]?.seconds).toBeGreaterThanOrEqual((leaseUntil + TAKEOVER_MARGIN_MS - after) / 1000);
    expect(changes[0]?.seconds).toBeLessThanOrEqual((leaseUntil + TAKEOVER_MARGIN_MS - before) / 1000 + 3);
    expect(changes[0]?.applied).toBe(1);
    expect(held.batchItemFailures).toEqual([]);
    expect(gated.runs()).toBe(1);
    expect(await fx.record(key)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(await fx.takeDeadLetters()).toEqual([]);
  });

  it('fails work whose worker keeps dying once its budget is spent, and its dead-letter copy reaches the DLQ with the ingest context', async () => {
    // Prepare: an action that always dies, as a worker killed by its timeout or memory does.
    const dying: Action = () => dieAsWorker();
    const fx = await executorFixture({ actions: { dying }, action: 'dying' });
    const key = await fx.deliver({ amount: 3 });
    // Act: each attempt dies without a word; its message comes back after the visibility timeout,
    // by which time the executor's clock has moved past the dead worker's lease.
    const rounds = [];
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      rounds.push(await fx.pollUntilReceived());
      fx.clockOffsetMs += 60_000;
    }
    const spent = await fx.record(key);
    // The next receive finds the budget spent: FAILED, and a dead-letter copy on its way to the DLQ.
    const last = await fx.pollUntilReceived();
    await fx.drain();
    const dead = await fx.takeDeadLetters();
    // Assess
    expect(rounds.map((r) => [r.received, r.handedBack])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    expect(spent).toMatchObject({ status: 'EXECUTING', attempts: MAX_ATTEMPTS, runs: MAX_ATTEMPTS });
    expect(last).toMatchObject({ received: 1, deleted: 1 });
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      route: 'standard-webhooks',
      key,
      headers: { 'content-type': 'application/json' },
      attempts: MAX_ATTEMPTS,
      reason: `retries exhausted after ${MAX_ATTEMPTS} attempts`,
      lastError: 'the worker of the last attempt stopped without an answer',
    });
    expect(await fx.record(key)).toMatchObject({ status: 'FAILED', attempts: MAX_ATTEMPTS, deadLettered: dead[0]?.deadLetterId });
  });
});
