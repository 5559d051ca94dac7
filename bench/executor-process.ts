/**
 * One executor in a process of its own, so its CPU is its own and no other receiver's work
 * runs beside it: retryproof's real executor (wireExecutor, as the Lambda wires it) or the
 * Powertools SQS consumer, each polling its queue as Lambda's SQS event source does (batches
 * of 10, the successes deleted). The parent (bench/executor-bench.ts) forks it with its
 * settings as one JSON argument and drives it over the IPC channel:
 *
 *   parent -> child  { type: 'start', pollers }   reset the counters, start polling
 *                    { type: 'stop' }             stop polling, answer 'stopped' with the counters
 *   child -> parent  { type: 'ready' } once, { type: 'effect', key, at } per run of the action,
 *                    { type: 'stopped', stats }; an effect also carries `inBatchMs`, the time since its batch
 *                    was handed to the handler
 *
 * The action is the same for both: it sends one IPC line with the key and the time, which is
 * the effect's timestamp (performance.timeOrigin + performance.now(), comparable across processes).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import { wireExecutor } from '../lambdas/executor/wire-executor.ts';
import { createLogger } from '../lambdas/observability/powertools.ts';
import { localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { CAPACITY_METER, meterCapacity } from '../local/capacity-meter.ts';
import { lambdaContext } from '../local/http-api-event.ts';
import { countRequests } from '../local/request-counter.ts';
import { pollOnce } from '../local/sqs-event-source.ts';
import type { SqsHandler } from '../local/sqs-event-source.ts';
import { phaseProfiler } from './cpu-profile.ts';
import { createPowertoolsConsumer } from './receivers/powertools-consumer.ts';
import { benchConfig, benchMetrics, BENCH_ACTION } from './receivers/retryproof.ts';

export type ExecutorName = 'retryproof' | 'powertools';

export interface ExecutorProcessSettings {
  readonly executor: ExecutorName;
  readonly dynamo: string;
  readonly sqs: string;
  readonly tableName: string;
  readonly queueUrl: string;
  /** Wait between two empty receives of one poller. */
  readonly idleMs: number;
}

/** What the child counted between a start and its stop. */
export interface ExecutorProcessStats {
  /** Messages received (a message handed back and received again counts again). */
  readonly received: number;
  readonly deleted: number;
  /** Receives that returned no message. */
  readonly emptyReceives: number;
  /** User + system CPU of this process, in microseconds. */
  readonly cpuMicros: number;
  readonly wallMs: number;
  readonly requests: number;
  /** Time the requests took, from send to parsed answer, summed. */
  readonly requestMs: number;
  readonly byOperation: Record<string, number>;
  /** Write units DynamoDB Local reported for the executor's table, index copies included. */
  readonly writeUnits: number;
  /** Conditional writes refused: DynamoDB Local reports no units for them, DynamoDB bills one at least. */
  readonly refusedWrites: number;
}

type ParentMessage = { readonly type: 'start'; readonly pollers: number } | { readonly type: 'stop' };

const now = (): number => performance.timeOrigin + performance.now();

function send(message: unknown): void {
  process.send?.(message);
}

/** When the batch that carries the running record was handed to the handler. */
const batchStartedAt = new AsyncLocalStorage<number>();

function effect(key: string): void {
  const at = now();
  send({ type: 'effect', key, at, inBatchMs: at - (batchStartedAt.getStore() ?? at) });
}

function executorHandler(settings: ExecutorProcessSettings, dynamo: ReturnType<typeof localDynamoClient>, sqs: ReturnType<typeof localSqsClient>): SqsHandler {
  if (settings.executor === 'retryproof') {
    return wireExecutor(
      { config: resolveConfig(benchConfig()), eventsTable: settings.tableName, queueUrl: settings.queueUrl },
      { dynamo, sqs },
      {
        actions: new Map([
          [
            BENCH_ACTION,
            (ctx) => {
              effect(ctx.key);
              return Promise.resolve({ ok: true });
            },
          ],
        ]),
        logger: createLogger('retryproof-executor-bench'),
        metrics: benchMetrics('retryproof-executor-bench'),
      },
    );
  }
  return createPowertoolsConsumer({
    persistenceStore: new DynamoDBPersistenceLayer({ tableName: settings.tableName, awsSdkV3Client: dynamo }),
    effect: (key) => {
      effect(key);
      return Promise.resolve();
    },
  });
}

function main(): void {
  const settings = JSON.parse(process.argv[2] ?? '{}') as ExecutorProcessSettings;
  const dynamo = localDynamoClient(settings.dynamo);
  const sqs = localSqsClient(settings.sqs);
  const requests = countRequests(dynamo);
  let refusedWrites = 0;
  dynamo.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        if (err instanceof Error && err.name === 'ConditionalCheckFailedException') refusedWrites++;
        throw err;
      }
    },
    { step: 'initialize', name: 'benchRefusedWrites', priority: 'low' },
  );
  let meter = meterCapacity(dynamo, settings.tableName);
  const inner = executorHandler(settings, dynamo, sqs);
  const handler: SqsHandler = (event, context) => batchStartedAt.run(now(), () => inner(event, context));

  let running: { stop: () => Promise<ExecutorProcessStats> } | undefined;
  const start = (pollers: number): { stop: () => Promise<ExecutorProcessStats> } => {
    requests.reset();
    refusedWrites = 0;
    dynamo.middlewareStack.remove(CAPACITY_METER);
    meter = meterCapacity(dynamo, settings.tableName);
    let stopped = false;
    let received = 0;
    let deleted = 0;
    let emptyReceives = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const loops = Array.from({ length: pollers }, async () => {
      while (!stopped) {
        const round = await pollOnce(handler, { sqs, queueUrl: settings.queueUrl, batchSize: 10, context: () => lambdaContext(`${settings.executor}-executor-bench`) });
        received += round.received;
        deleted += round.deleted;
        if (round.received === 0) {
          emptyReceives++;
          await new Promise((resolve) => setTimeout(resolve, settings.idleMs));
        }
      }
    });
    return {
      stop: async () => {
        stopped = true;
        await Promise.all(loops);
        const cpu = process.cpuUsage(cpu0);
        return {
          received,
          deleted,
          emptyReceives,
          cpuMicros: cpu.user + cpu.system,
          wallMs: performance.now() - t0,
          requests: requests.total(),
          requestMs: requests.elapsedMs(),
          byOperation: Object.fromEntries(requests.byOperation),
          writeUnits: meter.writeUnits('unlabelled'),
          refusedWrites,
        };
      },
    };
  };

  const profiler = phaseProfiler();
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'start') {
      void profiler.start().then(() => (running = start(message.pollers)));
      return;
    }
    const current = running;
    running = undefined;
    void (current?.stop().then(async (stats) => (await profiler.stop(`executor-${settings.executor}`), stats)) ?? Promise.reject(new Error('stop before start'))).then(
      (stats) => {
        send({ type: 'stopped', stats });
      },
      (err: unknown) => {
        send({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
      },
    );
  });
  // The parent ended, normally or not: so does this process.
  process.on('disconnect', () => {
    dynamo.destroy();
    sqs.destroy();
    process.exit(0);
  });
  send({ type: 'ready' });
}

main();
