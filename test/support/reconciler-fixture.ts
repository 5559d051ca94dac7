/**
 * The executor fixture on tables of its own, plus the real reconciler over them: a
 * reconciler reads whole windows, so it must not see other test files' records.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import { demoLedgers } from '../../lambdas/demo/dynamodb-ledger.ts';
import { createReconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import type { Reconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import { createEventsTable, createLedgerTable, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import { executorFixture, MAX_RECEIVE_COUNT } from './executor-fixture.ts';
import type { ExecutorFixture, ExecutorFixtureOptions } from './executor-fixture.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { testConfig } from './test-config.ts';

export interface ReconcilerFixture {
  readonly fx: ExecutorFixture;
  readonly dynamo: DynamoDBClient;
  readonly eventsTable: string;
  readonly ledgerTable: string;
  /** A reconciler over this fixture's tables and queue; `clock` defaults to the executor's. */
  reconciler(options?: { now?: () => number; stuckAfterSeconds?: number; dynamo?: DynamoDBClient }): Reconciler;
}

/**
 * `ordered`: the ingest and the executor keep the lines of routes ordered per entity, in a
 * DynamoDbEntityOrder on this fixture's events table (the reconciler always reads them there).
 */
export async function reconcilerFixture(
  options: Omit<ExecutorFixtureOptions, 'eventsTable' | 'ledgerTable' | 'order'> & { readonly ordered?: boolean } = {},
): Promise<ReconcilerFixture> {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const suffix = randomUUID().slice(0, 8);
  const eventsTable = await createEventsTable(dynamo, `events-${suffix}`);
  const ledgerTable = await createLedgerTable(dynamo, `ledger-${suffix}`);
  const { ordered, ...executor } = options;
  const fx = await executorFixture({
    ...executor,
    eventsTable,
    ledgerTable,
    ...(ordered === true ? { order: new DynamoDbEntityOrder(dynamo, eventsTable) } : {}),
  });
  return {
    fx,
    dynamo,
    eventsTable,
    ledgerTable,
    reconciler: (run = {}) =>
      createReconciler({
        dynamo: run.dynamo ?? dynamo,
        eventsTable,
        ledgers: demoLedgers(dynamo, ledgerTable),
        sqs: localSqsClient(inject('sqsEndpoint')),
        queueUrl: fx.queueUrl,
        config: resolveConfig(
          testConfig(fx.routes, {
            queue: { maxReceiveCount: MAX_RECEIVE_COUNT },
            reconciliation: { stuckAfterSeconds: run.stuckAfterSeconds ?? 900, settleSeconds: 2 }, maxClockSkewSeconds: 1,
          }),
        ),
        now: run.now ?? (() => Date.now() + fx.clockOffsetMs),
      }),
  };
}

/** A window around everything this test wrote: from an hour ago to a minute ahead of the clock. */
export function recentWindow(fx: ExecutorFixture): { fromMs: number; toMs: number } {
  const now = Date.now() + fx.clockOffsetMs;
  return { fromMs: Date.now() - 3_600_000, toMs: now + 60_000 };
}
