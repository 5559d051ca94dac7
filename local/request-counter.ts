import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface RequestCounter {
  /** Requests per SDK command name, retries included. */
  readonly byOperation: Map<string, number>;
  total(): number;
  /** Wall time the requests took, from send to parsed answer, summed; overlapping requests each count whole. */
  elapsedMs(): number;
  reset(): void;
}

/**
 * Counts the requests a DynamoDB client really sends, retries included, with a middleware
 * at the end of the SDK's stack, for the tests and the benchmark alike. Nothing is
 * mocked: every counted request reached DynamoDB Local.
 */
export function countRequests(client: DynamoDBClient): RequestCounter {
  const byOperation = new Map<string, number>();
  let elapsed = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      byOperation.set(name, (byOperation.get(name) ?? 0) + 1);
      const t0 = performance.now();
      try {
        return await next(args);
      } finally {
        elapsed += performance.now() - t0;
      }
    },
    { step: 'finalizeRequest', name: 'retryproofRequestCounter', priority: 'low' },
  );
  return {
    byOperation,
    total: () => [...byOperation.values()].reduce((a, b) => a + b, 0),
    elapsedMs: () => elapsed,
    reset: () => {
      byOperation.clear();
      elapsed = 0;
    },
  };
}
