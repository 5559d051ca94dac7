import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { SimulatedCrash } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { sqsRecordOf } from '../../local/sqs-event-source.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { executorFixture, MAX_RECEIVE_COUNT } from '../support/executor-fixture.ts';
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
    expect(resultA.batchItemFailures).toEqual([]);
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

  it('lets the queue redrive policy move a message whose worker keeps dying to the DLQ, with the ingest context', async () => {
    // Prepare: an action that always dies, as a worker killed by its timeout or memory does.
    const dying: Action = () => Promise.reject(new SimulatedCrash());
    const fx = await executorFixture({ actions: { dying }, action: 'dying' });
    const key = await fx.deliver({ amount: 3 });
    // Act: every receive fails (crash, then live lease); fauxqs moves it after maxReceiveCount.
    for (let i = 0; i < MAX_RECEIVE_COUNT + 1; i++) {
      fx.clockOffsetMs += 60_000;
      await fx.poll();
      await new Promise((r) => setTimeout(r, 1_050));
    }
    await fx.poll();
    const dead = await fx.takeDeadLetters();
    // Assess
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ route: 'standard-webhooks', key, headers: { 'content-type': 'application/json' } });
    expect((await fx.record(key))?.status).toBe('EXECUTING');
  });
});
