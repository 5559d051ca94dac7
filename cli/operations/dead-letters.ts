/**
 * The DLQ, for people: list what is in it without consuming it, and send it back to the
 * work queue.
 *
 * Peeking: SQS has no "peek". A listing receives with a short visibility timeout (so one
 * listing never shows a message twice), then makes every received message visible again
 * at once (ChangeMessageVisibility 0; 1 s locally). Each listing adds one to the DLQ copies' receive
 * count; that moves nothing, because the DLQ has no redrive policy of its own, and a
 * redrive sends each body to the work queue as a new message whose count starts again.
 *
 * Redriving: on AWS, StartMessageMoveTask from the DLQ. With one work queue the destination
 * is named rather than left to "the original source", so a message that reached the DLQ
 * some other way (sent there by hand, or by an older executor) goes back all the same. With
 * routes on queues of their own (ownQueue) it is left out: the task then returns each message
 * "back to their respective original source queues" (SQS API Reference, StartMessageMoveTask,
 * DestinationArn), its route's own queue or the shared one, since every dead letter leaves
 * through its route's queue (lambdas/queue/routed-work-queue.ts).
 * Locally (fauxqs has no move tasks) the same is done by hand: receive, send to the queue of
 * the message's route (its own, else the shared one), delete.
 * A message sent but not deleted (a crash in between) is a duplicate, which the
 * executor's claim absorbs: nothing is lost, nothing runs twice.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { queueNameOf } from '../../lambdas/queue/sqs-message-visibility.ts';
import { FAUXQS_RELEASE_SECONDS } from '../../local/index.ts';
import { CliError } from '../errors.ts';
import type { Target } from '../target.ts';

export interface DeadLetterRow {
  readonly route: string;
  readonly key: string;
  /** Attempts the executor made; null when SQS moved the message (the record has the count). */
  readonly attempts: number | null;
  readonly lastError: string | null;
  /** When the delivery was received (epoch ms); null for an unreadable message. */
  readonly receivedAt: number | null;
  readonly reason: string;
  readonly messageId: string;
  /** When this copy entered the queue it was sent to (epoch ms). */
  readonly sentAt: number | null;
}

/** The reason shown for a message that SQS's redrive policy moved (the executor never gave up on it). */
export const MOVED_BY_SQS = 'receive limit reached (moved by the queue\'s redrive policy)';

/** A DLQ message as a row. Never throws: a message that is not ours is shown as such. */
export function deadLetterRowOf(message: Message): DeadLetterRow {
  let body: Record<string, unknown> = {};
  let readable = true;
  try {
    const parsed = JSON.parse(message.Body ?? '') as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    else readable = false;
  } catch {
    readable = false;
  }
  const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const sent = Number(message.Attributes?.SentTimestamp);
  return {
    route: str(body.route) ?? '',
    key: str(body.key) ?? '',
    attempts: num(body.attempts),
    lastError: str(body.lastError),
    receivedAt: num(body.receivedAt) === 0 ? null : num(body.receivedAt),
    reason: str(body.reason) ?? (readable ? MOVED_BY_SQS : 'unreadable message'),
    messageId: message.MessageId ?? '',
    sentAt: Number.isFinite(sent) && sent > 0 ? sent : null,
  };
}

