/**
 * An in-memory SQS standard queue for the seeded protocol simulation. Time comes only from an
 * injected clock and ids only from per-queue counters, so one seed replays one run exactly.
 *
 * AWS wording the semantics below follow (SQS Developer Guide and API Reference):
 * - ReceiveMessage: "ApproximateReceiveCount – Returns the number of times a message has been
 *   received across all queues but not deleted." Hence the count survives the move to a DLQ.
 * - Dead-letter queue retention: "For standard queues ... When a message is moved to a
 *   dead-letter queue, the enqueue timestamp is unchanged." Hence SentTimestamp survives too.
 * - DLQ redrive (StartMessageMoveTask): "The redrive task resets the retention period. All
 *   redriven messages are considered new messages and are assigned a new messageID and
 *   enqueueTime." With no DestinationArn, "the messages will be redriven back to their
 *   respective original source queues". AWS says nothing explicit about ApproximateReceiveCount
 *   after a move task, hence `moveTaskResetsReceiveCount`.
 *
 * What it leaves out on purpose: a standard queue may deliver a message twice or out of order
 * even within its visibility timeout; the simulation injects such faults itself, so this queue
 * stays exact. There are no delay queues, retention expiry or long polling.
 */
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';

/** The simulation's clock: epoch milliseconds, advanced by the simulation, never by the queue. */
export interface SimClock {
  now(): number;
}

/** How a simulated queue is set up, as CreateQueue attributes would. */
export interface SimQueueOptions {
  readonly name: string;
  readonly clock: SimClock;
  readonly visibilityTimeoutSeconds: number;
  /** The queue's RedrivePolicy. @default - no redrive: messages are received forever */
  readonly redrive?: { readonly deadLetterQueue: SimulatedQueue; readonly maxReceiveCount: number };
  /**
   * On a move task out of this queue (as a DLQ), whether each moved message starts again at
   * ApproximateReceiveCount 0. AWS documents moved messages as "new messages" but not their
   * receive count; `false` is the worst case for a receiver that counts receives.
   * @default true
   */
  readonly moveTaskResetsReceiveCount?: boolean;
}

/** A received message, in the shape the Lambda SQS event source hands a record to a handler. */
export interface SimReceivedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: {
    ApproximateReceiveCount: string;
    SentTimestamp: string;
    ApproximateFirstReceiveTimestamp: string;
    SenderId: string;
    DeadLetterQueueSourceArn?: string;
  };
  readonly messageAttributes: Record<string, { dataType: string; stringValue?: string }>;
}

/** The error SQS answers with a bad parameter, named with its AWS error code as the SDK does. */
export class SimInvalidParameterValue extends Error {
  override readonly name = 'InvalidParameterValue';
}

/** The SenderId every simulated send carries: there is one IAM principal in the simulation. */
const SENDER_ID = 'AIDASIMULATEDSENDER';
/** SQS hides a message for at most 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: SimReceivedMessage['messageAttributes'];
  readonly sentAt: number;
  /** Arrival order in this queue: the tie-break that makes receive order replayable. */
  readonly seq: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** Only the latest handle is kept; every older one is stale by construction. */
  receiptHandle?: string;
  /** Set while in a DLQ: the queue whose redrive policy moved it here. */
  readonly source?: SimulatedQueue;
}

/** An SQS standard queue with visibility timeouts, receipt handles, a redrive policy and move tasks. */
export class SimulatedQueue {
  readonly name: string;
  readonly arn: string;
  readonly #clock: SimClock;
  readonly #visibilityMs: number;
  readonly #redrive: SimQueueOptions['redrive'];
  readonly #moveTaskResetsReceiveCount: boolean;
  /** Kept in arrival (seq) order, which is also the order a move task drains a DLQ in. */
  readonly #messages = new Map<string, StoredMessage>();
  readonly #byHandle = new Map<string, StoredMessage>();
  #ids = 0;
  #seq = 0;
  #handles = 0;

  constructor(options: SimQueueOptions) {
    checkSeconds('VisibilityTimeout', options.visibilityTimeoutSeconds);
    const maxReceiveCount = options.redrive?.maxReceiveCount;
    if (maxReceiveCount !== undefined && !(Number.isInteger(maxReceiveCount) && maxReceiveCount >= 1 && maxReceiveCount <= 1000)) {
      throw new SimInvalidParameterValue(`queue ${options.name}: maxReceiveCount ${maxReceiveCount} must be an integer from 1 to 1000`);
    }
    this.name = options.name;
    this.arn = `arn:aws:sqs:us-east-1:000000000000:${options.name}`;
    this.#clock = options.clock;
    this.#visibilityMs = options.visibilityTimeoutSeconds * 1000;
    this.#redrive = options.redrive;
    this.#moveTaskResetsReceiveCount = options.moveTaskResetsReceiveCount ?? true;
  }

