/**
 * The real ingest and executor handlers on DynamoDB Local and fauxqs, joined by a queue
 * pair of their own (visibility 1 s unless a test sets it, maxReceiveCount 8) and the
 * event-source poller. Every route has a retry budget of 3 attempts.
 *
 * The executor's clock is `Date.now() + clockOffsetMs`, so a test moves past a lease without
 * waiting for it; fauxqs' visibility runs on real time. Tests therefore wait for a condition
 * (a round that receives a message, an empty queue), never for a fixed time.
 */
import type { BodyObjects } from '../../lambdas/ports/body-objects.ts';
import type { EntityOrder } from '../../lambdas/ports/entity-order.ts';
import type { Logger } from '@aws-lambda-powertools/logger';
import { randomUUID } from 'node:crypto';
import type { Context, SQSEvent } from 'aws-lambda';
import { inject } from 'vitest';
import { GetQueueAttributesCommand, ReceiveMessageCommand, DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { payoutAction } from '../../lambdas/demo/payout.ts';
import { keptPayloadOf, workMessageOf } from '../../lambdas/domain/event-record.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { historyOf, readLogItems } from '../../lambdas/store/execution-history.ts';
import { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsMessageVisibility } from '../../lambdas/queue/sqs-message-visibility.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { pollOnce } from '../../local/sqs-event-source.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import type { BreakerDeps } from '../../lambdas/ingest/circuit-breaker.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RoutePauseCache } from '../../lambdas/executor/route-pauses.ts';
import type { PollResult, SqsHandler } from '../../local/sqs-event-source.ts';
import { createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from './ingest-fixture.ts';
import type { IngestFixture } from './ingest-fixture.ts';
import { testConfig } from './test-config.ts';

export const ROUTE = 'standard-webhooks';
/** The retry budget of every fixture route that does not set its own. */
export const MAX_ATTEMPTS = 3;
/** The queue's backstop: 2 x MAX_ATTEMPTS + 2, the least resolveConfig accepts. */
export const MAX_RECEIVE_COUNT = 8;

/** The longest hiding the fixture asks of fauxqs, whose visibility runs on real time. */
const APPLIED_VISIBILITY_CAP_SECONDS = 1;

/** One ChangeMessageVisibility the executor asked for. */
export interface VisibilityChange {
  readonly receiptHandle: string;
  /** What the executor asked for. */
  readonly seconds: number;
  /** What fauxqs was told: at most APPLIED_VISIBILITY_CAP_SECONDS, so no test waits out a lease. */
  readonly applied: number;
}

/**
 * Records each visibility change the executor asks for, and applies at most one second of
 * it: the executor's clock can jump past a lease, fauxqs' cannot.
 */
class RecordingVisibility implements MessageVisibility {
  readonly changes: VisibilityChange[] = [];
  readonly #queue: MessageVisibility;
  constructor(queue: MessageVisibility) {
    this.#queue = queue;
  }
  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    const applied = Math.min(seconds, APPLIED_VISIBILITY_CAP_SECONDS);
    this.changes.push({ receiptHandle, seconds, applied });
    await this.#queue.changeVisibility(receiptHandle, applied);
  }
}

/**
 * The handler as fauxqs would feed it if its clock moved with the executor's: each record's
 * SentTimestamp (what the executor compares with its own clock) shifted by the offset.
 */
function shiftedStamps(handler: SqsHandler, offsetMs: () => number): SqsHandler {
  return (event: SQSEvent, context: Context) =>
    handler(
      {
        Records: event.Records.map((r) => ({
          ...r,
          attributes: { ...r.attributes, SentTimestamp: String(Number(r.attributes.SentTimestamp) + offsetMs()) },
        })),
      },
      context,
    );
}

/**
 * Runs `check` until it answers something other than undefined, and returns that. Throws an
 * error naming `what` when `budgetMs` runs out: a wait for a condition, never a fixed sleep.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, budgetMs = 15_000): Promise<T> {
  const until = Date.now() + budgetMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= until) throw new Error(`gave up after ${budgetMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface ExecutorFixture {
  readonly ingest: IngestFixture;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** The routes as configured, each with its retry budget. */
  readonly routes: readonly RouteConfig[];
  /** Milliseconds added to the executor's clock, to let leases run out without waiting. */
  clockOffsetMs: number;
  /** The executor's clock. */
  now(): number;
  /** Every visibility change the executor asked for, in order. */
  readonly visibilityChanges: readonly VisibilityChange[];
  /** Ingests a signed delivery with this payload; returns its key. */
  deliver(payload: Record<string, unknown>, key?: string): Promise<string>;
  /** One event-source round. */
  poll(): Promise<PollResult>;
  /** Event-source rounds until one receives a message (a hidden one comes back on fauxqs' real clock); returns that round. */
  pollUntilReceived(budgetMs?: number): Promise<PollResult>;
  /** Polls until the queue is empty and nothing is in flight, or the budget runs out. */
  drain(budgetMs?: number): Promise<void>;
  record(key: string): Promise<Record<string, unknown> | undefined>;
  log(key: string): Promise<Record<string, unknown>[]>;
  ledger(key: string): Promise<LedgerEntry[]>;
  /** Receives and deletes every DLQ message, returning their parsed bodies. */
  takeDeadLetters(): Promise<Record<string, unknown>[]>;
  /** Sends a body to the work queue, as a console redrive does. */
  redrive(body: Record<string, unknown>): Promise<void>;
  /** The work message of a key as ingest sent it, rebuilt from its record: what a duplicate or the reconciler re-sends. */
  workMessage(key: string): Promise<Record<string, unknown>>;
  readonly handler: ReturnType<typeof createExecutorHandler>;
  readonly eventsTable: string;
  readonly ledgerClient: DynamoDbLedger;
}

