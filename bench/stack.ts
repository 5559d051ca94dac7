/**
 * The three receivers side by side on one DynamoDB Local and one fauxqs: each with its
 * own table, its own queue pair, its own DynamoDB client (whose requests are counted on
 * the wire) and its own effect counter. retryproof also gets its executor, for the storm.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, PurgeQueueCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { WorkMessage } from '../lambdas/domain/event-record.ts';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import { createExecutorHandler } from '../lambdas/executor/create-executor-handler.ts';
import { createLogger } from '../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../lambdas/queue/sqs-work-queue.ts';
import { StaticSecretSource } from '../local/static-secret-source.ts';
import { DynamoDbExecutionStore } from '../lambdas/store/dynamodb-execution-store.ts';
import { createEventsTable, createQueuePair, localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { lambdaContext } from '../local/http-api-event.ts';
import { pollOnce } from '../local/sqs-event-source.ts';
import { BENCH_SECRET } from './deliveries.ts';
import { createNaiveReceiver } from './receivers/naive.ts';
import { createPowertoolsReceiver } from './receivers/powertools.ts';
import { BENCH_ROUTE, EffectCounter } from './receivers/receiver.ts';
import type { IngestHandler, ReceiverName } from './receivers/receiver.ts';
import { benchConfig, benchMetrics, BENCH_ACTION, CountingQueue, NoticeCounter, createRetryproofReceiver } from './receivers/retryproof.ts';
import { CAPACITY_METER, meterCapacity } from '../local/capacity-meter.ts';
import { countRequests } from '../local/request-counter.ts';
import type { RequestCounter } from '../local/request-counter.ts';
import { createNaiveTable, createPowertoolsTable } from './tables.ts';

/** What the sender saw. A thrown invocation is answered 500, as API Gateway answers it. */
export interface Answer {
  readonly status: number;
  /** The error's name when the invocation threw. */
  readonly error?: string;
}

export interface BenchReceiver {
  readonly name: ReceiverName;
  readonly requests: RequestCounter;
  /** Per key: retryproof's queued messages; the peers' runs of their idempotent body. */
  readonly effects: EffectCounter;
  readonly queueUrl: string;
  /** retryproof only: operator notices its circuit breaker sent. */
  readonly notices?: () => number;
  /**
   * retryproof only: moves its ingest's clock on by `ms`, as the time a sender waits before it
   * retries (its own timeout), rather than waiting for it. A copy counts for the circuit breaker
   * only when it arrives more than ANSWER_MARGIN_MS after our answer; a sooner one pays one more
   * write (excuseRacingCopy), which a sender's retry after its timeout never does.
   */
  readonly senderWaits?: (ms: number) => void;
  /** retryproof only: when each key's work message was last sent (see CountingQueue.queuedAt). */
  readonly queuedAt?: ReadonlyMap<string, number>;
  /**
   * retryproof only: from now on keeps each key's work message, and returns a function that
   * sends a key's message again on its queue (a duplicate message: SQS's at-least-once
   * delivery, a resend). Undefined for a key it never sent.
   */
  readonly keepMessages?: () => (key: string) => Promise<boolean>;
  invoke(event: APIGatewayProxyEventV2): Promise<Answer>;
}

/** retryproof's executor on its queue: action runs are the effect, counted per key. */
export interface BenchExecutor {
  readonly requests: RequestCounter;
  readonly effects: EffectCounter;
  /** Polls with `pollers` concurrent event-source rounds until the queue is empty. */
  drain(pollers: number, budgetMs: number): Promise<{ messages: number }>;
  /**
   * Polls in the background, as the event source does, until stopped: a sender's retry after
   * a lost answer then finds the work taken by a worker, as it would on AWS.
   */
  run(pollers: number): { stop(): Promise<{ messages: number }> };
}

export interface WriteMeter {
  /** Labels the calls that go out from now on, on both clients. */
  phase(label: string): void;
  /** Write units of a phase, table and index copies together, both clients. */
  writeUnits(label: string): number;
  stop(): void;
}