async function queueDepth(target: Target, url: string): Promise<{ visible: number; hidden: number }> {
  const out = await target.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    hidden: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

export interface PeekOptions {
  /** Messages listed at most. @default 100 */
  readonly max?: number;
  /** How long a received message stays hidden if releasing it fails. @default 10 */
  readonly holdSeconds?: number;
}

/** Lists the DLQ's messages without consuming them (see the module comment). */
export async function peekDeadLetters(target: Target, options: PeekOptions = {}): Promise<DeadLetterRow[]> {
  const max = options.max ?? 100;
  const rows = new Map<string, DeadLetterRow>();
  const held: Message[] = [];
  // Short polling samples a subset of SQS's servers: on AWS, wait a second for the rest.
  const waitSeconds = target.kind === 'aws' ? 1 : 0;
  // Messages another listing just released (or someone holds) come back within seconds:
  // wait for as many as the queue says it has, within bounds.
  const depth = await queueDepth(target, target.dlqUrl);
  const expected = Math.min(max, depth.visible + depth.hidden);
  const deadline = Date.now() + 3000;
  let empty = 0;
  try {
    while (rows.size < max) {
      const out = await target.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: target.dlqUrl,
          MaxNumberOfMessages: Math.min(10, max - rows.size),
          VisibilityTimeout: options.holdSeconds ?? 10,
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
        }),
      );
      const messages = out.Messages ?? [];
      held.push(...messages);
      const before = rows.size;
      for (const m of messages) rows.set(m.MessageId ?? String(rows.size), deadLetterRowOf(m));
      empty = rows.size === before ? empty + 1 : 0;
      if (empty >= 2 && (rows.size >= expected || Date.now() > deadline)) break;
      if (empty > 0) await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await releaseAll(target, held);
  }
  return [...rows.values()].sort((a, b) => (a.sentAt ?? 0) - (b.sentAt ?? 0));
}

/**
 * Locally the release is 1 s, not 0: fauxqs 2.4.1 with a data folder loses a message whose
 * visibility is changed to 0 (its SQLite write of the "ready" state breaks a NOT NULL
 * column after the message left memory).
 */
async function releaseAll(target: Target, messages: readonly Message[]): Promise<void> {
  const visibility = target.kind === 'local' ? FAUXQS_RELEASE_SECONDS : 0;
  for (let i = 0; i < messages.length; i += 10) {
    const batch = messages.slice(i, i + 10);
    await target.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: target.dlqUrl,
        Entries: batch.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle ?? '', VisibilityTimeout: visibility })),
      }),
    );
  }
}

export interface RedriveResult {
  readonly mode: 'move-task' | 'receive-send-delete';
  readonly moved: number;
  /**
   * Locally: the messages moved, by the name of the queue they went to (the shared work queue,
   * or a route's own). A move task reports no such split.
   */
  readonly byQueue?: Readonly<Record<string, number>>;
  /** Move tasks: where the task sends messages: the shared queue's ARN, or "source queues". */
  readonly destination?: string;
  /**
   * Messages whose route the running configuration does not have. Locally they stay in the DLQ,
   * each with a reason that says so (the executor would only send them back, with their old
   * reason); on AWS the move task takes them too, and they are listed before it starts.
   */
  readonly unrunnable: readonly DeadLetterRow[];
  /** Move tasks only. */
  readonly taskHandle?: string;
  readonly status?: string;
  readonly failureReason?: string;
}

