/**
 * The seed design's first layer, as it was before retryproof: look the key up, and if it
 * is absent, write it (no condition) and process. Between the read and the write every
 * concurrent copy sees "absent" too: check-then-act. It is kept here only to be measured.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import type { SecretSource } from '../../lambdas/ports/secret-source.ts';
import type { WorkQueue } from '../../lambdas/ports/work-queue.ts';
import { acceptedAnswer, BENCH_ROUTE, incomingOf, workMessageFor } from './receiver.ts';
import type { IngestHandler } from './receiver.ts';

export function createNaiveReceiver(deps: {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  /** Called when the receiver has decided to process, before it queues: the benchmark counts these. */
  readonly effect?: (key: string) => Promise<void>;
}): IngestHandler {
  const verifier = createVerifier({ scheme: 'standard-webhooks' });
  return async (event): Promise<APIGatewayProxyStructuredResultV2> => {
    const { headers, rawBody } = incomingOf(event);
    const key = headers[BENCH_ROUTE.keyHeader];
    if (key === undefined || key === '') return { statusCode: 400, body: '' };
    const id = `${BENCH_ROUTE.name}#${key}`;
    // Strongly consistent, the most favourable reading of "look the key up first".
    const found = await deps.client.send(
      new GetItemCommand({ TableName: deps.tableName, Key: { id: { S: id } }, ConsistentRead: true }),
    );
    if (found.Item !== undefined) {
      return {
        statusCode: Number(found.Item.answerStatus?.N ?? '200'),
        headers: { 'content-type': 'application/json' },
        body: found.Item.answerBody?.S ?? '',
      };
    }
    const answer = acceptedAnswer(key);
    const nowMs = Date.now();
    await deps.client.send(
      new PutItemCommand({
        TableName: deps.tableName,
        Item: {
          id: { S: id },
          answerStatus: { N: String(answer.statusCode) },
          answerBody: { S: answer.body ?? '' },
          expiration: { N: String(Math.floor(nowMs / 1000) + BENCH_ROUTE.ttlSeconds) },
        },
      }),
    );
    // Then process: verify, run, queue. (The seed verified here, after the write.)
    const secrets = await deps.secrets.secretsFor(BENCH_ROUTE.secretName);
    const verdict = verifier.verify({ headers, rawBody, nowSeconds: Math.floor(nowMs / 1000) }, secrets);
    if (!verdict.ok) return { statusCode: 401, body: '' };
    await deps.effect?.(key);
    await deps.queue.send(workMessageFor(key, rawBody, nowMs));
    return answer;
  };
}