export interface ExecutorFixtureOptions {
  readonly actions?: Record<string, Action>;
  readonly action?: string;
  readonly eventsTable?: string;
  readonly ledgerTable?: string;
  readonly breaker?: BreakerDeps;
  readonly routes?: readonly RouteConfig[];
  /** The bucket of large bodies, for the ingest and the executor alike. @default - none */
  readonly bodies?: BodyObjects;
  /**
   * The lines of routes ordered per entity (a DynamoDbEntityOrder on the events table), for the
   * ingest and the executor alike. @default - none: no route's order is enforced
   */
  readonly order?: EntityOrder;
  /** The executor's logger: a test that counts outcomes reads its `execution` lines. @default - Powertools' logger, silent in tests */
  readonly logger?: Logger;
  /**
   * The work queue's visibility timeout: how long a received message stays hidden while its batch
   * runs, and how long a batch that failed whole (a worker that died) waits. Batches that run
   * longer than it are received again meanwhile, each receive counting toward maxReceiveCount.
   * @default 1
   */
  readonly visibilityTimeoutSeconds?: number;
  /** The ingest's clock (and its deliveries' signatures) follow the executor's offset. @default false: real time */
  readonly ingestFollowsClock?: boolean;
  /** Wraps the ingest's work queue (to stall or watch its sends). @default - the queue as it is */
  readonly ingestQueue?: (queue: WorkQueue) => WorkQueue;
  /** The entity order the ingest alone uses, made from the fixture's (to stall one of its writes). */
  readonly ingestOrder?: (order: EntityOrder) => EntityOrder;
}

