/**
 * An in-memory SQS standard queue for the seeded protocol simulation. Time comes only from an
 * injected clock, ids only from per-queue counters, and every random choice from a `random`
 * function the caller passes, so one seed replays one run exactly.
 *
 * What AWS documents, and what this queue does with it (each behaviour's code cites its line):
 *
 * [D1] At-least-once delivery. "Standard queues ensure at-least-once message delivery, but due
 *   to the highly distributed architecture, more than one copy of a message might be delivered,
 *   and messages may occasionally arrive out of order. Despite this, standard queues make a
 *   best-effort attempt to maintain the order in which messages are sent."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues.html
 *   "Amazon SQS stores copies of your messages on multiple servers ... one of the servers that
 *   stores a copy of a message might be unavailable when you receive or delete a message. If this
 *   occurs, the copy of the message isn't deleted on the server that is unavailable, and you might
 *   get that message copy again when you receive messages."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html
 *   "For standard queues, the visibility timeout isn't a guarantee against receiving a message
 *   twice." (the visibility timeout page, [D2]). Hence: `duplicate()` stores a second copy (same
 *   messageId, body, attributes and SentTimestamp) of a stored message or of one of the last few
 *   deleted ones; `receive(max, { includeInFlight })` can hand out a message that another worker
 *   holds right now; `receive(max, { random })` picks out of order.
 *
 * [D2] Visibility timeout. "The default visibility timeout for a message is 30 seconds. The
 *   minimum is 0 seconds. The maximum is 12 hours." ChangeMessageVisibility: "the 10 seconds begin
 *   to count from the time that you make the ChangeMessageVisibility call"; "If you try to extend
 *   the visibility timeout beyond the maximum, your request is rejected."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
 *   The maximum counts from the receive: "The maximum visibility timeout is 12 hours from the time
 *   that Amazon SQS receives the ReceiveMessage request. Extending the visibility timeout does not
 *   reset the 12-hour maximum." (SQS Developer Guide, sqs-visibility-timeout.html, as quoted in
 *   awsdocs/amazon-sqs-developer-guide issue #25 and pull request #40), and "the new timeout
 *   period applies only to the particular receipt of the message". SQS refuses the excess with
 *   InvalidParameterValue "Value 43199 for parameter VisibilityTimeout is invalid. Reason: Total
 *   VisibilityTimeout for the message is beyond the limit [43200 seconds]." (the service's answer
 *   quoted in aws/aws-sdk-net issue #794 and localstack/localstack issue #3956). Hence
 *   `changeVisibility` throws SimVisibilityLimitExceeded when now + seconds passes 12 hours after
 *   that receipt's receive; it neither clamps nor recomputes ("It will not automatically
 *   recalculate and increase the timeout to the maximum time remaining",
 *   https://docs.aws.amazon.com/sdkfornet/latest/apidocs/items/MSQSSQSChangeMessageVisibilityChangeMessageVisibilityRequestNET35.html).
 *
 * [D3] Receive counts. "ApproximateReceiveCount – Returns the number of times a message has been
 *   received across all queues but not deleted." (ReceiveMessage, and
 *   node_modules/@aws-sdk/client-sqs/dist-types/models/models_0.d.ts). A receive whose answer the
 *   consumer never got still counts: "it is possible for a consumer to not receive a message even
 *   when Amazon SQS marks the message as delivered while returning successfully from a
 *   ReceiveMessage API method call. In this case, Amazon SQS records the message as delivered at
 *   least once, although the consumer has never received it."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/avoiding-inconsistent-message-processing.html
 *   Hence `unseenReceive()`: the count rises, the timeout starts, and nobody holds the handle.
 *
 * [D4] Redrive policy. "maxReceiveCount – The number of times a message is delivered to the
 *   source queue before being moved to the dead-letter queue. ... When the ReceiveCount for a
 *   message exceeds the maxReceiveCount for a queue, Amazon SQS moves the message to the
 *   dead-letter-queue." (SetQueueAttributes, same SDK file). Hence a message that has been
 *   received maxReceiveCount times is moved, not returned, by the next receive, seen or unseen:
 *   the receive that would make the count exceed the maximum. The move keeps the messageId, body,
 *   attributes, count and SentTimestamp and adds DeadLetterQueueSourceArn.
 *
 * [D5] Retention. "MessageRetentionPeriod – ... Valid values: An integer from 60 seconds (1
 *   minute) to 1,209,600 seconds (14 days). Default: 345,600 (4 days)." (SetQueueAttributes, same
 *   SDK file). This simulation defaults to the 14-day maximum, as the stack deploys. "For
 *   standard queues, the expiration of a message is always based on its original enqueue
 *   timestamp. When a message is moved to a dead-letter queue, the enqueue timestamp is
 *   unchanged. ... assume that a message spends 1 day in the original queue before it's moved to
 *   a dead-letter queue. If the dead-letter queue's retention period is 4 days, the message is
 *   deleted from the dead-letter queue after 3 days"
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
 *   Hence a message, in flight or not, is gone at the first operation at or after
 *   SentTimestamp + the queue's own retention, and a DLQ copy is judged by its original one.
 *
 * [D6] Message move task (StartMessageMoveTask, the console's "Start DLQ redrive"). "If this field
 *   [DestinationArn] is left blank, the messages will be redriven back to their respective
 *   original source queues."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 *   "Dead-letter queues redrive messages in the order they are received, starting with the oldest
 *   message." "The redrive task resets the retention period. All redriven messages are considered
 *   new messages and are assigned a new messageID and enqueueTime."
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 *   Hence each moved message arrives with a new messageId and SentTimestamp, and its retention
 *   counts from the move. AWS says nothing explicit about ApproximateReceiveCount after a move:
 *   "new messages" suggests 0, and `moveTaskResetsReceiveCount: false` is the worst case for a
 *   receiver that counts receives.
 *
 * A message's own DelaySeconds (0 to 900: SQS API Reference, SendMessage) keeps it invisible that
 * long after its send; work waiting for a rate limit comes back this way.
 *
 * What it leaves out on purpose: queue-level delays (DelaySeconds as a queue attribute), long polling, the asynchronous pace of a move task
 * (it completes at once, and moves in-flight messages too), short polling's empty answers, and
 * FIFO queues.
 *
 * [D8] Message contents. "A message can include only XML, JSON, and unformatted text. The
 *   following Unicode characters are allowed ... #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to
 *   #xFFFD | #x10000 to #x10FFFF. If a message contains characters outside the allowed set,
 *   Amazon SQS rejects the message and returns an InvalidMessageContents error." (SendMessage,
 *   MessageBody, in the SDKs' API reference of 2026; older copies said SQS replaced them with
 *   U+FFFD.) Hence `send` refuses a body or attribute value holding one, whole.
 */
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import type { SendOptions, WorkQueue } from '../../lambdas/ports/work-queue.ts';
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
  /**
   * MessageRetentionPeriod, 60..1,209,600 seconds, counted from each message's enqueue
   * timestamp (SentTimestamp), which a move to this queue as a DLQ keeps [D5].
   * @default 1_209_600 (14 days, the SQS maximum)
   */
  readonly retentionSeconds?: number;
}

