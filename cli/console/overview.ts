/**
 * The overview screen: per route, its state (and why), its deliveries over the last hour and
 * day, its FAILED work and its DLQ messages, the rate-limited backlog of its queue, and the
 * reconciler's cursor. Each number comes through the CLI's own reads: route control (routes
 * list), queue depths, the DLQ peek (dlq list), the byTime index and the sparse failed index.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createRouteControl } from '../../lambdas/routes/route-control.ts';
import type { RouteState } from '../../lambdas/ports/route-state-store.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { cursorOf } from '../../lambdas/store/reconciler-items.ts';
import type { CursorState, LastRunReport } from '../../lambdas/ports/reconciler-store.ts';
import { RECONCILER_CURSOR_KEY } from '../../lambdas/store/record-keys.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { hourBucket } from '../../lambdas/domain/event-record.ts';
import { peekDeadLetters } from '../operations/dead-letters.ts';
import type { DeadLetterRow } from '../operations/dead-letters.ts';
import { queueDepths } from '../operations/queue-depths.ts';
import type { QueueDepth } from '../operations/queue-depths.ts';
import type { IngestCounts } from '../../local/index.ts';
import { operatorOptionsOf } from '../target.ts';
import type { Target } from '../target.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface WindowCounts {
  readonly received: number;
  readonly completed: number;
  /** FAILED now, of those received in the window. */
  readonly failed: number;
}

export interface RouteOverview {
  readonly state: RouteState;
  readonly hour: WindowCounts;
  readonly day: WindowCounts;
  /**
   * Duplicates and breaker trips over the last hour and day, as the ingest's metrics sum them:
   * the local stack's tally (local/ingest-tally.ts). Undefined for a deployed receiver (its
   * dashboard has them) and for a local stack older than the tally.
   */
  readonly ingest?: IngestCounts;
  readonly queue?: QueueDepth;
  /** This route's DLQ messages, of those peeked. */
  readonly deadLetters: number;
  readonly oldestDeadLetterAt?: number;
}

export interface Overview {
  readonly routes: readonly RouteOverview[];
  readonly dlq?: QueueDepth;
  /** DLQ messages seen by the peek (at most DLQ_PEEK). */
  readonly peeked: number;
  readonly reconciler?: CursorState;
  /** What the last run found: a scheduled run's, from its cursor, or a local run's, noted there. */
  readonly lastRun?: LastRunReport;
  readonly at: number;
}

/** DLQ messages the overview peeks at most, for their routes and ages. */
export const DLQ_PEEK = 100;

type Counts = Map<string, { received: number; completed: number }>;

function count(counts: Counts, route: string, completed: boolean): void {
  const c = counts.get(route) ?? { received: 0, completed: 0 };
  c.received++;
  if (completed) c.completed++;
  counts.set(route, c);
}

/** One partition of the byTime index in [from, to): each copy's sort key and completedAt. */
async function* copiesOf(doc: DynamoDBDocumentClient, table: string, pk: string, from: string, to: string): AsyncIterable<Record<string, unknown>> {
  const index = EVENTS_TABLE.byTimeIndex;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({
      TableName: table, IndexName: index.name,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      ProjectionExpression: '#sk, completedAt', ExclusiveStartKey: start,
    }));
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
}

/** Received and completed deliveries per route since `dayMs` and since `hourMs`: one read of the byTime index, keys and completedAt only. */
async function byTimeCounts(doc: DynamoDBDocumentClient, table: string, dayMs: number, hourMs: number, toMs: number): Promise<{ hour: Counts; day: Counts }> {
  const sortKey = EVENTS_TABLE.byTimeIndex.sortKey;
  const hour: Counts = new Map();
  const day: Counts = new Map();
  const hourIso = new Date(hourMs).toISOString();
  const partitions: string[] = [];
  for (let h = Math.floor(dayMs / HOUR_MS) * HOUR_MS; h < toMs; h += HOUR_MS) {
    for (let shard = 0; shard < EVENTS_TABLE.timeShards; shard++) partitions.push(`T#${hourBucket(h)}#${shard}`);
  }
  await Promise.all(partitions.map(async (pk) => {
    for await (const item of copiesOf(doc, table, pk, new Date(dayMs).toISOString(), new Date(toMs).toISOString())) {
      const sk = String(item[sortKey]);
      const rest = sk.slice(25);
      const route = rest.slice(0, rest.indexOf('#'));
      const completed = typeof item.completedAt === 'number';
      count(day, route, completed);
      if (sk >= hourIso) count(hour, route, completed);
    }
  }));
  return { hour, day };
}