export interface BenchStack {
  readonly receivers: readonly BenchReceiver[];
  /** retryproof's events table: its executor in a process of its own works on it. */
  readonly retryproofTable: string;
  readonly executor: BenchExecutor;
  readonly sqs: SQSClient;
  messagesInQueue(queueUrl: string): Promise<number>;
  /** Empties a queue, so the executor sees only what comes next. */
  purge(queueUrl: string): Promise<void>;
  /**
   * Meters the write units retryproof's ingest and executor consume on its table, per phase
   * (DynamoDB Local reports them per table and index), until stopped.
   */
  meterRetryproofWrites(): WriteMeter;
  /** Meters the write units Powertools' ingest consumes on its table, per phase, until stopped. */
  meterPowertoolsWrites(): WriteMeter;
  destroy(): void;
}

/** Meters the write units `clients` consume on `tableName`, together, per phase. */
function writeMeter(clients: readonly DynamoDBClient[], tableName: string): WriteMeter {
  const meters = clients.map((c) => meterCapacity(c, tableName));
  return {
    phase: (label) => {
      for (const m of meters) m.phase(label);
    },
    writeUnits: (label) => meters.reduce((sum, m) => sum + m.writeUnits(label), 0),
    stop: () => {
      for (const c of clients) c.middlewareStack.remove(CAPACITY_METER);
    },
  };
}

function answering(handler: IngestHandler): (event: APIGatewayProxyEventV2) => Promise<Answer> {
  return async (event) => {
    try {
      const result = await handler(event, lambdaContext('bench-ingest'));
      return { status: result.statusCode ?? 200 };
    } catch (err) {
      return { status: 500, error: err instanceof Error ? err.name : 'unknown' };
    }
  };
}