/** ReceiveMessage's unkind options; without them a receive is the oldest-visible-first one. */
export interface SimReceiveOptions {
  /** Picks the messages out of order among the candidates [D1]. @default - oldest visible first */
  readonly random?: () => number;
  /**
   * Lets the receive also hand out a message in flight to another worker right now [D1]: the
   * same message with a new receipt handle (the other worker's goes stale) and its count + 1.
   * @default false
   */
  readonly includeInFlight?: boolean;
}

/** Cumulative counts of the unkind things this queue did, for the simulation's summary. */
export interface SimQueueStats {
  /** Copies stored again by `duplicate()`. */
  readonly duplicates: number;
  /** Messages handed out while in flight to another worker. */
  readonly concurrentDeliveries: number;
  /** Receives whose answer nobody got, that took a message. */
  readonly unseenReceives: number;
  /** Messages dropped by the retention period. */
  readonly expired: number;
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

/** SendMessage with a character outside SQS's set [D8]. */
export class SimInvalidMessageContents extends Error {
  override readonly name = 'InvalidMessageContents';
}

/** What SQS accepts: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF [D8]. */
const REFUSED_BY_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * ChangeMessageVisibility past 12 hours after the receive [D2]. SQS answers it as any other
 * InvalidParameterValue (so `name` is the same); the subclass only lets a test tell it apart.
 */
export class SimVisibilityLimitExceeded extends SimInvalidParameterValue {}

/** The SenderId every simulated send carries: there is one IAM principal in the simulation. */
const SENDER_ID = 'AIDASIMULATEDSENDER';
/** SQS hides a message for at most 12 hours [D2]. */
const MAX_VISIBILITY_SECONDS = 43_200;
/** SendMessage's longest DelaySeconds: 15 minutes (SQS API Reference, SendMessage). */
const MAX_DELAY_SECONDS = 900;
/** MessageRetentionPeriod's range, and the stack's choice of its maximum [D5]. */
const MIN_RETENTION_SECONDS = 60;
const MAX_RETENTION_SECONDS = 1_209_600;
/** How many deleted messages may still come back from a copy their delete missed [D1]. */
const GHOSTS_KEPT = 5;

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: SimReceivedMessage['messageAttributes'];
  /** The enqueue timestamp: SentTimestamp, and where retention counts from [D5]. */
  readonly sentAt: number;
  /** Arrival order in this queue, and the copy's key: two copies share a messageId [D1]. */
  readonly seq: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** The latest receive of this copy: its 12 h visibility maximum counts from here [D2]. */
  receivedAt?: number;
  /** Only the latest handle is kept; every older one is stale by construction. */
  receiptHandle?: string;
  /** Set while in a DLQ: the queue whose redrive policy moved it here. */
  readonly source?: SimulatedQueue;
  /** A second stored copy made by `duplicate()`. */
  readonly duplicate?: boolean;
}

