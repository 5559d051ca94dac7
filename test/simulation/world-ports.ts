/**
 * The ports the functions share: the downstream and its ledger, the body buckets, the work
 * queue that keeps bodies fresh, message visibility, the record stores; and the observer's reads.
 */
import { ROUTE_STATE_MAX_AGE_MS, takeoverMarginMs } from '../../lambdas/config/route-config.ts';
import { bodyObjectLifeDays, bodyObjectRenewAfterSeconds, longestTtlSeconds } from '../../lambdas/domain/body-object.ts';
import type { EntityOrder } from '../../lambdas/ports/entity-order.ts';
import type { MessageVisibility } from '../../lambdas/ports/message-visibility.ts';
import { FreshBodyWorkQueue } from '../../lambdas/queue/fresh-body-work-queue.ts';
import { DynamoDbEntityOrder } from '../../lambdas/store/dynamodb-entity-order.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import type { KeyState } from './key-state.ts';
import { PauseReach } from './pause-reach.ts';
import { byRegion, perRegion } from './regions.ts';
import { prng } from './schedule.ts';
import { SimBuckets } from './sim-body-objects.ts';
import { SimDownstream, SimLedger } from './sim-downstream.ts';
import { SimMessageVisibility } from './simulated-sqs.ts';
import type { World } from './world.ts';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue , DynamoDBClient} from '@aws-sdk/client-dynamodb';

/** The shared ports, built in the order the run draws them. */
export function buildPorts(w: World): void {
  // The downstream where effects happen, and the ledger apart from it (sim-downstream.ts).
  // Keys the protocol derived with stray whitespace (defect 4) reach the same downstream policy.
  w.downstream = new SimDownstream((idempotencyKey) => w.downstreamRetentionOf.get(idempotencyKey.replace(/\s+/g, '')) ?? 0);
  w.simLedger = new SimLedger(w.downstream, 1 + Math.floor(prng(w.seed ^ 0x1ed9)() * 4));
  w.ledger = w.sched.gate(w.simLedger, 'ledger');
  // A pause reaches the workers within ROUTE_STATE_MAX_AGE_MS (pause-reach.ts); with a table per Region no pause reaches another Region at all.
  w.pauseReach = new PauseReach({ trueNow: () => w.nowMs, maxAgeMs: w.eventual ? Number.POSITIVE_INFINITY : ROUTE_STATE_MAX_AGE_MS, violations: w.violations });
  // The S3 claim check (issue 24): each Region's bucket of large bodies, with the lifecycle the
  // construct gives it, S3's failures as the seed draws them, and a check on every read and
  // every check before a send: the object a message points to is there (sim-body-objects.ts).
  w.buckets = new SimBuckets({
    now: () => w.nowMs,
    random: prng(w.seed ^ 0xb0d1e5),
    faults: w.shape.claimCheck.faults,
    lifeDays: bodyObjectLifeDays(longestTtlSeconds(w.config.routes)),
    longestTtlMs: longestTtlSeconds(w.config.routes) * 1000,
    onMissing: (pointer, what, detail) => w.violations.push(`the body object ${pointer} was gone when ${what} (${detail}): a message still pointed to it`),
    stats: w.stats,
  });
  w.bodies = w.sched.gate(byRegion(w, w.regionQueues.map((_, r) => w.buckets.bucket(`sim-bodies-r${r}`))), 's3');
  // Every sender keeps a message's body object alive first, as sqsWorkQueueOf wires it.
  w.gatedQueue = new FreshBodyWorkQueue(w.sched.gate(w.workQueue, 'sqs'), w.bodies, {
    renewAfterMs: bodyObjectRenewAfterSeconds(longestTtlSeconds(w.config.routes)) * 1000,
    clockMarginMs: takeoverMarginMs(w.config.clockSkewSeconds),
    now: w.now,
  });
  // A receipt handle is only good on its own queue: the record's source ARN picks it (SqsMessageVisibility).
  w.visibility = w.sched.gate(
    byRegion(w, 
      w.regionQueues.map((q): MessageVisibility => {
        const shared = new SimMessageVisibility(q.queue);
        const own = q.own === undefined ? undefined : new SimMessageVisibility(q.own);
        return { changeVisibility: (handle, seconds, source) => (own !== undefined && source === q.own?.arn ? own : shared).changeVisibility(handle, seconds) };
      }),
    ),
    'visibility',
  );
  w.realExecutionStore = perRegion(w, (table) => new DynamoDbExecutionStore(w.clientOf.executor, table));
  /** The simulation's own view of the records (of the calling actor's Region): no faults, no yield points. */
  w.observerStore = perRegion(w, (table) => new DynamoDbExecutionStore(w.dynamo, table));
}

/** A route-state store on `client`, each Region's, whose pauses the world watches reach the workers. */
export function routeStateOf(w: World, client: DynamoDBClient): DynamoDbRouteStateStore {
  return w.pauseReach.observe(w.sched.gate(perRegion(w, (table) => new DynamoDbRouteStateStore(client, table)), 'routeState'));
}

/** A record's item as it stands in `table`, every attribute (the observer's read: no faults). */
export async function rawRecordIn(w: World, table: string, route: string, key: string): Promise<Record<string, AttributeValue> | undefined> {
  return (await w.dynamo.send(new GetItemCommand({ TableName: table, Key: { pk: { S: recordPk(route, key) }, sk: { S: RECORD_SK } }, ConsistentRead: true }))).Item;
}
/** The same, in the calling actor's Region. */
export function rawRecord(w: World, route: string, key: string): Promise<Record<string, AttributeValue> | undefined> {
  return rawRecordIn(w, w.regionTables[w.regionOfActor()] ?? w.eventsTable, route, key);
}

/** A rise in a record's redrive count is a redrive that committed: a fresh budget, no longer FAILED. */
export function accountRedrives(w: World, k: KeyState, redrives: number | undefined): void {
  if (redrives === undefined || redrives <= k.redrivesSeen) return;
  w.stats.redrives += redrives - k.redrivesSeen;
  k.redrivesSeen = redrives;
  k.failed = false;
  k.runsInBudget = 0;
}

// The lines of the ordered route (when the seed draws one), each function on its own client.
export function orderOf(w: World, client: DynamoDBClient): EntityOrder {
  const order = w.observedPlaces.observe(w.sched.gate(perRegion(w, (table) => new DynamoDbEntityOrder(client, table)), 'order'));
  // The actor is marked for the whole of its place, its DynamoDB retries included, so a kill there is counted.
  const place: EntityOrder['place'] = async (...a) => {
    const actor = w.sched.current();
    if (actor !== undefined) actor.meta.placing = true;
    try {
      return await order.place(...a);
    } finally {
      if (actor !== undefined) actor.meta.placing = false;
    }
  };
  return { ...order, place };
}