/** FAILED records of a route received since `dayMs`, and since `hourMs`: the sparse failed index's keys only. */
async function failedSince(doc: DynamoDBDocumentClient, table: string, route: string, dayMs: number, hourMs: number): Promise<{ day: number; hour: number }> {
  const index = EVENTS_TABLE.failedIndex;
  const hourIso = new Date(hourMs).toISOString();
  const counts = await Promise.all(Array.from({ length: EVENTS_TABLE.timeShards }, async (_, shard) => {
    const n = { day: 0, hour: 0 };
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new QueryCommand({
        TableName: table, IndexName: index.name, ProjectionExpression: '#sk',
        KeyConditionExpression: '#pk = :pk AND #sk >= :from',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: { ':pk': `FAILED#${route}#${shard}`, ':from': new Date(dayMs).toISOString() },
        ExclusiveStartKey: start,
      }));
      for (const item of page.Items ?? []) {
        n.day++;
        if (String(item[index.sortKey]) >= hourIso) n.hour++;
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return n;
  }));
  return counts.reduce((a, b) => ({ day: a.day + b.day, hour: a.hour + b.hour }), { day: 0, hour: 0 });
}

function deadLettersOf(rows: readonly DeadLetterRow[], route: string): Pick<RouteOverview, 'deadLetters' | 'oldestDeadLetterAt'> {
  const mine = rows.filter((r) => r.route === route);
  const sent = mine.map((r) => r.sentAt).filter((t): t is number => t !== null);
  return { deadLetters: mine.length, ...(sent.length === 0 ? {} : { oldestDeadLetterAt: Math.min(...sent) }) };
}

/** The local stack's tally of the ingest's duplicates and breaker trips, by route; empty for a deployed receiver or an older stack. */
async function ingestCountsOf(target: Target): Promise<Readonly<Record<string, IngestCounts>>> {
  if (target.localUrl === undefined) return {};
  const answer = await fetch(`${target.localUrl}/_local/ingest-counts`).catch(() => undefined);
  if (answer?.ok !== true) return {};
  return ((await answer.json()) as { routes?: Record<string, IngestCounts> }).routes ?? {};
}

/** How long the day's counts are reused: a full day is every index copy of it (seconds of reads on 330,000 records). */
export const COUNTS_MAX_AGE_MS = 60_000;

const countsRead = new Map<string, { readonly at: number; readonly counts: Promise<{ hour: Counts; day: Counts }> }>();

/** The byTime counts, read at most once a minute per table and never twice at once: the page refreshes every 10 s. */
function cachedCounts(doc: DynamoDBDocumentClient, table: string, now: number): Promise<{ hour: Counts; day: Counts }> {
  const held = countsRead.get(table);
  if (held !== undefined && now - held.at < COUNTS_MAX_AGE_MS && now >= held.at) return held.counts;
  const counts = byTimeCounts(doc, table, now - DAY_MS, now - HOUR_MS, now + 1);
  countsRead.set(table, { at: now, counts });
  // A failed read is not kept: the next refresh reads again.
  counts.catch(() => countsRead.delete(table));
  return counts;
}

/** Everything the overview shows, read now (the day's counts at most a minute old). */
export async function readOverview(target: Target, now: number): Promise<Overview> {
  const doc = documentClient(target.dynamo);
  const [states, depths, dead, { hour, day }, cursor, ingest] = await Promise.all([
    createRouteControl(operatorOptionsOf(target, () => now)).list(),
    queueDepths(target),
    peekDeadLetters(target, { max: DLQ_PEEK }),
    cachedCounts(doc, target.eventsTable, now),
    doc.send(new GetCommand({ TableName: target.eventsTable, Key: RECONCILER_CURSOR_KEY })),
    ingestCountsOf(target),
  ]);
  const routes = await Promise.all(states.map(async (state): Promise<RouteOverview> => {
    const failed = await failedSince(doc, target.eventsTable, state.route, now - DAY_MS, now - HOUR_MS);
    const h = hour.get(state.route) ?? { received: 0, completed: 0 };
    const d = day.get(state.route) ?? { received: 0, completed: 0 };
    const queue = depths.find((q) => q.kind !== 'dlq' && q.routes.includes(state.route));
    const counts = target.localUrl === undefined ? undefined : (ingest[state.route] ?? { hour: { duplicates: 0, breakerTrips: 0 }, day: { duplicates: 0, breakerTrips: 0 } });
    return {
      state, hour: { ...h, failed: failed.hour }, day: { ...d, failed: failed.day },
      ...(counts === undefined ? {} : { ingest: counts }), ...(queue === undefined ? {} : { queue }), ...deadLettersOf(dead, state.route),
    };
  }));
  const reconciler = cursorOf(cursor.Item);
  const lastRun = cursor.Item?.lastRun as LastRunReport | undefined;
  const dlq = depths.find((q) => q.kind === 'dlq');
  return { routes, ...(dlq === undefined ? {} : { dlq }), peeked: dead.length, ...(reconciler === undefined ? {} : { reconciler }), ...(lastRun === undefined ? {} : { lastRun }), at: now };
}
