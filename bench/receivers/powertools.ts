/**
 * The Powertools peer: the same work as retryproof's ingest (verify the Standard Webhooks
 * signature with the same verifier, queue the same SQS message), made idempotent by
 * `makeHandlerIdempotent` over `DynamoDBPersistenceLayer`, configured as its
 * documentation recommends. BENCHMARKS.md lists every setting and why.
 */
import middy from '@middy/core';
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import type { SecretSource } from '../../lambdas/ports/secret-source.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { acceptedAnswer, BENCH_ROUTE, incomingOf, workMessageFor } from './receiver.ts';
import type { IngestHandler } from './receiver.ts';

/**
 * The idempotency settings, as the documentation recommends them for this use:
 * - the key is the sender's delivery id, not the whole event (headers and request ids
 *   change between retries);
 * - payload validation on the raw body, so a reused key with another body is refused
 *   (retryproof answers 422 there);
 * - a missing key is an error, never a silent non-idempotent run;
 * - records live as long as retryproof's (35 days), not the 1 hour default;
 * - the in-memory cache stays off (its default): each Lambda container has its own, and a
 *   single-process benchmark would make it a shared cache that no deployment has.
 */
export function powertoolsIdempotencyConfig(): IdempotencyConfig {
  return new IdempotencyConfig({
    eventKeyJmesPath: `headers."${BENCH_ROUTE.keyHeader}"`,
    payloadValidationJmesPath: 'body',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: BENCH_ROUTE.ttlSeconds,
    useLocalCache: false,
  });
}

export function createPowertoolsReceiver(deps: {
  readonly persistenceStore: BasePersistenceLayer;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  /** Called when the idempotent body runs, before it queues: the benchmark counts these. */
  readonly effect?: (key: string) => Promise<void>;
}): IngestHandler {
  const verifier = createVerifier({ scheme: 'standard-webhooks' });
  const unauthorized: APIGatewayProxyStructuredResultV2 = { statusCode: 401, body: '' };

  // Verification runs before the idempotency middleware, as retryproof verifies before it
  // claims: a forged copy writes nothing, and a 401 is never stored as the key's answer.
  const verifySignature: middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> = {
    before: async (request) => {
      const { headers, rawBody } = incomingOf(request.event);
      const secrets = await deps.secrets.secretsFor(BENCH_ROUTE.secretName);
      const verdict = verifier.verify({ headers, rawBody, nowSeconds: Math.floor(Date.now() / 1000) }, secrets);
      return verdict.ok ? undefined : unauthorized;
    },
  };

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(verifySignature)
    .use(makeHandlerIdempotent({ persistenceStore: deps.persistenceStore, config: powertoolsIdempotencyConfig() }))
    .handler(async (event): Promise<APIGatewayProxyStructuredResultV2> => {
      const { headers, rawBody } = incomingOf(event);
      const key = headers[BENCH_ROUTE.keyHeader] ?? '';
      await deps.effect?.(key);
      await deps.queue.send(workMessageFor(key, rawBody, Date.now()));
      return acceptedAnswer(key);
    });
}
