import { describe, expect, it } from 'vitest';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { SimMessageVisibility, SimulatedQueue, SimWorkQueue } from './simulated-sqs.ts';
import type { SimClock, SimQueueOptions } from './simulated-sqs.ts';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000): SimClock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** A work queue (30 s visibility) with a DLQ after `maxReceiveCount` receives. */
function queuePair(maxReceiveCount: number, dlqOptions: Partial<SimQueueOptions> = {}) {
  const clock = manualClock();
  const dlq = new SimulatedQueue({ name: 'work-dlq', clock, visibilityTimeoutSeconds: 30, ...dlqOptions });
  const queue = new SimulatedQueue({ name: 'work', clock, visibilityTimeoutSeconds: 30, redrive: { deadLetterQueue: dlq, maxReceiveCount } });
  return { clock, queue, dlq };
}

const workMessage: WorkMessage = {
  v: 1,
  route: 'github',
  key: 'delivery-1',
  fingerprint: 'f1',
  receivedAt: 1,
  body: '{}',
  bodyEncoding: 'utf8',
  headers: {},
};

describe('SimulatedQueue', () => {
  it('hides a received message for the visibility timeout, then hands it out again with a new receipt handle', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    const id = queue.send('hello');
    const [first] = queue.receive(10);
    // Act
    clock.advance(29_999);
    const whileHidden = queue.receive(10);
    clock.advance(1);
    const [second] = queue.receive(10);
    // Assess
    expect(whileHidden).toEqual([]);
    expect(second?.messageId).toBe(id);
    expect(second?.attributes.ApproximateReceiveCount).toBe('2');
    expect(second?.attributes.ApproximateFirstReceiveTimestamp).toBe(first?.attributes.ApproximateFirstReceiveTimestamp);
    expect(second?.receiptHandle).not.toBe(first?.receiptHandle);
    expect(queue.snapshot()).toMatchObject([{ messageId: id, inFlight: true, receiveCount: 2 }]);
  });

  it('ignores a delete with a stale receipt handle and deletes with the latest one', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    queue.send('hello');
    const [stale] = queue.receive(1);
    clock.advance(30_000);
    const [latest] = queue.receive(1);
    // Act
    const staleDeleted = queue.delete(stale!.receiptHandle);
    const unknownDeleted = queue.delete('no-such-handle');
    const depthAfterStale = queue.depth;
    clock.advance(60_000); // a latest handle deletes even after the timeout ran out
    const latestDeleted = queue.delete(latest!.receiptHandle);
    // Assess
    expect([staleDeleted, unknownDeleted, depthAfterStale]).toEqual([false, false, 1]);
    expect(latestDeleted).toBe(true);
    expect(queue.depth).toBe(0);
  });

  it('refuses changeVisibility with a stale receipt handle or for a message no longer in flight', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    queue.send('hello');
    const [stale] = queue.receive(1);
    clock.advance(30_000);
    const [latest] = queue.receive(1);
    // Act
    const staleChanged = queue.changeVisibility(stale!.receiptHandle, 0);
    clock.advance(30_000);
    const expiredChanged = queue.changeVisibility(latest!.receiptHandle, 0);
    // Assess
    expect([staleChanged, expiredChanged]).toEqual([false, false]);
    expect(queue.snapshot()[0]?.visibleAt).toBe(clock.now());
  });

  it('makes an in-flight message visible at once on changeVisibility to 0', () => {
    // Prepare
    const { queue } = queuePair(5);
    queue.send('hello');
    const [message] = queue.receive(1);
    // Act
    const changed = queue.changeVisibility(message!.receiptHandle, 0);
    const [again] = queue.receive(1);
    // Assess
    expect(changed).toBe(true);
    expect(again?.attributes.ApproximateReceiveCount).toBe('2');
  });

  it('hides an in-flight message for exactly N seconds from now on changeVisibility to N', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    queue.send('hello');
    const [message] = queue.receive(1);
    clock.advance(10_000);
    // Act
    queue.changeVisibility(message!.receiptHandle, 100);
    clock.advance(99_999);
    const early = queue.receive(1);
    clock.advance(1);
    const onTime = queue.receive(1);
    // Assess
    expect(early).toEqual([]);
    expect(onTime).toHaveLength(1);
  });

  it('rejects a visibility outside 0..43200 seconds as InvalidParameterValue', () => {
    // Prepare
    const { queue } = queuePair(5);
    queue.send('hello');
    const [message] = queue.receive(1);
    // Act, Assess
    expect(() => queue.changeVisibility(message!.receiptHandle, 43_201)).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
    expect(() => queue.changeVisibility(message!.receiptHandle, -1)).toThrow(/-1 must be an integer from 0 to 43200/);
    expect(queue.changeVisibility(message!.receiptHandle, 43_200)).toBe(true);
  });

  it('moves a message to the DLQ on the receive after maxReceiveCount', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(2);
    const sentAt = clock.now();
    const id = queue.send('poison', { route: { DataType: 'String', StringValue: 'github' } });
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1);
    clock.advance(30_000);
    // Act
    const third = queue.receive(10);
    const [dead] = dlq.receive(1);
    // Assess
    expect(third).toEqual([]);
    expect(queue.depth).toBe(0);
    expect(dead).toMatchObject({
      messageId: id,
      body: 'poison',
      attributes: { ApproximateReceiveCount: '3', SentTimestamp: String(sentAt), DeadLetterQueueSourceArn: queue.arn },
      messageAttributes: { route: { dataType: 'String', stringValue: 'github' } },
    });
    expect(dlq.snapshot()).toMatchObject([{ messageId: id, sourceArn: 'arn:aws:sqs:us-east-1:000000000000:work' }]);
  });

  it('hands out the next message in the same receive when one is moved to the DLQ', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(1);
    queue.send('poison');
    queue.receive(1);
    clock.advance(30_000);
    queue.send('fresh');
    // Act
    const received = queue.receive(1);
    // Assess
    expect(received.map((m) => m.body)).toEqual(['fresh']);
    expect(dlq.depth).toBe(1);
  });

  it('moves every DLQ message back to its source queue as a new visible message with the receive count reset', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(1);
    const id = queue.send('poison');
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1);
    const [inDlq] = dlq.receive(1); // in flight in the DLQ: moved too
    clock.advance(5_000);
    // Act
    const moved = dlq.startMessageMoveTask();
    const [back] = queue.receive(1);
    // Assess
    expect(moved).toBe(1);
    expect(dlq.depth).toBe(0);
    expect(dlq.delete(inDlq!.receiptHandle)).toBe(false);
    expect(back?.messageId).not.toBe(id);
    expect(back).toMatchObject({ body: 'poison', attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(clock.now()) } });
    expect(back?.attributes.DeadLetterQueueSourceArn).toBeUndefined();
  });

  it('keeps the receive count on a move task when moveTaskResetsReceiveCount is false, so one more receive dead-letters it again', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(2, { moveTaskResetsReceiveCount: false });
    queue.send('poison');
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1);
    // Act
    dlq.startMessageMoveTask();
    const countAfterMove = queue.snapshot()[0]?.receiveCount;
    const received = queue.receive(1);
    // Assess
    expect(countAfterMove).toBe(2);
    expect(received).toEqual([]);
    expect(dlq.depth).toBe(1);
  });

  it('moves DLQ messages to a given destination, and refuses a message with no source queue', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(1);
    const other = new SimulatedQueue({ name: 'other', clock, visibilityTimeoutSeconds: 30 });
    queue.send('poison');
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1);
    // Act
    dlq.startMessageMoveTask(other);
    other.receive(1);
    clock.advance(30_000);
    // Assess
    expect(other.snapshot()).toMatchObject([{ messageId: 'other-1', body: 'poison' }]);
    expect(queue.depth).toBe(0);
    expect(() => other.startMessageMoveTask()).toThrow(/other-1 has no source queue/);
    expect(other.depth).toBe(1);
  });

  it('hands out messages oldest-visible-first, the same way on every run', () => {
    // Prepare
    const run = () => {
      const { clock, queue } = queuePair(5);
      queue.send('a');
      queue.send('b');
      queue.send('c');
      const [a] = queue.receive(1);
      clock.advance(1_000);
      queue.changeVisibility(a!.receiptHandle, 0); // visible at +1 s: after b and c
      return queue.receive(10).map((m) => `${m.body}:${m.messageId}:${m.receiptHandle}`);
    };
    // Act
    const first = run();
    const second = run();
    // Assess
    expect(first.map((m) => m.split(':')[0])).toEqual(['b', 'c', 'a']);
    expect(second).toEqual(first);
  });

  it('returns at most max messages and rejects a max outside 1..10', () => {
    // Prepare
    const { queue } = queuePair(5);
    for (let i = 0; i < 12; i++) queue.send(`m${i}`);
    // Act, Assess
    expect(queue.receive(10)).toHaveLength(10);
    expect(() => queue.receive(11)).toThrow(/MaxNumberOfMessages 11/);
    expect(queue.receive(10)).toHaveLength(2);
  });
});

