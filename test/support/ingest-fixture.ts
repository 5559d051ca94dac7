/**
 * The real ingest handler wired to DynamoDB Local and fauxqs, with one route per
 * signature scheme and a queue of its own, so a test can count its messages.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { DeleteMessageCommand, GetQueueAttributesCommand, PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RouteConfig, SignatureConfig } from '../../lambdas/config/route-config.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { keyHeadersFor, recordKeyFor } from '../../local/sample-delivery.ts';
import { keyIsBodyHash } from '../../lambdas/domain/idempotency-key.ts';
import { createIngestHandler } from '../../lambdas/ingest/create-ingest-handler.ts';
import type { IngestDeps } from '../../lambdas/ingest/ingest-delivery.ts';
import { prepareRoutes } from '../../lambdas/ingest/prepared-route.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import { SqsWorkQueue } from '../../lambdas/queue/sqs-work-queue.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { DynamoDbEventStore } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { parseWorkMessage } from '../../lambdas/executor/work-message.ts';
import { createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { httpApiEvent, lambdaContext } from '../../local/http-api-event.ts';
import { testConfig } from './test-config.ts';

export const STANDARD_SECRET = `whsec_${Buffer.from('retryproof-test-secret-standard!').toString('base64')}`;
export const PREVIOUS_STANDARD_SECRET = `whsec_${Buffer.from('retryproof-test-secret-previous!').toString('base64')}`;

/** The secret a route used before its rotation. */
export function previousSecretOf(route: string): string {
  return route === 'standard-webhooks' ? PREVIOUS_STANDARD_SECRET : `${route}-previous-secret`;
}

/** One route per scheme. Route names equal scheme names. */
const SCHEMES: readonly { name: string; signature: SignatureConfig; secret: string }[] = [
  { name: 'standard-webhooks', signature: { scheme: 'standard-webhooks' }, secret: STANDARD_SECRET },
  { name: 'stripe', signature: { scheme: 'stripe' }, secret: 'whsec_stripe_test_secret' },
  { name: 'github', signature: { scheme: 'github' }, secret: 'github-test-secret' },
  { name: 'shopify', signature: { scheme: 'shopify' }, secret: 'shopify-test-secret' },
  { name: 'slack', signature: { scheme: 'slack' }, secret: '8f742231b10e8888abcd99yyyzzz85a5' },
  {
    name: 'hmac-sha256',
    signature: { scheme: 'hmac-sha256', header: 'x-signature', prefix: 'sha256=', encoding: 'hex' },
    secret: 'generic-test-secret',
  },
];
export const SCHEME_ROUTES: readonly (RouteConfig & { secret: string })[] = SCHEMES.map((r) => ({
  ...r,
  secretName: `test/${r.name}`,
  action: 'payout',
  actionTimeSeconds: 5,
  keepHeaders: ['content-type'],
}));

