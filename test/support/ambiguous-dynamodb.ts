/**
 * DynamoDB as the SDK sees it in the real world: a write that commits and then answers an
 * error, an error before the request reaches the table, and throttling, each retried by the
 * SDK's own retry middleware and retry decision. Only the wait between attempts is zero, so
 * a test or the simulation spends no time on backoff.
 *
 * Where it sits: a middleware at the `deserialize` step, which the SDK runs below the retry
 * middleware (step `finalizeRequest`, node_modules/@smithy/core/dist-es/submodules/retry/
 * middleware-retry/retryMiddleware.js, `retryMiddlewareOptions`). So every attempt the retry
 * middleware makes passes through it, and an error thrown here is judged by the SDK's own
 * classification (service-error-classification/service-error-classification.js):
 *  - 'commit-then-error': the request reaches DynamoDB Local (it commits, or fails its
 *    condition), then the answer is lost as a 500 InternalServerError. A 500 is TRANSIENT
 *    (TRANSIENT_ERROR_STATUS_CODES, service-error-classification/constants.js), so the SDK
 *    re-sends the identical request. DynamoDB's own docs say of a 500 that the request
 *    "may or may not have succeeded" (Developer Guide, "Error handling with DynamoDB").
 *  - 'error-before-commit': a 503 before the request reaches the table: retried the same way,
 *    and nothing was written.
 *  - 'throttle': ProvisionedThroughputExceededException (400) before the table: a THROTTLING
 *    error (THROTTLING_ERROR_CODES), retried at the throttling cost.
 *  - 'replicated-conflict': ReplicatedWriteConflictException, the answer of a global table with
 *    multi-Region strong consistency to a write that met a concurrent write of the same item from
 *    another Region: the write was not applied (Developer Guide, "How DynamoDB global tables
 *    work", multi-Region strong consistency). The SDK's class carries `$retryable`
 *    (node_modules/@aws-sdk/client-dynamodb/dist-es/models/errors.js), and the retry strategy
 *    retries what carries it (@smithy/core isRetryableByTrait): the SDK's own decision applies.
 *
 * How often: the client's own `maxAttempts` (DynamoDB's default is 4,
 * node_modules/@aws-sdk/client-dynamodb/dist-es/runtimeConfig.js) and the standard strategy's
 * retry quota (StandardRetryStrategy: 500 tokens, 14 per transient retry, 5 per throttle,
 * util-retry/retries-2026-config.js). ConfiguredRetryStrategy is the StandardRetryStrategy
 * with its backoff replaced; here it is replaced by zero. When the attempts or the quota run
 * out, the last error reaches the caller, as it would in a Lambda.
 */
