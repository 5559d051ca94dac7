/**
 * `retryproof inspect` over the tests' events table, read as the CLI reads a stack's: the table
 * of DynamoDB Local, one standard-webhooks route, no ledger. For specs whose records the real
 * executor made (executor-harness.ts).
 */
import { afterAll, inject } from 'vitest';
import { sdkClients } from '../../cli/aws-clients.ts';
import type { CommandContext } from '../../cli/command.ts';
import { inspectCommand } from '../../cli/commands/inspect.ts';
import type { Target } from '../../cli/target.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';

export const INSPECTED_ROUTE = 'standard-webhooks';

/** Runs `retryproof inspect ROUTE key` at `now` (with --json when asked) and returns what it printed. Call at a spec file's top level. */
export function inspectOnTestTable(): (key: string, options?: { json?: boolean; now?: number }) => Promise<string> {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const sqs = localSqsClient(inject('sqsEndpoint'));
  afterAll(() => {
    dynamo.destroy();
    sqs.destroy();
  });
  const target: Target = {
    kind: 'aws',
    description: 'the test table',
    dynamo,
    sqs,
    eventsTable: inject('eventsTable'),
    ledgerTable: undefined,
    queueUrl: inject('queueUrl'),
    dlqUrl: inject('dlqUrl'),
    config: resolveConfig({
      routes: [{ name: INSPECTED_ROUTE, signature: { scheme: 'standard-webhooks' }, secretName: 'x', action: 'payout', actionTimeSeconds: 1 }],
      demo: true,
    }),
    routes: [INSPECTED_ROUTE],
    queueArn: () => Promise.resolve('arn:aws:sqs:us-east-1:000000000000:retryproof'),
    close: () => undefined,
  };
  return async (key, options = {}) => {
    let out = '';
    const ctx: CommandContext = {
      json: options.json === true,
      target: () => Promise.resolve(target),
      print: (text) => (out += text),
      progress: () => undefined,
      now: () => options.now ?? Date.now(),
      env: {},
      flags: {},
      aws: sdkClients({}),
    };
    await inspectCommand.run(ctx, { values: {}, positionals: [INSPECTED_ROUTE, key] });
    return out;
  };
}
