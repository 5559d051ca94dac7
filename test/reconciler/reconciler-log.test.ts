import { describe, expect, inject, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ExecutionLogEntry } from '../../lambdas/ports/execution-store.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbReconcilerStore } from '../../lambdas/store/dynamodb-reconciler-store.ts';
import { recordPk } from '../../lambdas/store/record-keys.ts';
import { localDynamoClient } from '../../local/aws-clients.ts';
import { ROUTE } from '../support/executor-fixture.ts';
import { uniqueKey } from '../support/ingest-fixture.ts';

describe('the execution log a record keeps', () => {
  it('keeps two entries of the same millisecond, attempt and kind, whichever store writes them', async () => {
    // Prepare: identical entries, as two workers or two reconciler runs can write in one millisecond.
    const dynamo = localDynamoClient(inject('dynamoEndpoint'));
    const table = inject('eventsTable');
    const key = uniqueKey(ROUTE);
    const at = Date.now();
    const entry: ExecutionLogEntry = {
      route: ROUTE,
      key,
      receivedAt: at - 1_000,
      kind: 'reconciliation',
      attempt: 1,
      startedAt: at,
      endedAt: at,
      outcome: 're-enqueued',
      operationFingerprint: 'a'.repeat(64),
      detail: { runId: 'run_same' },
      expiresAt: Math.floor(at / 1000) + 86_400,
    };
    // Act: the execution store's appendLog twice, and the reconciler's store once more.
    const executionStore = new DynamoDbExecutionStore(dynamo, table);
    await executionStore.appendLog(entry);
    await executionStore.appendLog(entry);
    await new DynamoDbReconcilerStore(dynamo, table).appendLog(entry);
    // Assess: all three are there, none overwrote another.
    const out = await documentClient(dynamo).send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :log)',
        ExpressionAttributeValues: { ':pk': recordPk(ROUTE, key), ':log': 'LOG#' },
      }),
    );
    const items = out.Items ?? [];
    expect(items).toHaveLength(3);
    expect(new Set(items.map((i) => String(i.sk))).size).toBe(3);
    for (const item of items) expect(item).toMatchObject({ ...entry });
  });
});