/** Builds the three receivers (and retryproof's executor) on the local endpoints given. */
export async function createBenchStack(endpoints: { readonly dynamo: string; readonly sqs: string }): Promise<BenchStack> {
  const run = randomUUID().slice(0, 8);
  const admin = localDynamoClient(endpoints.dynamo);
  const sqs = localSqsClient(endpoints.sqs);
  const secrets = new StaticSecretSource({ [BENCH_ROUTE.secretName]: BENCH_SECRET });
  const clients: DynamoDBClient[] = [admin];
  const client = (): { client: DynamoDBClient; requests: RequestCounter } => {
    const c = localDynamoClient(endpoints.dynamo);
    clients.push(c);
    return { client: c, requests: countRequests(c) };
  };
  const pair = (name: string) => createQueuePair(sqs, endpoints.sqs, `bench-${run}-${name}`, { maxReceiveCount: 5 });

  const [eventsTable, powertoolsTable, naiveTable, rpQueues, ptQueues, nvQueues] = await Promise.all([
    createEventsTable(admin, `bench-${run}-retryproof`),
    createPowertoolsTable(admin, `bench-${run}-powertools`),
    createNaiveTable(admin, `bench-${run}-naive`),
    pair('retryproof'),
    pair('powertools'),
    pair('naive'),
  ]);

  const rp = client();
  const rpEffects = new EffectCounter();
  const notices = new NoticeCounter();
  let waitedMs = 0;
  const rpQueue = new CountingQueue(new SqsWorkQueue(sqs, rpQueues.queueUrl), rpEffects);
  const retryproof: BenchReceiver = {
    name: 'retryproof',
    requests: rp.requests,
    effects: rpEffects,
    queueUrl: rpQueues.queueUrl,
    notices: () => notices.notices,
    queuedAt: rpQueue.queuedAt,
    keepMessages: () => {
      const sent = new Map<string, WorkMessage>();
      rpQueue.sent = sent;
      const raw = new SqsWorkQueue(sqs, rpQueues.queueUrl);
      return async (key) => {
        const message = sent.get(key);
        if (message === undefined) return false;
        await raw.send(message);
        return true;
      };
    },
    senderWaits: (ms) => {
      waitedMs += ms;
    },
    invoke: answering(
      createRetryproofReceiver({
        notices,
        now: () => Date.now() + waitedMs,
        client: rp.client,
        tableName: eventsTable,
        queue: rpQueue,
        secrets,
      }),
    ),
  };

  const pt = client();
  const ptEffects = new EffectCounter();
  const powertools: BenchReceiver = {
    name: 'powertools',
    requests: pt.requests,
    effects: ptEffects,
    queueUrl: ptQueues.queueUrl,
    invoke: answering(
      createPowertoolsReceiver({
        persistenceStore: new DynamoDBPersistenceLayer({ tableName: powertoolsTable, awsSdkV3Client: pt.client }),
        queue: new SqsWorkQueue(sqs, ptQueues.queueUrl),
        secrets,
        effect: (key) => ptEffects.run(key),
      }),
    ),
  };

  const nv = client();
  const nvEffects = new EffectCounter();
  const naive: BenchReceiver = {
    name: 'naive',
    requests: nv.requests,
    effects: nvEffects,
    queueUrl: nvQueues.queueUrl,
    invoke: answering(
      createNaiveReceiver({
        client: nv.client,
        tableName: naiveTable,
        queue: new SqsWorkQueue(sqs, nvQueues.queueUrl),
        secrets,
        effect: (key) => nvEffects.run(key),
      }),
    ),
  };

  const ex = client();
  const exEffects = new EffectCounter();
  const config = resolveConfig(benchConfig());
  const executorHandler = createExecutorHandler({
    routes: new Map(config.routes.map((r) => [r.name, r])),
    actions: new Map([
      [
        BENCH_ACTION,
        async (ctx: { key: string }) => {
          await exEffects.run(ctx.key);
          return { ok: true };
        },
      ],
    ]),
    store: new DynamoDbExecutionStore(ex.client, eventsTable),
    workQueue: new SqsWorkQueue(sqs, rpQueues.queueUrl),
    maxReceiveCount: config.queue.maxReceiveCount,
    now: Date.now,
    logger: createLogger('retryproof-executor-bench'),
    metrics: benchMetrics('retryproof-executor-bench'),
  });

  const messagesInQueue = async (queueUrl: string): Promise<number> => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  };

  const executor: BenchExecutor = {
    requests: ex.requests,
    effects: exEffects,
    run(pollers) {
      let stopped = false;
      let messages = 0;
      const loops = Array.from({ length: pollers }, async () => {
        while (!stopped) {
          const round = await pollOnce(executorHandler, { sqs, queueUrl: rpQueues.queueUrl, context: () => lambdaContext('bench-executor') });
          messages += round.received;
          if (round.received === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        }
      });
      return {
        stop: async () => {
          stopped = true;
          await Promise.all(loops);
          return { messages };
        },
      };
    },
    async drain(pollers, budgetMs) {
      const until = Date.now() + budgetMs;
      let messages = 0;
      for (;;) {
        const rounds = await Promise.all(
          Array.from({ length: pollers }, () =>
            pollOnce(executorHandler, { sqs, queueUrl: rpQueues.queueUrl, context: () => lambdaContext('bench-executor') }),
          ),
        );
        const received = rounds.reduce((sum, r) => sum + r.received, 0);
        messages += received;
        if (received === 0) {
          if ((await messagesInQueue(rpQueues.queueUrl)) === 0) return { messages };
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        if (Date.now() > until) throw new Error(`the executor did not drain its queue within ${budgetMs} ms`);
      }
    },
  };

  return {
    receivers: [retryproof, powertools, naive],
    retryproofTable: eventsTable,
    executor,
    sqs,
    messagesInQueue,
    meterRetryproofWrites: () => writeMeter([rp.client, ex.client], eventsTable),
    meterPowertoolsWrites: () => writeMeter([pt.client], powertoolsTable),
    purge: async (queueUrl) => {
      await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    },
    destroy: () => {
      for (const c of clients) c.destroy();
      sqs.destroy();
    },
  };
}