  /** SendMessage: the message is visible at once (no delay queues). Returns its messageId. */
  send(body: string, messageAttributes: Record<string, { DataType: string; StringValue?: string }> = {}): string {
    const attributes: SimReceivedMessage['messageAttributes'] = {};
    for (const [name, { DataType, StringValue }] of Object.entries(messageAttributes)) {
      attributes[name] = StringValue === undefined ? { dataType: DataType } : { dataType: DataType, stringValue: StringValue };
    }
    const now = this.#clock.now();
    const messageId = this.#nextId();
    this.#accept({ messageId, body, messageAttributes: attributes, sentAt: now, seq: 0, visibleAt: now, receiveCount: 0 });
    return messageId;
  }

  /**
   * ReceiveMessage: up to `max` visible messages, oldest visible first by (visibleAt, arrival),
   * so runs replay exactly. Each receive hides the message for the visibility timeout, adds one
   * to its receive count and issues a new receipt handle, which makes every older handle stale.
   * A message whose count already equals maxReceiveCount goes to the DLQ instead of being
   * returned, and does not count against `max`: that is how SQS applies a redrive policy.
   */
  receive(max: number): SimReceivedMessage[] {
    if (!Number.isInteger(max) || max < 1 || max > 10) {
      throw new SimInvalidParameterValue(`queue ${this.name}: MaxNumberOfMessages ${max} must be an integer from 1 to 10`);
    }
    const now = this.#clock.now();
    const visible = [...this.#messages.values()].filter((m) => m.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt || a.seq - b.seq);
    const received: SimReceivedMessage[] = [];
    for (const message of visible) {
      if (received.length === max) break;
      if (this.#redrive !== undefined && message.receiveCount >= this.#redrive.maxReceiveCount) {
        this.#remove(message);
        // Same id, body, attributes, count and SentTimestamp; only the DLQ's arrival order is new.
        this.#redrive.deadLetterQueue.#accept({ ...message, seq: 0, visibleAt: now, receiptHandle: undefined, source: this });
        continue;
      }
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.visibleAt = now + this.#visibilityMs;
      if (message.receiptHandle !== undefined) this.#byHandle.delete(message.receiptHandle);
      message.receiptHandle = `${message.messageId}#${++this.#handles}`;
      this.#byHandle.set(message.receiptHandle, message);
      received.push(toReceived(message));
    }
    return received;
  }

  /**
   * DeleteMessage. Only the latest receipt handle deletes, even after the visibility timeout ran
   * out; AWS answers an older one with "the request succeeds, but the message might not be
   * deleted", which the simulation sees as `false`.
   */
  delete(receiptHandle: string): boolean {
    const message = this.#byHandle.get(receiptHandle);
    if (message === undefined) return false;
    this.#remove(message);
    return true;
  }

  /**
   * ChangeMessageVisibility: visible again at now + seconds, for an in-flight message with its
   * latest receipt handle. A stale handle, or a message already visible again (AWS answers it
   * with MessageNotInflight), returns `false` and changes nothing. Seconds outside 0..43200
   * throw, as AWS does. AWS also caps the total at 12 hours from the first receive; the
   * simulation never asks for that much, so the cap is not modelled.
   */
  changeVisibility(receiptHandle: string, seconds: number): boolean {
    checkSeconds('VisibilityTimeout', seconds);
    const message = this.#byHandle.get(receiptHandle);
    const now = this.#clock.now();
    if (message === undefined || message.visibleAt <= now) return false;
    message.visibleAt = now + seconds * 1000;
    return true;
  }

  /**
   * StartMessageMoveTask from this queue (a DLQ), completed at once: every message, visible or in
   * flight (whose handles go stale), oldest first, to `destination` or else to the queue its
   * redrive came from. Each arrives as a new, visible message with a new messageId and
   * SentTimestamp, as AWS documents; the receive count follows `moveTaskResetsReceiveCount`.
   * Throws before moving anything when a message has no source queue and no destination is given.
   */
  startMessageMoveTask(destination?: SimulatedQueue): number {
    const moves = [...this.#messages.values()].map((message) => {
      const target = destination ?? message.source;
      if (target === undefined) throw new Error(`queue ${this.name}: message ${message.messageId} has no source queue; give a destination`);
      return { message, target };
    });
    const now = this.#clock.now();
    for (const { message, target } of moves) {
      this.#remove(message);
      const keep = !this.#moveTaskResetsReceiveCount;
      target.#accept({
        messageId: target.#nextId(),
        body: message.body,
        messageAttributes: message.messageAttributes,
        sentAt: now,
        seq: 0,
        visibleAt: now,
        receiveCount: keep ? message.receiveCount : 0,
        ...(keep && message.firstReceivedAt !== undefined ? { firstReceivedAt: message.firstReceivedAt } : {}),
      });
    }
    return moves.length;
  }

  /** For invariant checks: every message, with its state, in arrival order. */
  snapshot(): readonly { messageId: string; body: string; receiveCount: number; inFlight: boolean; visibleAt: number; sentAt: number; sourceArn?: string }[] {
    const now = this.#clock.now();
    return [...this.#messages.values()].map((m) => ({
      messageId: m.messageId,
      body: m.body,
      receiveCount: m.receiveCount,
      inFlight: m.visibleAt > now,
      visibleAt: m.visibleAt,
      sentAt: m.sentAt,
      ...(m.source === undefined ? {} : { sourceArn: m.source.arn }),
    }));
  }

  /** All messages, visible or in flight (ApproximateNumberOfMessages plus ...NotVisible). */
  get depth(): number {
    return this.#messages.size;
  }

  #nextId(): string {
    return `${this.name}-${++this.#ids}`;
  }

  /** Stores a message as the newest arrival; the caller's `seq` is replaced. */
  #accept(message: StoredMessage): void {
    this.#messages.set(message.messageId, { ...message, seq: ++this.#seq });
  }

  #remove(message: StoredMessage): void {
    this.#messages.delete(message.messageId);
    if (message.receiptHandle !== undefined) this.#byHandle.delete(message.receiptHandle);
  }
}

