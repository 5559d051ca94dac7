/**
 * `retryproof inspect` shows work that waits for its route's rate limit: RECEIVED, no attempt
 * spent, and when its delayed wake-up comes back; and, once it ran, how often it waited. The
 * records are made by the real executor on DynamoDB Local; the command reads them as it reads a
 * stack's.
 */
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { sdkClients } from '../../cli/aws-clients.ts';
import { afterAll, describe, expect, it, inject } from 'vitest';
import type { CommandContext } from '../../cli/command.ts';
import { inspectCommand } from '../../cli/commands/inspect.ts';
import { formatTime } from '../../cli/output.ts';
import type { Target } from '../../cli/target.ts';
import { localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { executorHarness } from '../executor/executor-harness.ts';

const ROUTE = 'standard-webhooks';

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
  config: resolveConfig({ routes: [{ name: ROUTE, signature: { scheme: 'standard-webhooks' }, secretName: 'x', action: 'payout', actionTimeSeconds: 1 }], demo: true }),
  routes: [ROUTE],
  queueArn: () => Promise.resolve('arn:aws:sqs:us-east-1:000000000000:retryproof'),
  close: () => undefined,
};

async function inspect(key: string, now: number, json = false): Promise<string> {
  let out = '';
  const ctx: CommandContext = {
    json,
    target: () => Promise.resolve(target),
    print: (text) => (out += text),
    progress: () => undefined,
    now: () => now,
    env: {},
    flags: {},
    aws: sdkClients({}),
  };
  await inspectCommand.run(ctx, { values: {}, positionals: [ROUTE, key] });
  return out;
}

describe('retryproof inspect on a rate-limited route', () => {
  it('shows waiting work with when it comes back and no attempt spent, then how often it waited', async () => {
    // Prepare: two deliveries at once on a route limited to 1 a minute: the second waits.
    const h = await executorHarness({ action: () => Promise.resolve({ ok: true }), rateLimit: { perMinute: 1 } });
    await h.run((await h.deliver({ amount: 1 })).message);
    const { key, message } = await h.deliver({ amount: 2 });
    expect((await h.run(message)).outcome).toBe('rate-limited');
    const back = Number((await h.record(key))?.lastEnqueuedAt);
    // Act
    const waiting = await inspect(key, h.now());
    const waitingJson = JSON.parse(await inspect(key, h.now(), true)) as { record: Record<string, unknown> };
    h.advance(60_000);
    expect((await h.run(h.sent[0]!)).outcome).toBe('completed');
    const done = await inspect(key, h.now());
    // Assess
    expect(waiting).toContain('status     RECEIVED');
    expect(waiting).toContain('attempts   0');
    expect(waiting).toContain(`waiting    for the route's rate limit, back ${formatTime(back)} (deferred 1 time; no attempt spent)`);
    expect(waitingJson.record).toMatchObject({ status: 'RECEIVED', attempts: 0, deferrals: 1, waitingUntil: back });
    expect(done).toContain('status     COMPLETED');
    expect(done).toContain("deferrals  1 (waited for the route's rate limit)");
    expect(done).not.toContain('waiting    ');
  });
});