export async function executorFixture(options: ExecutorFixtureOptions = {}): Promise<ExecutorFixture> {
  const ddb = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const pair = await createQueuePair(sqs, inject('sqsEndpoint'), `exec-${randomUUID().slice(0, 8)}`, {
    maxReceiveCount: MAX_RECEIVE_COUNT,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 1,
  });
  const routes = (options.routes ?? SCHEME_ROUTES).map((r) => ({
    maxAttempts: MAX_ATTEMPTS,
    ...r,
    ...(r.name === ROUTE && options.action !== undefined ? { action: options.action } : {}),
  }));
  const table = options.eventsTable ?? inject('eventsTable');
  let offsetMs = (): number => 0;
  const ingest = await ingestFixture({
    queueUrl: pair.queueUrl,
    ...(options.ingestFollowsClock === true ? { now: () => Date.now() + offsetMs() } : {}),
    ...(options.ingestQueue === undefined ? {} : { queue: options.ingestQueue(new SqsWorkQueue(sqs, pair.queueUrl)) }),
    routes,
    tableName: table,
    ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
    ...(options.bodies === undefined ? {} : { bodies: options.bodies }),
    ...(options.order === undefined ? {} : { order: options.ingestOrder === undefined ? options.order : options.ingestOrder(options.order) }),
  });
  const config = resolveConfig(testConfig(routes, { queue: { maxReceiveCount: MAX_RECEIVE_COUNT } }));
  const ledgerClient = new DynamoDbLedger(ddb, options.ledgerTable ?? inject('ledgerTable'));
  const doc = documentClient(ddb);
  const visibility = new RecordingVisibility(new SqsMessageVisibility(sqs, pair.queueUrl));
  /** The body of each key this fixture delivered. */
  const delivered = new Map<string, string>();
  const fx: ExecutorFixture = {
    ingest,
    queueUrl: pair.queueUrl,
    dlqUrl: pair.dlqUrl,
    routes,
    clockOffsetMs: 0,
    now: () => Date.now() + fx.clockOffsetMs,
    visibilityChanges: visibility.changes,
    ledgerClient,
    eventsTable: table,
    handler: createExecutorHandler({
      routes: new Map(config.routes.map((r) => [r.name, r])),
      // Every fixture route may ask for a failure: these specs drive the executor through `simulate`.
      actions: new Map(Object.entries({ payout: payoutAction(ledgerClient, Date.now, () => true), ...options.actions })),
      store: new DynamoDbExecutionStore(ddb, table),
      // Read at every decision (no cache age): these specs pause or resume a route and look at once.
      pauses: new RoutePauseCache(new DynamoDbRouteStateStore(ddb, table), { maxAgeMs: 0, monotonicNow: () => performance.now() }),
      workQueue: new SqsWorkQueue(sqs, pair.queueUrl),
      ...(options.bodies === undefined ? {} : { bodies: options.bodies }),
      ...(options.order === undefined ? {} : { order: options.order }),
      visibility,
      maxReceiveCount: MAX_RECEIVE_COUNT,
      now: () => fx.now(),
      logger: options.logger ?? createLogger('retryproof-executor-test'),
      metrics: createMetrics('retryproof-executor-test'),
    }),
    async deliver(payload, key = uniqueKey(ROUTE)) {
      const delivery = signedDelivery(ROUTE, key, { payload, ...(options.ingestFollowsClock === true ? { nowSeconds: Math.floor(fx.now() / 1000) } : {}) });
      delivered.set(key, delivery.body);
      const answer = await ingest.invoke(delivery);
      if (answer.statusCode !== 202) throw new Error(`ingest answered ${String(answer.statusCode)}: ${String(answer.body)}`);
      return key;
    },
    // SQS's stamps move with the executor's clock: a test that moves time moves it for both.
    poll: () => pollOnce(shiftedStamps(fx.handler, () => fx.clockOffsetMs), { sqs, queueUrl: pair.queueUrl, context: () => lambdaContext('retryproof-executor') }),
    pollUntilReceived(budgetMs = 15_000) {
      return waitFor('an event-source round that receives a message', async () => {
        const round = await fx.poll();
        return round.received > 0 ? round : undefined;
      }, budgetMs);
    },
    async drain(budgetMs = 15_000) {
      const until = Date.now() + budgetMs;
      while (Date.now() < until) {
        const round = await fx.poll();
        if (round.received > 0) continue;
        const attrs = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: pair.queueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        const left =
          Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0) +
          Number(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
        if (left === 0) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the queue did not drain within ${budgetMs} ms`);
    },
    async record(key) {
      const out = await doc.send(new GetCommand({ TableName: table, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } }));
      return out.Item;
    },
    async log(key) {
      // Every attempt, as inspect shows it: the log items, and the completing attempt kept on the record.
      return historyOf(await readLogItems(doc, table, ROUTE, key), await fx.record(key));
    },
    async ledger(key) {
      // The payout action posts on the real clock, whatever the executor's offset.
      const entries = await ledgerEntries(ledgerClient, Date.now() - 3_600_000, Date.now() + 3_600_000);
      return entries.filter((e) => e.idempotencyKey === key && e.route === ROUTE);
    },
    async takeDeadLetters() {
      const bodies: Record<string, unknown>[] = [];
      for (;;) {
        const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: pair.dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
        if ((out.Messages ?? []).length === 0) return bodies;
        for (const m of out.Messages ?? []) {
          bodies.push(JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
          await sqs.send(new DeleteMessageCommand({ QueueUrl: pair.dlqUrl, ReceiptHandle: m.ReceiptHandle }));
        }
      }
    },
    async redrive(body) {
      await sqs.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: JSON.stringify(body) }));
    },
    async workMessage(key) {
      const item = await fx.record(key);
      if (item === undefined) throw new Error(`no record for ${key}`);
      const record = fromRecordItem(item);
      // The record keeps no payload on the happy path: the body is the one this fixture delivered.
      const body = delivered.get(key);
      const payload = keptPayloadOf(record) ?? (body === undefined ? undefined : { body, bodyEncoding: 'utf8' as const, headers: { 'content-type': 'application/json' } });
      if (payload === undefined) throw new Error(`no payload for ${key}: neither kept nor delivered here`);
      return { ...workMessageOf(record, payload) };
    },
  };
  offsetMs = () => fx.clockOffsetMs;
  return fx;
}