/** One message copy as `snapshot()` shows it. */
export interface SimQueueSnapshotEntry {
  readonly messageId: string;
  readonly body: string;
  readonly receiveCount: number;
  readonly inFlight: boolean;
  readonly visibleAt: number;
  readonly sentAt: number;
  readonly sourceArn?: string;
  /** True for a copy stored again by `duplicate()`: another entry may carry the same messageId. */
  readonly duplicate: boolean;
  /** When retention drops it: sentAt + this queue's retention [D5]. */
  readonly expiresAt: number;
  /** The latest receive, if any: a changeVisibility may hide it until receivedAt + 12 h [D2]. */
  readonly receivedAt?: number;
}

/**
 * An SQS standard queue with visibility timeouts, receipt handles, a redrive policy, retention,
 * move tasks, and, when asked, the duplicates, concurrent and unseen receives and disorder of
 * at-least-once delivery.
 */
export class SimulatedQueue {
  readonly name: string;
  readonly arn: string;
  readonly #clock: SimClock;
  readonly #visibilityMs: number;
  readonly #retentionMs: number;
  readonly #redrive: SimQueueOptions['redrive'];
  readonly #moveTaskResetsReceiveCount: boolean;
  /** Keyed by seq, so kept in arrival order, which is also the order a move task drains a DLQ in. */
  readonly #messages = new Map<number, StoredMessage>();
  readonly #byHandle = new Map<string, StoredMessage>();
  /** The last few deleted messages, oldest first: a copy their delete did not reach [D1]. */
  readonly #ghosts: StoredMessage[] = [];
  readonly #stats = { duplicates: 0, concurrentDeliveries: 0, unseenReceives: 0, expired: 0 };
  #ids = 0;
  #seq = 0;
  #handles = 0;

  constructor(options: SimQueueOptions) {
    checkSeconds('VisibilityTimeout', options.visibilityTimeoutSeconds);
    const maxReceiveCount = options.redrive?.maxReceiveCount;
    if (maxReceiveCount !== undefined && !(Number.isInteger(maxReceiveCount) && maxReceiveCount >= 1 && maxReceiveCount <= 1000)) {
      throw new SimInvalidParameterValue(`queue ${options.name}: maxReceiveCount ${maxReceiveCount} must be an integer from 1 to 1000`);
    }
    const retentionSeconds = options.retentionSeconds ?? MAX_RETENTION_SECONDS;
    if (!Number.isInteger(retentionSeconds) || retentionSeconds < MIN_RETENTION_SECONDS || retentionSeconds > MAX_RETENTION_SECONDS) {
      throw new SimInvalidParameterValue(
        `queue ${options.name}: MessageRetentionPeriod ${retentionSeconds} must be an integer from ${MIN_RETENTION_SECONDS} to ${MAX_RETENTION_SECONDS}`,
      );
    }
    this.name = options.name;
    this.arn = `arn:aws:sqs:us-east-1:000000000000:${options.name}`;
    this.#clock = options.clock;
    this.#visibilityMs = options.visibilityTimeoutSeconds * 1000;
    this.#retentionMs = retentionSeconds * 1000;
    this.#redrive = options.redrive;
    this.#moveTaskResetsReceiveCount = options.moveTaskResetsReceiveCount ?? true;
  }

