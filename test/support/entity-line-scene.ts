/**
 * One customer's line on a route ordered per entity (`orderBy: '{body:/customer}'`), set up with
 * the real writes on DynamoDB Local and fauxqs: a delivery is claimed and placed as the ingest
 * does (its record, then its place, in accepted order), and runs through the real executor
 * (executeMessage with the line wired), which fails the keys a test names for good and parks the
 * work behind a head that is not done. Each scene has its own routes and queue pair, so its
 * lines and messages are its own.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { PermanentActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { entityHash } from '../../lambdas/domain/entity-order.ts';
import { RECORD_STATUS, workMessageOf } from '../../lambdas/domain/event-record.ts';
import type { EventRecord, WorkMessage } from '../../lambdas/domain/event-record.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { executeMessage } from '../../lambdas/executor/execute-message.ts';
import type { ExecutionReport } from '../../lambdas/executor/execute-message.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { testConfig } from './test-config.ts';

/** The field the ordered route reads its entity from. */
export const ORDER_BY = '{body:/customer}';
const MAX_RECEIVE_COUNT = 8;

export interface LineScene {
  /** The route ordered per customer. */
  readonly route: string;
  /** A route of the same receiver without orderBy. */
  readonly unordered: string;
  readonly config: ResolvedConfig;
  readonly eventsTable: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly order: DynamoDbEntityOrder;
  /** Keys whose action fails for good (a PermanentActionError): the record ends FAILED. */
  readonly failing: Set<string>;
  /** Keys whose action fails for now (a plain Error): the record is released RECEIVED, an attempt spent. */
  readonly erroring: Set<string>;
  /** Keys whose action ran, in the order they ran. */
  readonly ran: string[];
  /** Claims `key` for `customer` and takes its place in the customer's line, as the ingest does; returns its work message. */
  deliver(key: string, customer: string): Promise<WorkMessage>;
  /** Runs a work message through the real executor, the line wired. */
  run(message: WorkMessage): Promise<ExecutionReport>;
  record(key: string): Promise<EventRecord | undefined>;
  /** The line's hash of a customer on the ordered route. */
  hashOf(customer: string): string;
  /** Receives and deletes every message on the work queue; returns them, parsed. */
  takeMessages(): Promise<WorkMessage[]>;
}

export async function entityLineScene(): Promise<LineScene> {
  const run = randomUUID().slice(0, 8);
  const route = `orders-${run}`;
  const unordered = `plain-${run}`;
  const eventsTable = inject('eventsTable');
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const pair = await createQueuePair(sqs, inject('sqsEndpoint'), `line-${run}`, { maxReceiveCount: MAX_RECEIVE_COUNT, visibilityTimeoutSeconds: 30 });
  const base = { signature: { scheme: 'standard-webhooks' as const }, action: 'flaky', actionTimeSeconds: 5, maxAttempts: 3 };
  const config = resolveConfig(
    testConfig([
      { name: route, secretName: `test/${route}`, orderBy: ORDER_BY, ...base },
      { name: unordered, secretName: `test/${unordered}`, ...base },
    ]),
  );
  const order = new DynamoDbEntityOrder(dynamo, eventsTable, { clockSkewSeconds: config.clockSkewSeconds });
  const store = new DynamoDbExecutionStore(dynamo, eventsTable, config.clockSkewSeconds);
  const claims = new DynamoDbEventStore(dynamo, eventsTable);
  const states = new DynamoDbRouteStateStore(dynamo, eventsTable);
  const failing = new Set<string>();
  const erroring = new Set<string>();
  const ran: string[] = [];
  const flaky: Action = (ctx) => {
    ran.push(ctx.key);
    if (failing.has(ctx.key)) return Promise.reject(new PermanentActionError(`downstream refused ${ctx.key}`));
    if (erroring.has(ctx.key)) return Promise.reject(new Error(`downstream timed out on ${ctx.key}`));
    return Promise.resolve({ ok: true });
  };
  const routeOf = (name: string) => {
    const found = config.routes.find((r) => r.name === name);
    if (found === undefined) throw new Error(`no route ${name}`);
    return found;
  };
  return {
    route,
    unordered,
    config,
    eventsTable,
    queueUrl: pair.queueUrl,
    dlqUrl: pair.dlqUrl,
    order,
    failing,
    erroring,
    ran,
    async deliver(key, customer) {
      const body = JSON.stringify({ customer, key });
      const now = Date.now();
      const record: EventRecord = {
        route,
        key,
        status: RECORD_STATUS.received,
        fingerprint: fingerprint(Buffer.from(body)),
        bodyBytes: Buffer.byteLength(body),
        receivedAt: now,
        expiresAt: Math.floor(now / 1000) + routeOf(route).ttlSeconds,
        answer: { status: 202, body: '{}' },
        hits: 1,
        attempts: 0,
        runs: 0,
        redrives: 0,
        lastEnqueuedAt: now,
      };
      const claim = await claims.claimKey(record, now);
      if (claim.kind !== 'created') throw new Error(`${key} was claimed already`);
      await order.place({ route, entity: entityHash(route, customer), key, receivedAt: now }, now, record.expiresAt);
      return workMessageOf(record, { body, bodyEncoding: 'utf8', headers: {} });
    },
    run(message) {
      return executeMessage(
        {
          routes: new Map(config.routes.map((r) => [r.name, r])),
          actions: new Map([['flaky', flaky]]),
          store,
          workQueue: new SqsWorkQueue(sqs, pair.queueUrl),
          order,
          isPaused: async (name) => (await states.get(name)).state === 'paused',
          maxReceiveCount: MAX_RECEIVE_COUNT,
          now: Date.now,
        },
        { messageId: randomUUID(), body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() },
      );
    },
    record: (key) => store.get(route, key),
    hashOf: (customer) => entityHash(route, customer),
    async takeMessages() {
      const taken: WorkMessage[] = [];
      for (;;) {
        const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }));
        const got = out.Messages ?? [];
        if (got.length === 0) return taken;
        taken.push(...got.map((m) => JSON.parse(m.Body ?? '{}') as WorkMessage));
        await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: pair.queueUrl, Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })) }));
      }
    },
  };
}