import { InternalServerError, ProvisionedThroughputExceededException, ReplicatedWriteConflictException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { DeserializeHandler, DeserializeHandlerArguments, DeserializeHandlerOutput, HandlerExecutionContext, MetadataBearer } from '@smithy/types';

/** What one attempt of one command meets. */
export type AttemptOutcome = 'ok' | 'commit-then-error' | 'error-before-commit' | 'throttle' | 'replicated-conflict';

/**
 * Decides the fate of one attempt. `commandName` is the low-level command's name
 * (`UpdateItemCommand`, `PutItemCommand`, `GetItemCommand`, `QueryCommand`,
 * `TransactWriteItemsCommand`...), also for lib-dynamodb's document commands; `input` is its
 * input as sent, attribute values marshalled (`{ Key: { pk: { S: '...' } } }`); `attempt` is
 * 1 on the first attempt and counts the SDK's retries of the same call from there.
 */
export type DecideAttempt = (commandName: string, input: Readonly<Record<string, unknown>>, attempt: number) => AttemptOutcome;

const MIDDLEWARE_NAME = 'retryproofAmbiguousDynamoDb';

/** The SDK's `amz-sdk-request: attempt=N; max=M` header, set by the retry middleware on each attempt. */
function attemptOf(args: DeserializeHandlerArguments<object>): number {
  const headers = (args.request as { headers?: Record<string, string> } | undefined)?.headers ?? {};
  const match = /attempt=(\d+)/.exec(headers['amz-sdk-request'] ?? '');
  return match === null ? 1 : Number(match[1]);
}

function lostAnswer(commandName: string): InternalServerError {
  return new InternalServerError({
    message: `ambiguous ${commandName}: it reached DynamoDB, its answer was lost (a 500)`,
    $metadata: { httpStatusCode: 500 },
  });
}

function unavailable(commandName: string): Error {
  // DynamoDB answers a 503 as a bare service error; the SDK retries it by its status code.
  return Object.assign(new Error(`${commandName} failed before it reached DynamoDB (a 503)`), {
    name: 'ServiceUnavailable',
    $fault: 'server',
    $metadata: { httpStatusCode: 503 },
  });
}

function throttled(commandName: string): ProvisionedThroughputExceededException {
  return new ProvisionedThroughputExceededException({
    message: `${commandName} throttled`,
    $metadata: { httpStatusCode: 400 },
  });
}

function conflicted(commandName: string): ReplicatedWriteConflictException {
  return new ReplicatedWriteConflictException({
    message: `${commandName} conflicted with a write of the same item in another Region`,
    $metadata: { httpStatusCode: 400 },
  });
}

/**
 * Makes `client` meet the outcomes `decide` picks, attempt by attempt, with the SDK's own
 * retry decision and attempts and no wait between attempts. Every store built on this client
 * (document clients share its middleware stack and config) sees them. Returns a function that
 * puts the client back as it was.
 */
export function ambiguousDynamoDb(client: DynamoDBClient, decide: DecideAttempt): () => void {
  const config = client.config as unknown as { retryStrategy: () => Promise<unknown>; maxAttempts: () => Promise<number> };
  const originalStrategy = config.retryStrategy;
  // The client's own maxAttempts provider: 4 for DynamoDB unless configured.
  const strategy = new ConfiguredRetryStrategy(config.maxAttempts, 0);
  config.retryStrategy = () => Promise.resolve(strategy);
  client.middlewareStack.add(
    <Output extends MetadataBearer>(next: DeserializeHandler<object, Output>, context: HandlerExecutionContext) =>
      async (args: DeserializeHandlerArguments<object>): Promise<DeserializeHandlerOutput<Output>> => {
        const commandName = context.commandName ?? 'unknown';
        const outcome = decide(commandName, args.input as Record<string, unknown>, attemptOf(args));
        if (outcome === 'error-before-commit') throw unavailable(commandName);
        if (outcome === 'throttle') throw throttled(commandName);
        if (outcome === 'replicated-conflict') throw conflicted(commandName);
        if (outcome === 'ok') return next(args);
        try {
          await next(args);
        } catch {
          // Its own answer (a failed condition, say) is lost with the rest.
        }
        throw lostAnswer(commandName);
      },
    { step: 'deserialize', name: MIDDLEWARE_NAME, priority: 'high', override: true },
  );
  return () => {
    client.middlewareStack.remove(MIDDLEWARE_NAME);
    config.retryStrategy = originalStrategy;
  };
}

/**
 * A decide() for one command's first attempt: `outcome` for the first attempt of the first
 * call whose command is `commandName` and that `matches`, 'ok' for everything else (its retry
 * included). Counts how many attempts of that call were made.
 */
export function once(
  commandName: string,
  outcome: AttemptOutcome,
  matches: (input: Readonly<Record<string, unknown>>) => boolean = () => true,
): DecideAttempt & { readonly fired: () => boolean } {
  let fired = false;
  const decide: DecideAttempt = (name, input, attempt) => {
    if (fired || name !== commandName || attempt !== 1 || !matches(input)) return 'ok';
    fired = true;
    return outcome;
  };
  return Object.assign(decide, { fired: () => fired });
}