export interface Delivery {
  readonly route: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/**
 * A signed delivery for a scheme's route, carrying `key` where that scheme's sender puts
 * its id: a header, or the body's `id` / `event_id`.
 */
export function signedDelivery(
  route: string,
  key: string,
  options: { payload?: Record<string, unknown>; nowSeconds?: number; secret?: string; omitKey?: boolean } = {},
): Delivery {
  const config = SCHEME_ROUTES.find((r) => r.name === route);
  if (config === undefined) throw new Error(`no test route ${route}`);
  const signature: SignatureConfig = config.signature;
  const payload = options.payload ?? { amount: 1250, currency: 'EUR' };
  const omit = options.omitKey === true;
  const keyHeaders = omit ? {} : keyHeadersFor(signature.scheme, key);
  let document: Record<string, unknown> = payload;
  if (!omit && signature.scheme === 'stripe') document = { id: key, ...payload };
  if (!omit && signature.scheme === 'slack') document = { event_id: key, ...payload };
  // The body-only schemes key on the body's hash: the sender's id goes in the body as well,
  // so two keys of a test are two bodies.
  if (keyIsBodyHash(signature.scheme, config.key)) document = { id: key, ...payload };
  const body = JSON.stringify(document);
  const signed = signDelivery(signature, options.secret ?? config.secret, Buffer.from(body), {
    nowSeconds: options.nowSeconds ?? Math.floor(Date.now() / 1000),
    id: key,
  });
  return { route, body, headers: { 'content-type': 'application/json', ...keyHeaders, ...signed } };
}

/**
 * The idempotency key the ingest derives for a delivery made by signedDelivery with `key`:
 * `key` itself, or the body's hash on the body-only schemes.
 */
export function recordKeyOf(delivery: Delivery, key: string): string {
  const config = SCHEME_ROUTES.find((r) => r.name === delivery.route);
  return config === undefined ? key : recordKeyFor(config, key, delivery.body);
}

/** A key in the shape each scheme uses, unique per call. */
export function uniqueKey(route: string): string {
  const id = randomUUID();
  return route === 'github' ? `123456:${id}` : `evt_${id}`;
}

export interface IngestFixture {
  /** `timeLeftMs`: what the invocation's context says is left of it (or a function read each time). @default 30_000 */
  readonly invoke: (delivery: Delivery, timeLeftMs?: number | (() => number)) => Promise<APIGatewayProxyStructuredResultV2>;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly tableName: string;
  readonly ddb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly messagesInQueue: () => Promise<number>;
  /**
   * Moves the handler's clock on (the wall clock plus what was advanced; not with an injected
   * `now`). A copy counts as a repeat only when it arrives twice the clock bound after the
   * answer (ANSWER_MARGIN_MS): tests of repeats move past it rather than wait.
   */
  readonly advance: (ms: number) => void;
  /**
   * A worker takes the queued work: each message's lease, as the executor's lease phase takes it
   * (the lease of a new delivery's message starts the breaker's count), and the message is
   * deleted. The action is not run: these tests are about the ingest. Returns the leases taken.
   */
  readonly takeWork: () => Promise<number>;
  /** Drops every message in the queue: work whose message was lost. */
  readonly purgeQueue: () => Promise<void>;
}

/** Builds the real handler against the local services, with its own queue pair. */
export async function ingestFixture(
  overrides: Partial<Pick<IngestDeps, 'now' | 'resendAfterMs' | 'queue' | 'store' | 'breaker' | 'secrets' | 'bodies' | 'order'>> & {
    /** @default - Powertools' logger, silent in tests */
    logger?: Logger;
    routes?: readonly RouteConfig[];
    queueUrl?: string;
    tableName?: string;
  } = {},
): Promise<IngestFixture> {
  const ddb = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  const pair = await createQueuePair(sqs, inject('sqsEndpoint'), `ingest-${randomUUID().slice(0, 8)}`, { maxReceiveCount: 5 });
  const queueUrl = overrides.queueUrl ?? pair.queueUrl;
  const routes = overrides.routes ?? SCHEME_ROUTES;
  const config = resolveConfig(testConfig(routes));
  // Every route is mid-rotation: the current and the previous secret are both live.
  const secrets =
    overrides.secrets ??
    new StaticSecretSource(
      Object.fromEntries(
        SCHEME_ROUTES.map((r) => [r.secretName, JSON.stringify({ current: r.secret, previous: previousSecretOf(r.name) })]),
      ),
    );
  const tableName = overrides.tableName ?? inject('eventsTable');
  let advancedMs = 0;
  const now = overrides.now ?? (() => Date.now() + advancedMs);
  const handler = createIngestHandler({
    routes: prepareRoutes(config.routes),
    store: overrides.store ?? new DynamoDbEventStore(ddb, tableName),
    queue: overrides.queue ?? new SqsWorkQueue(sqs, queueUrl),
    secrets,
    now,
    ...(overrides.resendAfterMs === undefined ? {} : { resendAfterMs: overrides.resendAfterMs }),
    ...(overrides.breaker === undefined ? {} : { breaker: overrides.breaker }),
    ...(overrides.bodies === undefined ? {} : { bodies: overrides.bodies }),
    ...(overrides.order === undefined ? {} : { order: overrides.order }),
    logger: overrides.logger ?? createLogger('retryproof-ingest-test'),
    metrics: createMetrics('retryproof-ingest-test'),
  });
  return {
    invoke: (delivery, timeLeftMs) =>
      handler(
        httpApiEvent({ route: delivery.route, body: delivery.body, headers: delivery.headers }),
        timeLeftMs === undefined
          ? lambdaContext()
          : { ...lambdaContext(), getRemainingTimeInMillis: typeof timeLeftMs === 'function' ? timeLeftMs : () => timeLeftMs },
      ),
    queueUrl,
    dlqUrl: pair.dlqUrl,
    tableName,
    ddb,
    sqs,
    advance: (ms) => {
      if (overrides.now !== undefined) throw new Error('advance() moves the fixture\'s own clock; this fixture has an injected now');
      advancedMs += ms;
    },
    takeWork: () => takeWork(sqs, queueUrl, new DynamoDbExecutionStore(ddb, tableName), now),
    purgeQueue: async () => {
      await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    },
    messagesInQueue: async () => {
      const out = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
      );
    },
  };
}

async function takeWork(sqs: SQSClient, queueUrl: string, store: DynamoDbExecutionStore, now: () => number): Promise<number> {
  let leases = 0;
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if ((out.Messages ?? []).length === 0) return leases;
    for (const m of out.Messages ?? []) {
      const work = parseWorkMessage(m.Body ?? '');
      if (work === undefined) throw new Error(`not a work message: ${String(m.Body)}`);
      const { route, key, receivedAt, fingerprint, startsCount } = work;
      const lease = await store.acquireLease({ route, key, receivedAt, nowMs: now(), leaseMs: 60_000, token: randomUUID(), maxAttempts: 5, fingerprint, ...(startsCount ? { startsCount } : {}) });
      if (lease.kind === 'leased') leases++;
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}
