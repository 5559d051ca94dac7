/**
 * An outage of the executor's own dependency (DynamoDB down: every attempt of every call
 * fails before it reaches the table, and the SDK gives up after its maxAttempts) must not walk
 * ordinary work to the DLQ: each receive counts toward maxReceiveCount, so the message comes
 * back later each time (defect 13).
 */
import { describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { OUTAGE_HORIZON_SECONDS, dependencyBackoffSeconds, outageReceiveCount } from '../../lambdas/config/route-config.ts';
import { createExecutorHandler } from '../../lambdas/executor/create-executor-handler.ts';
import { createLogger, createMetrics } from '../../lambdas/observability/powertools.ts';
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { lambdaContext } from '../../local/http-api-event.ts';
import { ambiguousDynamoDb } from '../support/ambiguous-dynamodb.ts';
import { SCHEME_ROUTES } from '../support/ingest-fixture.ts';
import { testConfig } from '../support/test-config.ts';
import { ROUTE } from './executor-harness.ts';

/** A work message for a record that needs no table: the store never answers anyway. */
function recordOf(receiveCount: number) {
  const body = JSON.stringify({ v: 1, route: ROUTE, key: `evt_outage_${receiveCount}`, fingerprint: '0'.repeat(64), receivedAt: Date.now(), body: '{}', bodyEncoding: 'utf8', headers: {} });
  return {
    messageId: `m-${receiveCount}`,
    receiptHandle: `handle-${receiveCount}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: String(Date.now()), SenderId: 'test', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:work',
    awsRegion: 'us-east-1',
  };
}

describe('the executor while DynamoDB is down', () => {
  it('hands a message back with a visibility that doubles with its receive count, so a day-long outage spends 9 receives, not 262', async () => {
    // Prepare: the stack's defaults (a 330 s visibility timeout, a 55 s function), and a DynamoDB that never answers.
    const config = resolveConfig(testConfig(SCHEME_ROUTES.map((r) => ({ ...r, actionTimeSeconds: 15 }))));
    const visibility = config.queue.visibilityTimeoutSeconds;
    const timeout = config.executorTimeoutSeconds;
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const heal = ambiguousDynamoDb(client, () => 'error-before-commit');
    const changes: [string, number][] = [];
    const recording: MessageVisibility = {
      changeVisibility: (handle, seconds) => {
        changes.push([handle, seconds]);
        return Promise.resolve();
      },
    };
    const handler = createExecutorHandler({
      routes: new Map(config.routes.map((r) => [r.name, r])),
      actions: new Map([['payout', () => Promise.resolve({})]]),
      store: new DynamoDbExecutionStore(client, inject('eventsTable')),
      workQueue: { send: () => Promise.resolve() },
      visibility: recording,
      maxReceiveCount: config.queue.maxReceiveCount,
      dependencyBackoff: (receiveCount) => dependencyBackoffSeconds(receiveCount, visibility, timeout),
      now: Date.now,
      logger: createLogger('retryproof-executor-test'),
      metrics: createMetrics('retryproof-executor-test'),
    });
    // Act: the same work on its 1st, 3rd and 10th receive.
    const answers = [];
    for (const receiveCount of [1, 3, 10]) answers.push(await handler({ Records: [recordOf(receiveCount)] }, lambdaContext()));
    heal();
    // Assess: each goes back, hidden 330 s, then 4 x, then as long as SQS allows from its receive.
    expect(answers.map((a) => a.batchItemFailures)).toEqual([[{ itemIdentifier: 'm-1' }], [{ itemIdentifier: 'm-3' }], [{ itemIdentifier: 'm-10' }]]);
    expect([visibility, timeout]).toEqual([330, 55]);
    expect(changes).toEqual([
      ['handle-1', 330],
      ['handle-3', 1320],
      ['handle-10', 43_200 - 55],
    ]);
    // The receives a day of this spends, against one per visibility timeout without the backoff;
    // the default maxReceiveCount is the backstop (2 x 5 + 2) plus these.
    expect(outageReceiveCount(OUTAGE_HORIZON_SECONDS, visibility, timeout)).toBe(9);
    expect(Math.ceil(OUTAGE_HORIZON_SECONDS / visibility)).toBe(262);
    expect(config.queue.maxReceiveCount).toBe(12 + 9);
  });
});
