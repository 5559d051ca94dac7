/**
 * The consumer a team would write for the executor's job with Powertools: an SQS handler
 * that runs `processPartialResponse` over a `BatchProcessor`, each record made idempotent
 * by `makeIdempotent` over `DynamoDBPersistenceLayer`, as the idempotency utility's
 * documentation shows for batch processing ("Batch integration").
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BENCH_ROUTE } from './receiver.ts';

/** An executor Lambda handler as the SQS event source invokes it. */
export type ConsumerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The idempotency settings for a consumer:
 * - the key is the delivery's route and key inside the message body, not the SQS message id
 *   (a duplicate delivery, a resend or a redrive is a new message with a new id);
 * - records live as long as retryproof's (35 days), not the 1 hour default, so a sender's
 *   late retry is still recognised;
 * - the in-memory cache stays off (its default): it lives in one Lambda container.
 */
export function powertoolsConsumerConfig(): IdempotencyConfig {
  return new IdempotencyConfig({
    eventKeyJmesPath: 'powertools_json(body).[route, key]',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: BENCH_ROUTE.ttlSeconds,
    useLocalCache: false,
  });
}

/**
 * @param deps.effect the business step, called once per record whose key is new; the
 * benchmark gives it the same cost as retryproof's measured action
 */
export function createPowertoolsConsumer(deps: {
  readonly persistenceStore: BasePersistenceLayer;
  readonly effect: (key: string) => Promise<void>;
}): ConsumerHandler {
  const processor = new BatchProcessor(EventType.SQS);
  const config = powertoolsConsumerConfig();
  const recordHandler = async (record: SQSRecord): Promise<{ ok: true }> => {
    const message = JSON.parse(record.body) as { key: string };
    await deps.effect(message.key);
    return { ok: true };
  };
  const idempotentRecord = makeIdempotent(recordHandler, { persistenceStore: deps.persistenceStore, config });
  return async (event, context) => {
    // The remaining time bounds an in-progress record's life, as the docs ask for functions.
    config.registerLambdaContext(context);
    return processPartialResponse(event, idempotentRecord, processor, { context });
  };
}