export interface RedriveOptions {
  /** Called as messages move: moved so far, the total when known, and those left in the DLQ. */
  readonly onProgress?: (moved: number, total: number | undefined, kept: number) => void;
  /** Called once for each message whose route the running configuration does not have. */
  readonly onUnrunnable?: (row: DeadLetterRow) => void;
  /** AWS: return once the task started instead of waiting for it. @default false */
  readonly detach?: boolean;
  /** Give up waiting after this long. @default 15 minutes */
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends every DLQ message back to the work queue. */
export async function redriveDeadLetters(target: Target, options: RedriveOptions = {}): Promise<RedriveResult> {
  return target.kind === 'aws' ? moveTask(target, options) : receiveSendDelete(target, options);
}

/**
 * Why a message cannot run on this receiver: its route is not in the configuration it runs
 * (removed or renamed since). Undefined when it can, or when it is not ours to judge
 * (unreadable: the executor sends those to people as they are).
 */
export function unrunnableReason(target: Target, row: DeadLetterRow, now: number): string | undefined {
  if (row.route === '' || target.routes.includes(row.route)) return undefined;
  return (
    `route "${row.route}" is not in the configuration ${target.description} runs (its routes: ${target.routes.join(', ')}); ` +
    `kept in the DLQ by a redrive at ${new Date(now).toISOString()}: it can run once the route is back`
  );
}

async function moveTask(target: Target, options: RedriveOptions): Promise<RedriveResult> {
  const sleep = options.sleep ?? defaultSleep;
  // A move task takes every message: name, before it starts, those that will only come back.
  const unrunnable = (await peekDeadLetters(target, { max: 1000 })).filter((row) => unrunnableReason(target, row, Date.now()) !== undefined);
  for (const row of unrunnable) options.onUnrunnable?.(row);
  const sourceArn = await target.queueArn(target.dlqUrl);
  // Several work queues: each message back to the one it came from (see the module comment).
  const toSources = Object.keys(target.routeQueueUrls ?? {}).length > 0;
  const destinationArn = toSources ? undefined : await target.queueArn(target.queueUrl);
  const destination = destinationArn ?? SOURCE_QUEUES;
  let taskHandle: string | undefined;
  try {
    const started = await target.sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: sourceArn, ...(destinationArn === undefined ? {} : { DestinationArn: destinationArn }) }),
    );
    taskHandle = started.TaskHandle;
  } catch (err) {
    throw new CliError(`could not start the DLQ redrive: ${(err as Error).name}: ${(err as Error).message}`, { cause: err });
  }
  if (options.detach === true) return { mode: 'move-task', moved: 0, unrunnable, destination, ...(taskHandle === undefined ? {} : { taskHandle }), status: 'RUNNING' };
  const until = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const list = await target.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 }));
    const task = (list.Results ?? []).find((t) => taskHandle === undefined || t.TaskHandle === taskHandle) ?? list.Results?.[0];
    const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
    options.onProgress?.(moved, task?.ApproximateNumberOfMessagesToMove, 0);
    const status = task?.Status ?? 'UNKNOWN';
    if (status !== 'RUNNING' || Date.now() > until) {
      return {
        mode: 'move-task',
        moved,
        unrunnable,
        destination,
        ...(taskHandle === undefined ? {} : { taskHandle }),
        status,
        ...(task?.FailureReason === undefined ? {} : { failureReason: task.FailureReason }),
      };
    }
    await sleep(2000);
  }
}

/** A move task's destination when it has none: each message's source queue. */
export const SOURCE_QUEUES = 'source queues';

/** The queue a dead letter of `route` goes back to: the route's own, else the shared work queue. */
function redriveQueueOf(target: Target, route: string): string {
  return target.routeQueueUrls?.[route] ?? target.queueUrl;
}

/** A message that cannot run here, with its latest receipt and the row that says why. */
interface KeptMessage {
  readonly message: Message;
  readonly row: DeadLetterRow;
}

async function receiveSendDelete(target: Target, options: RedriveOptions): Promise<RedriveResult> {
  const sleep = options.sleep ?? defaultSleep;
  const byQueue = new Map<string, number>();
  const start = await queueDepth(target, target.dlqUrl);
  const total = start.visible + start.hidden;
  const until = Date.now() + (options.timeoutMs ?? 60_000);
  let moved = 0;
  // Messages that cannot run here, by id, with their latest receipt: put back at the end with
  // a reason of today (putting them back at once would have this loop receive them again).
  const kept = new Map<string, KeptMessage>();
  if (total > 0) options.onProgress?.(0, total, 0);
  for (;;) {
    const received = await receiveForRedrive(target);
    const messages = runnableOf(target, received, kept, options);
    if (messages.length === 0) {
      // Hidden messages (someone is looking at them) come back soon: wait for them, within bounds.
      const depth = await queueDepth(target, target.dlqUrl);
      if (depth.visible + depth.hidden <= kept.size || Date.now() > until) break;
      if (received.length === 0) await sleep(250);
      continue;
    }
    moved = await sendToRouteQueues(target, messages, byQueue, moved);
    options.onProgress?.(moved, Math.max(total, moved + kept.size), kept.size);
  }
  const keptList = [...kept.values()];
  await putBackWithReasons(target, keptList);
  if (keptList.length > 0) options.onProgress?.(moved, Math.max(total, moved + kept.size), kept.size);
  return { mode: 'receive-send-delete', moved, byQueue: Object.fromEntries(byQueue), unrunnable: keptList.map((k) => k.row) };
}

