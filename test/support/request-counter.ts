import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Counts the HTTP requests a DynamoDB client really sends, retries included, by a
 * middleware at the end of the SDK's stack. Nothing is mocked: every request reaches
 * DynamoDB Local.
 */
export function countRequests(client: DynamoDBClient): { readonly byOperation: Map<string, number>; total(): number; reset(): void } {
  const byOperation = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      byOperation.set(name, (byOperation.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'finalizeRequest', name: 'retryproofRequestCounter', priority: 'low' },
  );
  return {
    byOperation,
    total: () => [...byOperation.values()].reduce((a, b) => a + b, 0),
    reset: () => {
      byOperation.clear();
    },
  };
}
