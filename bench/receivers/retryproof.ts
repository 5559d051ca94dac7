/**
 * retryproof's own ingest, exactly as lambdas/ingest/handler.ts wires it, but on clients
 * the benchmark hands in. Only the queue is wrapped, to count what ingest decided to queue.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import type { WorkMessage } from '../../lambdas/domain/event-record.ts';
import { createIngestHandler } from '../../lambdas/ingest/create-ingest-handler.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE } from '../../lambdas/observability/metric-catalogue.ts';
import { createLogger, QuietMetrics } from '../../lambdas/observability/powertools.ts';
import type { SecretSource } from '../../lambdas/ports/secret-source.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { BENCH_ROUTE } from './receiver.ts';
import type { EffectCounter, IngestHandler } from './receiver.ts';

/** The action the bench route names; the executor in the storm registers it. */
export const BENCH_ACTION = 'benchEffect';

/** The configuration the benchmark deploys: one Standard Webhooks route, every default kept. */
export function benchConfig(): RetryproofConfig {
  return {
    routes: [
      {
        name: BENCH_ROUTE.name,
        signature: { scheme: 'standard-webhooks' },
        secretName: BENCH_ROUTE.secretName,
        action: BENCH_ACTION,
        actionTimeSeconds: 5,
        keepHeaders: ['content-type'],
        // The storm sends every key more than the threshold: 'pause' (the default) would park
        // all work until a person resumes the route, and the storm would measure the breaker
        // instead of the claim. 'alert' keeps the breaker in the path and lets the work run.
        breakerReaction: 'alert',
      },
    ],
  };
}

/** Counts each message ingest queues: for retryproof, a queued message is its decision to execute. */
export class CountingQueue implements WorkQueue {
  readonly #inner: WorkQueue;
  readonly #counter: EffectCounter;
  /**
   * When each key's latest send returned (performance.timeOrigin + performance.now()): the
   * executor benchmark times accept-to-effect from it, as it does for the consumer's front.
   */
  readonly queuedAt = new Map<string, number>();
  /** While set, each key's latest message is kept here: the executor benchmark sends it again as a duplicate message. */
  sent: Map<string, WorkMessage> | undefined;
  constructor(inner: WorkQueue, counter: EffectCounter) {
    this.#inner = inner;
    this.#counter = counter;
  }
  async send(message: WorkMessage): Promise<void> {
    await this.#inner.send(message);
    // Counted once the send succeeded. Ingest only queues: the effect's time is spent later, in the executor.
    this.#counter.count(message.key);
    this.queuedAt.set(message.key, performance.timeOrigin + performance.now());
    this.sent?.set(message.key, message);
  }
}

/**
 * Metrics as lambdas/observability/powertools.ts makes them (QuietMetrics: one EMF document an
 * invocation, its status metrics as directives of it), with a silent logger: many
 * invocations share one instance in this process (never in Lambda), so one invocation's
 * publish empties another's store and Metrics warns about it on every answer.
 */
export function benchMetrics(serviceName: string): Metrics {
  const quiet = (): void => undefined;
  return new QuietMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
  });
}

/** The circuit breaker's announcements, counted: one per key that trips (the delivery that marks the key announces it). */
export class NoticeCounter {
  notices = 0;
}

/** The events table, with every won markBreakerTripped counted: each is one trip's announcement. */
class CountingEventStore extends DynamoDbEventStore {
  readonly #counter: NoticeCounter;
  constructor(client: DynamoDBClient, tableName: string, counter: NoticeCounter) {
    super(client, tableName);
    this.#counter = counter;
  }
  override async markBreakerTripped(route: string, key: string, receivedAt: number, nowMs: number): Promise<boolean> {
    const won = await super.markBreakerTripped(route, key, receivedAt, nowMs);
    if (won) this.#counter.notices++;
    return won;
  }
}

export function createRetryproofReceiver(deps: {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  readonly notices: NoticeCounter;
  /** @default Date.now */
  readonly now?: () => number;
}): IngestHandler {
  const config = resolveConfig(benchConfig());
  return createIngestHandler({
    routes: prepareRoutes(config.routes),
    store: new CountingEventStore(deps.client, deps.tableName, deps.notices),
    queue: deps.queue,
    secrets: deps.secrets,
    now: deps.now ?? Date.now,
    breaker: { routeState: new DynamoDbRouteStateStore(deps.client, deps.tableName) },
    logger: createLogger('retryproof-ingest-bench'),
    metrics: benchMetrics('retryproof-ingest-bench'),
  });
}
