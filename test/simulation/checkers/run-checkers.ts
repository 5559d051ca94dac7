/**
 * The invariants checked once a run has settled, one a file: each key's in the order a reader
 * meets them, then the table's indexes and the DLQ's copies. (Invariants checked while the run
 * goes on live where they are observed: the observed stores, the action, the breaker.)
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { EventRecord } from '../../../lambdas/domain/event-record.ts';
import { RECORD_SK } from '../../../lambdas/store/record-keys.ts';
import { DynamoDbEntityOrder } from '../../../lambdas/store/dynamodb-entity-order.ts';
import { DynamoDbParkedRecords } from '../../../lambdas/store/dynamodb-parked-records.ts';
import { DynamoDbRouteStateStore } from '../../../lambdas/store/dynamodb-route-state-store.ts';
import { neverHanded } from '../dlq-watch.ts';
import type { World } from '../world.ts';
import { checkAcceptedWorkNotLost } from './accepted-work-not-lost.ts';
import { checkAttemptsWithinMax } from './attempts-within-max.ts';
import { checkBudgetSpentByLeases } from './budget-spent-by-leases.ts';
import { checkDeadLetterCopiesRedrivable } from './dead-letter-copies-redrivable.ts';
import { checkDlq } from './dlq-holds-only-dead-workers-work.ts';
import { checkFailedIndexExact } from './failed-index-exact.ts';
import { checkIngestSendsPerWindow } from './ingest-sends-per-window.ts';
import { keyFactsOf } from './key-facts.ts';
import { checkNoDoubleEffect } from './no-double-effect.ts';
import { checkOneBodyOneRecord } from './one-body-one-record.ts';
import { checkOneChargeStands } from './one-charge-stands.ts';
import { checkOneEntryPosted } from './one-entry-posted.ts';
import { checkParkedIndexExact } from './parked-index-exact.ts';
import { checkRecordEndsSettled } from './records-end-settled.ts';
import type { EndState } from './records-end-settled.ts';
import { checkOverlaps } from './runs-never-overlap.ts';
import { checkWorkSendsBounded } from './work-sends-bounded.ts';

/** Checks every key's invariants, then the table's and the DLQ's. */
export async function checkInvariants(w: World): Promise<void> {
  const { violations } = w;
  const routeState = new DynamoDbRouteStateStore(w.dynamo, w.eventsTable);
  const paused = new Set<string>();
  for (const route of w.routes.keys()) if ((await routeState.get(route)).state === 'paused') paused.add(route);
  const dlqBodies = w.dlqs.flatMap((q) => q.snapshot()).map((m) => ({ messageId: m.messageId, neverHanded: neverHanded(w, m), body: JSON.parse(m.body) as Record<string, unknown> }));
  const end: EndState = { paused, dlqBodies, order: new DynamoDbEntityOrder(w.dynamo, w.eventsTable) };
  for (const k of w.keys.values()) {
    const record: EventRecord | undefined = await w.observerStore.get(k.route, k.key);
    const facts = keyFactsOf(w, k, record);
    checkBudgetSpentByLeases(facts, violations);
    checkNoDoubleEffect(facts, w.stats, violations);
    checkOneChargeStands(facts, violations);
    checkOneEntryPosted(facts, violations);
    checkOverlaps(k, violations);
    if (record === undefined) {
      checkAcceptedWorkNotLost(facts, violations);
      continue;
    }
    checkAttemptsWithinMax(k, record, violations);
    await checkRecordEndsSettled(w, facts, record, end);
    checkIngestSendsPerWindow(k, violations);
    checkWorkSendsBounded(k, w.stats, violations);
  }
  checkDlq(w);
  const records = await recordItems(w);
  checkFailedIndexExact(records, violations);
  checkOneBodyOneRecord(records, violations);
  await checkDeadLetterCopiesRedrivable(w, dlqBodies);
  await checkParkedIndexExact(w, new DynamoDbParkedRecords(w.dynamo, w.eventsTable));
}

/** Every record item of Region 0's table, as it stands. */
async function recordItems(w: World): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await w.dynamo.send(
      new ScanCommand({ TableName: w.eventsTable, FilterExpression: 'sk = :record', ExpressionAttributeValues: { ':record': { S: RECORD_SK } }, ExclusiveStartKey: startKey }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}
