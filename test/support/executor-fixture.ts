/**
 * The real ingest and executor handlers on DynamoDB Local and fauxqs, joined by a queue
 * pair of their own (visibility 1 s, maxReceiveCount 3) and the event-source poller.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { GetQueueAttributesCommand, ReceiveMessageCommand, DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { payoutAction } from '../../lambdas/actions/payout.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.ts';
import type { LedgerEntry } from '../../lambdas/ledger/ledger.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsMessageVisibility } from '../../lambdas/queue/sqs-message-visibility.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { pollOnce } from '../../local/sqs-event-source.ts';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import type { BreakerDeps } from '../../lambdas/ingest/circuit-breaker.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import type { PollResult } from '../../local/sqs-event-source.ts';
import { createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from './ingest-fixture.ts';
import type { IngestFixture } from './ingest-fixture.ts';

export const ROUTE = 'standard-webhooks';
export const MAX_RECEIVE_COUNT = 3;

export interface ExecutorFixture {
  readonly ingest: IngestFixture;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** Milliseconds added to the executor's clock, to let leases run out without waiting. */
  clockOffsetMs: number;
  /** Ingests a signed delivery with this payload; returns its key. */
  deliver(payload: Record<string, unknown>, key?: string): Promise<string>;
  /** One event-source round. */
  poll(): Promise<PollResult>;
  /** Polls until the queue is empty and nothing is in flight, or the budget runs out. */
  drain(budgetMs?: number): Promise<void>;
  record(key: string): Promise<Record<string, unknown> | undefined>;
  log(key: string): Promise<Record<string, unknown>[]>;
  ledger(key: string): Promise<LedgerEntry[]>;
  /** Receives and deletes every DLQ message, returning their parsed bodies. */
  takeDeadLetters(): Promise<Record<string, unknown>[]>;
  /** Sends a body to the work queue, as a console redrive does. */
  redrive(body: Record<string, unknown>): Promise<void>;
  readonly handler: ReturnType<typeof createExecutorHandler>;
  readonly eventsTable: string;
  readonly ledgerClient: DynamoDbLedger;
}

export async function executorFixture(
  options: {
    actions?: Record<string, Action>;
    action?: string;
    eventsTable?: string;
    ledgerTable?: string;
    breaker?: BreakerDeps;
    routes?: readonly RouteConfig[];
  } = {},
): Promise<ExecutorFixture> {
  const ddb = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const pair = await createQueuePair(sqs, inject('sqsEndpoint'), `exec-${randomUUID().slice(0, 8)}`, {
    maxReceiveCount: MAX_RECEIVE_COUNT,
    visibilityTimeoutSeconds: 1,
  });
  const routes = (options.routes ?? SCHEME_ROUTES).map((r) =>
    r.name === ROUTE && options.action !== undefined ? { ...r, action: options.action } : r,
  );
  const table = options.eventsTable ?? inject('eventsTable');
  const ingest = await ingestFixture({
    queueUrl: pair.queueUrl,
    routes,
    tableName: table,
    ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
  });
  const config = resolveConfig({ routes, queue: { maxReceiveCount: MAX_RECEIVE_COUNT } });
  const ledgerClient = new DynamoDbLedger(ddb, options.ledgerTable ?? inject('ledgerTable'));
  const doc = documentClient(ddb);
  const fx: ExecutorFixture = {
    ingest,
    queueUrl: pair.queueUrl,
    dlqUrl: pair.dlqUrl,
    clockOffsetMs: 0,
    ledgerClient,
    eventsTable: table,
    handler: createExecutorHandler({
      routes: new Map(config.routes.map((r) => [r.name, r])),
      actions: new Map(Object.entries({ payout: payoutAction(ledgerClient), ...options.actions })),
      store: new DynamoDbExecutionStore(ddb, table),
      routeState: new DynamoDbRouteStateStore(ddb, table),
      workQueue: new SqsWorkQueue(sqs, pair.queueUrl),
      visibility: new SqsMessageVisibility(sqs, pair.queueUrl),
      maxReceiveCount: MAX_RECEIVE_COUNT,
      now: () => Date.now() + fx.clockOffsetMs,
      logger: createLogger('retryproof-executor-test'),
      metrics: createMetrics('retryproof-executor-test'),
    }),
    async deliver(payload, key = uniqueKey(ROUTE)) {
      const answer = await ingest.invoke(signedDelivery(ROUTE, key, { payload }));
      if (answer.statusCode !== 202) throw new Error(`ingest answered ${String(answer.statusCode)}: ${String(answer.body)}`);
      return key;
    },
    poll: () => pollOnce(fx.handler, { sqs, queueUrl: pair.queueUrl, context: () => lambdaContext('retryproof-executor') }),
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
      const out = await doc.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :log)',
          ExpressionAttributeValues: { ':pk': recordPk(ROUTE, key), ':log': 'LOG#' },
        }),
      );
      return out.Items ?? [];
    },
    async ledger(key) {
      // The payout action posts on the real clock, whatever the executor's offset.
      const entries = await ledgerClient.listWindow(Date.now() - 3_600_000, Date.now() + 3_600_000);
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
  };
  return fx;
}