  /** SendMessage: the message is visible after `delaySeconds` (0 to 900), at once by default. Returns its messageId. */
  send(body: string, messageAttributes: Record<string, { DataType: string; StringValue?: string }> = {}, delaySeconds = 0): string {
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
      throw new SimInvalidParameterValue(`Value ${delaySeconds} for parameter DelaySeconds is invalid. Reason: must be an integer from 0 to ${MAX_DELAY_SECONDS}.`);
    }
    // [D8] A body or attribute value with a character outside SQS's set is refused whole.
    for (const text of [body, ...Object.values(messageAttributes).map((a) => a.StringValue ?? '')]) {
      const refused = REFUSED_BY_SQS.exec(text);
      if (refused !== null) throw new SimInvalidMessageContents(`Invalid characters found. Character U+${(refused[0].codePointAt(0) ?? 0).toString(16).toUpperCase()} is not allowed.`);
    }
    const attributes: SimReceivedMessage['messageAttributes'] = {};
    for (const [name, { DataType, StringValue }] of Object.entries(messageAttributes)) {
      attributes[name] = StringValue === undefined ? { dataType: DataType } : { dataType: DataType, stringValue: StringValue };
    }
    const now = this.#now();
    const messageId = this.#nextId();
    this.#accept({ messageId, body, messageAttributes: attributes, sentAt: now, seq: 0, visibleAt: now + delaySeconds * 1000, receiveCount: 0 });
    return messageId;
  }

  /**
   * ReceiveMessage: up to `max` (1..10) messages. Without options, oldest visible first by
   * (visibleAt, arrival), so runs replay exactly; with `random`, picked in any order among the
   * candidates [D1]; with `includeInFlight`, messages in flight to another worker are candidates
   * too (after the visible ones when there is no `random`) [D1]. Each receive hides the message
   * for the visibility timeout, adds one to its receive count and issues a new receipt handle,
   * which makes every older handle stale. A message already received maxReceiveCount times goes
   * to the DLQ instead of being returned, and does not count against `max` [D4].
   */
  receive(max: number, options: SimReceiveOptions = {}): SimReceivedMessage[] {
    if (!Number.isInteger(max) || max < 1 || max > 10) {
      throw new SimInvalidParameterValue(`queue ${this.name}: MaxNumberOfMessages ${max} must be an integer from 1 to 10`);
    }
    return this.#receive(this.#now(), max, options).map(toReceived);
  }

  /**
   * One receive whose answer is lost on the way [D3]: it takes a visible message as
   * `receive(1, { random })` would (moving to the DLQ whatever the redrive policy moves [D4]),
   * counts the receive and starts the visibility timeout, and nobody gets the message or its
   * handle. Returns whether a message was taken.
   */
  unseenReceive(options: { readonly random?: () => number } = {}): boolean {
    const random = options.random;
    const [taken] = this.#receive(this.#now(), 1, random === undefined ? {} : { random });
    if (taken === undefined) return false;
    this.#stats.unseenReceives += 1;
    return true;
  }

  /**
   * At-least-once delivery [D1]: another stored copy of a message comes back, as the same
   * messageId, body, attributes, SentTimestamp and receive count, visible after a delay of 0 up
   * to the visibility timeout. The original is chosen by `random` among every stored copy
   * (visible or in flight) and the last few deleted messages, whose delete missed this copy; a
   * deleted one comes back once. Without `random`: the oldest stored copy, visible at once.
   * Returns the duplicated messageId, or undefined when there is nothing to copy.
   */
  duplicate(options: { readonly random?: () => number } = {}): string | undefined {
    const random = options.random ?? (() => 0);
    const now = this.#now();
    const stored = [...this.#messages.values()];
    const candidates = [...stored, ...this.#ghosts];
    if (candidates.length === 0) return undefined;
    const index = pick(random, candidates.length);
    const original = candidates[index]!;
    if (index >= stored.length) this.#ghosts.splice(index - stored.length, 1);
    const delayMs = Math.min(this.#visibilityMs, Math.floor(random() * (this.#visibilityMs + 1)));
    this.#accept({
      messageId: original.messageId,
      body: original.body,
      messageAttributes: original.messageAttributes,
      sentAt: original.sentAt,
      seq: 0,
      visibleAt: now + delayMs,
      receiveCount: original.receiveCount,
      ...(original.firstReceivedAt === undefined ? {} : { firstReceivedAt: original.firstReceivedAt }),
      ...(original.source === undefined ? {} : { source: original.source }),
      duplicate: true,
    });
    this.#stats.duplicates += 1;
    return original.messageId;
  }

  /**
   * DeleteMessage. Only the latest receipt handle of a copy deletes it, even after the visibility
   * timeout ran out; AWS answers an older one with "the request succeeds, but the message might
   * not be deleted", which the simulation sees as `false`. Another stored copy of the same
   * message is not deleted [D1], and the deleted one is kept as a ghost `duplicate()` may bring
   * back.
   */
  delete(receiptHandle: string): boolean {
    this.#now();
    const message = this.#byHandle.get(receiptHandle);
    if (message === undefined) return false;
    this.#remove(message);
    const { receiptHandle: _handle, receivedAt: _receivedAt, ...ghost } = message;
    this.#ghosts.push({ ...ghost, visibleAt: 0 });
    if (this.#ghosts.length > GHOSTS_KEPT) this.#ghosts.shift();
    return true;
  }

  /**
   * ChangeMessageVisibility: visible again at now + seconds, for an in-flight message with its
   * latest receipt handle. A stale handle, or a message already visible again (AWS answers it
   * with MessageNotInflight), returns `false` and changes nothing. Seconds outside 0..43200
   * throw SimInvalidParameterValue, and so does, as SimVisibilityLimitExceeded with SQS's
   * message, a value that would hide the message past 12 hours after this receipt's receive
   * [D2]; a refused change changes nothing.
   */
  changeVisibility(receiptHandle: string, seconds: number): boolean {
    checkSeconds('VisibilityTimeout', seconds);
    const now = this.#now();
    const message = this.#byHandle.get(receiptHandle);
    if (message === undefined || message.visibleAt <= now) return false;
    const limit = (message.receivedAt ?? now) + MAX_VISIBILITY_SECONDS * 1000;
    if (now + seconds * 1000 > limit) {
      throw new SimVisibilityLimitExceeded(
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [${MAX_VISIBILITY_SECONDS} seconds].`,
      );
    }
    message.visibleAt = now + seconds * 1000;
    return true;
  }

  /**
   * StartMessageMoveTask from this queue (a DLQ), completed at once: every message, visible or in
   * flight (whose handles go stale), oldest first, to `destination` or else to the queue its
   * redrive came from [D6]. Each arrives as a new, visible message with a new messageId and
   * SentTimestamp, so its retention starts again [D6]; the receive count follows
   * `moveTaskResetsReceiveCount`. Expired messages are dropped first [D5]. Throws before moving
   * anything when a message has no source queue and no destination is given.
   */
  startMessageMoveTask(destination?: SimulatedQueue): number {
    const now = this.#now();
    const moves = [...this.#messages.values()].map((message) => {
      const target = destination ?? message.source;
      if (target === undefined) throw new Error(`queue ${this.name}: message ${message.messageId} has no source queue; give a destination`);
      return { message, target };
    });
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

  /** For invariant checks: every stored copy, with its state, in arrival order (expired ones dropped first). */
  snapshot(): readonly SimQueueSnapshotEntry[] {
    const now = this.#now();
    return [...this.#messages.values()].map((m) => ({
      messageId: m.messageId,
      body: m.body,
      receiveCount: m.receiveCount,
      inFlight: m.visibleAt > now,
      visibleAt: m.visibleAt,
      sentAt: m.sentAt,
      ...(m.source === undefined ? {} : { sourceArn: m.source.arn }),
      duplicate: m.duplicate === true,
      expiresAt: m.sentAt + this.#retentionMs,
      ...(m.receivedAt === undefined ? {} : { receivedAt: m.receivedAt }),
    }));
  }

  /** All stored copies, visible or in flight (ApproximateNumberOfMessages plus ...NotVisible). */
  get depth(): number {
    this.#now();
    return this.#messages.size;
  }

  /** Cumulative counts of duplicates, concurrent deliveries, unseen receives and expiries. */
  get stats(): SimQueueStats {
    return { ...this.#stats };
  }

  /** The clock's time, after dropping what retention has ended [D5]: every operation starts here. */
  #now(): number {
    const now = this.#clock.now();
    for (const message of [...this.#messages.values()]) {
      if (now >= message.sentAt + this.#retentionMs) {
        this.#remove(message);
        this.#stats.expired += 1;
      }
    }
    for (let i = this.#ghosts.length - 1; i >= 0; i--) {
      if (now >= this.#ghosts[i]!.sentAt + this.#retentionMs) this.#ghosts.splice(i, 1);
    }
    return now;
  }

  #receive(now: number, max: number, options: SimReceiveOptions): StoredMessage[] {
    const byVisibility = (a: StoredMessage, b: StoredMessage) => a.visibleAt - b.visibleAt || a.seq - b.seq;
    const all = [...this.#messages.values()];
    const candidates = all.filter((m) => m.visibleAt <= now).sort(byVisibility);
    if (options.includeInFlight === true) candidates.push(...all.filter((m) => m.visibleAt > now).sort(byVisibility));
    const received: StoredMessage[] = [];
    while (received.length < max && candidates.length > 0) {
      const index = options.random === undefined ? 0 : pick(options.random, candidates.length);
      const [message] = candidates.splice(index, 1);
      if (message === undefined) break;
      if (this.#redrive !== undefined && message.receiveCount >= this.#redrive.maxReceiveCount) {
        // [D4] Same id, body, attributes, count and SentTimestamp [D5]; only the DLQ's arrival order is new.
        this.#remove(message);
        const { receiptHandle: _handle, receivedAt: _receivedAt, ...moved } = message;
        this.#redrive.deadLetterQueue.#accept({ ...moved, seq: 0, visibleAt: now, source: this });
        continue;
      }
      if (message.visibleAt > now) this.#stats.concurrentDeliveries += 1;
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.receivedAt = now;
      message.visibleAt = now + this.#visibilityMs;
      if (message.receiptHandle !== undefined) this.#byHandle.delete(message.receiptHandle);
      message.receiptHandle = `${message.messageId}#${++this.#handles}`;
      this.#byHandle.set(message.receiptHandle, message);
      received.push(message);
    }
    return received;
  }

  #nextId(): string {
    return `${this.name}-${++this.#ids}`;
  }

  /** Stores a message copy as the newest arrival; the caller's `seq` is replaced. */
  #accept(message: StoredMessage): void {
    const seq = ++this.#seq;
    this.#messages.set(seq, { ...message, seq });
  }

  #remove(message: StoredMessage): void {
    this.#messages.delete(message.seq);
    if (message.receiptHandle !== undefined) this.#byHandle.delete(message.receiptHandle);
  }
}