describe('SimWorkQueue', () => {
  it('sends the work message as JSON with route and key attributes, as SqsWorkQueue does', async () => {
    // Prepare
    const { queue } = queuePair(5);
    const workQueue = new SimWorkQueue(queue);
    // Act
    await workQueue.send({ ...workMessage, reason: 'dead-letter' });
    const [message] = queue.receive(1);
    // Assess
    expect(JSON.parse(message!.body)).toEqual({ ...workMessage, reason: 'dead-letter' });
    expect(message?.messageAttributes).toEqual({
      route: { dataType: 'String', stringValue: 'github' },
      key: { dataType: 'String', stringValue: 'delivery-1' },
      reason: { dataType: 'String', stringValue: 'dead-letter' },
    });
  });

  it('rejects the send and leaves the queue empty when the fault hook throws', async () => {
    // Prepare
    const { queue } = queuePair(5);
    const workQueue = new SimWorkQueue(queue, {
      beforeSend: () => {
        throw new Error('sqs unavailable');
      },
    });
    // Act, Assess
    await expect(workQueue.send(workMessage)).rejects.toThrow('sqs unavailable');
    expect(queue.depth).toBe(0);
  });
});

describe('SimMessageVisibility', () => {
  it('rounds seconds up and clamps them to 0..43200, as SqsMessageVisibility does', async () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    const visibility = new SimMessageVisibility(queue);
    queue.send('hello');
    const [message] = queue.receive(1);
    const handle = message!.receiptHandle;
    // Act
    await visibility.changeVisibility(handle, 1.2);
    const rounded = queue.snapshot()[0]?.visibleAt;
    await visibility.changeVisibility(handle, 99_999);
    const clamped = queue.snapshot()[0]?.visibleAt;
    await visibility.changeVisibility(handle, -5);
    const released = queue.snapshot()[0]?.visibleAt;
    // Assess
    expect(rounded).toBe(clock.now() + 2_000);
    expect(clamped).toBe(clock.now() + 43_200_000);
    expect(released).toBe(clock.now());
  });
});