function checkSeconds(parameter: string, seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_VISIBILITY_SECONDS) {
    throw new SimInvalidParameterValue(`${parameter} ${seconds} must be an integer from 0 to ${MAX_VISIBILITY_SECONDS}`);
  }
}

function toReceived(m: StoredMessage): SimReceivedMessage {
  return {
    messageId: m.messageId,
    receiptHandle: m.receiptHandle ?? '',
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentAt),
      ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt ?? m.sentAt),
      SenderId: SENDER_ID,
      ...(m.source === undefined ? {} : { DeadLetterQueueSourceArn: m.source.arn }),
    },
    messageAttributes: { ...m.messageAttributes },
  };
}

/** Options of the simulated work queue. */
export interface SimWorkQueueOptions {
  /** Runs before each send and may throw: the simulation makes SQS fail, or crashes the sender. @default - none */
  readonly beforeSend?: (message: WorkMessage) => void;
}

/** The WorkQueue port on a simulated queue, with the body and attributes SqsWorkQueue sends. */
export class SimWorkQueue implements WorkQueue {
  readonly #queue: SimulatedQueue;
  readonly #beforeSend: ((message: WorkMessage) => void) | undefined;

  constructor(queue: SimulatedQueue, options: SimWorkQueueOptions = {}) {
    this.#queue = queue;
    this.#beforeSend = options.beforeSend;
  }

  send(message: WorkMessage): Promise<void> {
    // The send happens at the call, not a microtask later, so the simulation decides exactly
    // when it lands; a fault still reaches the caller as a rejection, as an SDK error would.
    try {
      this.#beforeSend?.(message);
      this.#queue.send(JSON.stringify(message), {
        route: { DataType: 'String', StringValue: message.route },
        key: { DataType: 'String', StringValue: message.key },
        ...(message.reason === undefined ? {} : { reason: { DataType: 'String', StringValue: message.reason } }),
      });
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/**
 * The MessageVisibility port on a simulated queue, rounding and clamping as
 * SqsMessageVisibility does. A stale handle changes nothing and does not fail, matching the
 * queue's `false`; the simulation reads the queue's state to see it.
 */
export class SimMessageVisibility implements MessageVisibility {
  readonly #queue: SimulatedQueue;
  readonly #minSeconds: number;

  /** @param minSeconds the shortest hiding this queue is asked for. @default 0 */
  constructor(queue: SimulatedQueue, minSeconds = 0) {
    this.#queue = queue;
    this.#minSeconds = minSeconds;
  }

  changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    const visibility = Math.min(MAX_VISIBILITY_SECONDS, Math.max(this.#minSeconds, Math.ceil(seconds)));
    try {
      this.#queue.changeVisibility(receiptHandle, visibility);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