/** An index in 0..length-1 from a caller's random in [0, 1), safe against a random that returns 1. */
function pick(random: () => number, length: number): number {
  return Math.min(length - 1, Math.max(0, Math.floor(random() * length)));
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

  send(message: WorkMessage, options: SendOptions = {}): Promise<void> {
    // The send happens at the call, not a microtask later, so the simulation decides exactly
    // when it lands; a fault still reaches the caller as a rejection, as an SDK error would.
    // A signal aborted by then sends nothing: the SDK's HTTP handler rejects an aborted
    // request with an AbortError before it opens a connection (node-http-handler.js, "if
    // (abortSignal?.aborted) ... reject(abortError)"), and a timed-out send of ours (a
    // dead-letter copy's, bounded to DEAD_LETTER_SEND_SECONDS) must not land later in the
    // simulation than it could on AWS (seed 981: a copy stamped 16 s after its write).
    if (options.signal?.aborted === true) {
      const aborted = new Error('Request aborted');
      aborted.name = 'AbortError';
      return Promise.reject(aborted);
    }
    try {
      this.#beforeSend?.(message);
      this.#queue.send(
        JSON.stringify(message),
        {
          route: { DataType: 'String', StringValue: message.route },
          key: { DataType: 'String', StringValue: message.key },
          ...(message.reason === undefined ? {} : { reason: { DataType: 'String', StringValue: message.reason } }),
        },
        // As SqsWorkQueue sends it: whole seconds, at most SQS's 900.
        options.delaySeconds === undefined || options.delaySeconds <= 0 ? 0 : Math.min(MAX_DELAY_SECONDS, Math.ceil(options.delaySeconds)),
      );
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/**
 * The MessageVisibility port on a simulated queue, rounding and clamping as
 * SqsMessageVisibility does. A stale handle changes nothing and does not fail, matching the
 * queue's `false`; the simulation reads the queue's state to see it. Clamping to 43200 does not
 * keep within the 12 h maximum counted from the receive [D2]: a message received some time ago
 * and asked for that long is refused, and the promise rejects with SimVisibilityLimitExceeded,
 * as the SDK call of SqsMessageVisibility would reject with InvalidParameterValue.
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