async function receiveForRedrive(target: Target): Promise<Message[]> {
  const out = await target.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: target.dlqUrl,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 30,
      WaitTimeSeconds: 0,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['SentTimestamp'],
    }),
  );
  return out.Messages ?? [];
}

/** The received messages that can run here; the others go into `kept` (their receipt renewed) and are reported once. */
function runnableOf(target: Target, received: readonly Message[], kept: Map<string, KeptMessage>, options: RedriveOptions): Message[] {
  const messages: Message[] = [];
  for (const m of received) {
    const id = m.MessageId ?? '';
    const known = kept.get(id);
    if (known !== undefined) {
      kept.set(id, { ...known, message: m });
      continue;
    }
    const row = deadLetterRowOf(m);
    const reason = unrunnableReason(target, row, Date.now());
    if (reason === undefined) {
      messages.push(m);
      continue;
    }
    const rowNow = { ...row, reason };
    kept.set(id, { message: m, row: rowNow });
    options.onUnrunnable?.(rowNow);
  }
  return messages;
}

/**
 * Sends each message to its route's queue, one batch per queue, and deletes those sent from the DLQ.
 * @returns `moved` plus the messages moved; `byQueue` counts them by queue name
 * @throws CliError when a queue refuses a message
 */
async function sendToRouteQueues(target: Target, messages: readonly Message[], byQueue: Map<string, number>, movedBefore: number): Promise<number> {
  let moved = movedBefore;
  const byDestination = new Map<string, Message[]>();
  for (const m of messages) {
    const url = redriveQueueOf(target, deadLetterRowOf(m).route);
    byDestination.set(url, [...(byDestination.get(url) ?? []), m]);
  }
  for (const [url, batch] of byDestination) {
    const sent = await target.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: batch.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? '',
          ...(m.MessageAttributes === undefined ? {} : { MessageAttributes: m.MessageAttributes }),
        })),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    const done = batch.filter((_, i) => ok.has(String(i)));
    if (done.length > 0) await deleteAll(target, done);
    moved += done.length;
    const name = queueNameOf(url);
    if (done.length > 0) byQueue.set(name, (byQueue.get(name) ?? 0) + done.length);
    if ((sent.Failed ?? []).length > 0) {
      throw new CliError(`the work queue ${name} refused ${(sent.Failed ?? []).length} messages: ${sent.Failed?.[0]?.Message ?? ''}; ${moved} moved so far`);
    }
  }
  return moved;
}

/** Puts the kept messages back in the DLQ, each with today's reason, and deletes the originals of the copies sent. */
async function putBackWithReasons(target: Target, keptList: readonly KeptMessage[]): Promise<void> {
  for (let i = 0; i < keptList.length; i += 10) {
    const batch = keptList.slice(i, i + 10);
    const sent = await target.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: target.dlqUrl,
        Entries: batch.map(({ message, row }, n) => ({
          Id: String(n),
          MessageBody: withReason(message.Body ?? '', row.reason),
          ...(message.MessageAttributes === undefined ? {} : { MessageAttributes: message.MessageAttributes }),
        })),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    // A copy the DLQ refused: its original stays (visible again once its 30 s are over).
    await deleteAll(target, batch.filter((_, n) => ok.has(String(n))).map((k) => k.message));
  }
}

async function deleteAll(target: Target, messages: readonly Message[]): Promise<void> {
  if (messages.length === 0) return;
  await target.sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: target.dlqUrl,
      Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
    }),
  );
}

/** The message's body with `reason` as its reason (a readable work message; else as it was). */
function withReason(body: string, reason: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body;
    return JSON.stringify({ ...(parsed as Record<string, unknown>), reason });
  } catch {
    return body;
  }
}
