import { describe, expect, it } from 'vitest';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { SimMessageVisibility, SimulatedQueue, SimVisibilityLimitExceeded, SimWorkQueue } from './simulated-sqs.ts';
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

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const DAY_S = DAY_MS / 1000;

/** A seeded generator in [0, 1) (mulberry32), so a test's random picks replay exactly. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
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

describe('SimulatedQueue, as unkind as AWS documents', () => {
  it('hands a message in flight to one worker to a second worker at once, with a new handle and its count + 1', () => {
    // Prepare
    const { queue } = queuePair(5);
    const id = queue.send('hello');
    const [first] = queue.receive(1);
    // Act
    const plainReceive = queue.receive(1);
    const [second] = queue.receive(1, { includeInFlight: true });
    // Assess
    expect(plainReceive).toEqual([]);
    expect(second?.messageId).toBe(id);
    expect(second?.receiptHandle).not.toBe(first?.receiptHandle);
    expect([first?.attributes.ApproximateReceiveCount, second?.attributes.ApproximateReceiveCount]).toEqual(['1', '2']);
    expect(queue.stats).toEqual({ duplicates: 0, concurrentDeliveries: 1, unseenReceives: 0, expired: 0 });
    expect(queue.delete(first!.receiptHandle)).toBe(false);
    expect(queue.delete(second!.receiptHandle)).toBe(true);
  });

  it('brings a deleted message back as the same message id, body and attributes after a delay within the visibility timeout', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    const id = queue.send('hello', { route: { DataType: 'String', StringValue: 'github' } });
    const [first] = queue.receive(1);
    queue.delete(first!.receiptHandle);
    const depthAfterDelete = queue.depth;
    // Act
    const duplicated = queue.duplicate({ random: () => 0.5 });
    const early = queue.receive(10);
    clock.advance(15_000);
    const [again] = queue.receive(10);
    // Assess
    expect(depthAfterDelete).toBe(0);
    expect(duplicated).toBe(id);
    expect(early).toEqual([]);
    expect(again).toMatchObject({
      messageId: id,
      body: 'hello',
      attributes: { ApproximateReceiveCount: '2', SentTimestamp: first!.attributes.SentTimestamp },
      messageAttributes: first!.messageAttributes,
    });
    expect(queue.stats.duplicates).toBe(1);
    expect(queue.duplicate({ random: () => 0.5 })).toBe(id); // the copy in flight now; the ghost came back once
  });

  it('keeps the second stored copy of a message when the first is deleted', () => {
    // Prepare
    const { queue } = queuePair(5);
    const id = queue.send('hello');
    queue.duplicate();
    // Act
    const copies = queue.receive(10);
    const deleted = queue.delete(copies[0]!.receiptHandle);
    // Assess
    expect(copies.map((m) => m.messageId)).toEqual([id, id]);
    expect(deleted).toBe(true);
    expect(queue.snapshot()).toMatchObject([{ messageId: id, duplicate: true, inFlight: true }]);
  });

  it('counts a receive nobody saw toward maxReceiveCount, and moves the message to the DLQ without it ever being seen', () => {
    // Prepare
    const { clock, queue, dlq } = queuePair(2);
    const id = queue.send('poison');
    // Act
    const firstTaken = queue.unseenReceive();
    const whileHidden = queue.receive(10);
    clock.advance(30_000);
    const secondTaken = queue.unseenReceive();
    clock.advance(30_000);
    const thirdTaken = queue.unseenReceive(); // the receive that would exceed maxReceiveCount moves it
    // Assess
    expect([firstTaken, secondTaken, thirdTaken]).toEqual([true, true, false]);
    expect(whileHidden).toEqual([]);
    expect(queue.depth).toBe(0);
    expect(dlq.snapshot()).toMatchObject([{ messageId: id, receiveCount: 2, inFlight: false, sourceArn: queue.arn }]);
    expect(queue.stats.unseenReceives).toBe(2);
  });

  it('hands messages out of order when given a random, and the same order for the same seed', () => {
    // Prepare
    const run = (random?: () => number) => {
      const { queue } = queuePair(5);
      for (const body of ['a', 'b', 'c', 'd', 'e']) queue.send(body);
      return queue.receive(5, random === undefined ? {} : { random }).map((m) => m.body);
    };
    // Act
    const inOrder = run();
    const reversed = run(() => 0.99);
    const shuffled = run(seeded(7));
    // Assess
    expect(inOrder).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(reversed).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect([...shuffled].sort()).toEqual(inOrder);
    expect(run(seeded(7))).toEqual(shuffled);
  });

  it('drops a message, in flight or not, once its retention period from the enqueue timestamp has passed', () => {
    // Prepare
    const clock = manualClock();
    const queue = new SimulatedQueue({ name: 'short', clock, visibilityTimeoutSeconds: 30, retentionSeconds: 60 });
    queue.send('in flight');
    const [held] = queue.receive(1);
    clock.advance(10_000);
    queue.send('visible');
    clock.advance(49_999);
    const before = queue.depth;
    // Act
    clock.advance(1);
    const afterFirst = queue.snapshot().map((m) => m.body);
    clock.advance(10_000);
    const received = queue.receive(10);
    // Assess
    expect(before).toBe(2);
    expect(afterFirst).toEqual(['visible']);
    expect(received).toEqual([]);
    expect(queue.delete(held!.receiptHandle)).toBe(false);
    expect(queue.stats.expired).toBe(2);
    expect(() => new SimulatedQueue({ name: 'bad', clock, visibilityTimeoutSeconds: 30, retentionSeconds: 59 })).toThrow(/MessageRetentionPeriod 59/);
  });

  it('keeps a message 14 days by default', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    queue.send('hello');
    // Act
    clock.advance(14 * DAY_MS - 1);
    const before = queue.depth;
    clock.advance(1);
    // Assess
    expect(before).toBe(1);
    expect(queue.depth).toBe(0);
  });

  it("expires a DLQ copy by its original enqueue time: 1 day in the source and a 4-day DLQ retention leave it 3 days in the DLQ", () => {
    // Prepare
    const clock = manualClock();
    const dlq = new SimulatedQueue({ name: 'work-dlq', clock, visibilityTimeoutSeconds: 30, retentionSeconds: 4 * DAY_S });
    const queue = new SimulatedQueue({ name: 'work', clock, visibilityTimeoutSeconds: 30, redrive: { deadLetterQueue: dlq, maxReceiveCount: 1 } });
    const sentAt = clock.now();
    queue.send('poison');
    queue.receive(1);
    clock.advance(DAY_MS);
    queue.receive(1); // moves it
    // Act
    const moved = dlq.snapshot();
    clock.advance(3 * DAY_MS - 1);
    const justBefore = dlq.depth;
    clock.advance(1);
    // Assess
    expect(moved).toMatchObject([{ sentAt, expiresAt: sentAt + 4 * DAY_MS }]);
    expect(justBefore).toBe(1);
    expect(dlq.depth).toBe(0);
    expect(dlq.stats.expired).toBe(1);
  });

  it('refuses a visibility change that would hide a message past 12 hours after its receive, with SQS message, and counts from the latest receive', () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    queue.send('hello');
    const [message] = queue.receive(1);
    const handle = message!.receiptHandle;
    queue.changeVisibility(handle, 7_200); // a heartbeat keeps it in flight
    clock.advance(HOUR_MS);
    // Act
    const atLimit = queue.changeVisibility(handle, 39_600); // ends exactly 12 h after the receive
    const hiddenUntil = queue.snapshot()[0]?.visibleAt;
    const refuse = () => queue.changeVisibility(handle, 39_601);
    // Assess
    expect(atLimit).toBe(true);
    expect(refuse).toThrow(SimVisibilityLimitExceeded);
    expect(refuse).toThrow(
      expect.objectContaining({
        name: 'InvalidParameterValue',
        message: 'Value 39601 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds].',
      }),
    );
    expect(queue.snapshot()[0]?.visibleAt).toBe(hiddenUntil);
    clock.advance(11 * HOUR_MS);
    const [again] = queue.receive(1);
    expect(queue.changeVisibility(again!.receiptHandle, 43_200)).toBe(true);
  });

  it('gives a moved message a new id, a new enqueue time that restarts its retention, and a reset receive count', () => {
    // Prepare
    const clock = manualClock();
    const dlq = new SimulatedQueue({ name: 'work-dlq', clock, visibilityTimeoutSeconds: 30 });
    const queue = new SimulatedQueue({
      name: 'work',
      clock,
      visibilityTimeoutSeconds: 30,
      retentionSeconds: 4 * DAY_S,
      redrive: { deadLetterQueue: dlq, maxReceiveCount: 1 },
    });
    const id = queue.send('poison');
    queue.receive(1);
    clock.advance(30_000);
    queue.receive(1); // to the DLQ
    clock.advance(3 * DAY_MS);
    // Act
    dlq.startMessageMoveTask();
    const movedAt = clock.now();
    clock.advance(2 * DAY_MS); // 5 days after the original enqueue: past the source's 4-day retention counted from it
    const [back] = queue.receive(1);
    // Assess
    expect(back?.messageId).not.toBe(id);
    expect(back).toMatchObject({ body: 'poison', attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(movedAt) } });
    expect(back?.attributes.DeadLetterQueueSourceArn).toBeUndefined();
    expect(queue.snapshot()).toMatchObject([{ expiresAt: movedAt + 4 * DAY_MS }]);
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

  it('rejects with SQS InvalidParameterValue when the clamped 12 hours would end past 12 hours after the receive', async () => {
    // Prepare
    const { clock, queue } = queuePair(5);
    const visibility = new SimMessageVisibility(queue);
    queue.send('hello');
    const [message] = queue.receive(1);
    clock.advance(1_000);
    // Act, Assess
    await expect(visibility.changeVisibility(message!.receiptHandle, 99_999)).rejects.toThrow(/beyond the limit \[43200 seconds\]/);
  });
});
