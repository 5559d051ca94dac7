/**
 * Where a record lives in the events table: its primary key and its byTime index keys.
 * Key layout belongs to the store; the domain only knows routes, keys and instants.
 */
import { createHash } from 'node:crypto';
import { hourBucket } from '../domain/event-record.ts';
import { EVENTS_TABLE } from './table-schema.ts';

/** Partition key of a record and its execution log: the key is scoped by route. */
export function recordPk(route: string, key: string): string {
  return `EVT#${route}#${key}`;
}

export const RECORD_SK = 'RECORD';

/** The reconciler's cursor: one item per events table (lambdas/reconciler/reconcile-cursor.ts). */
export const RECONCILER_CURSOR_KEY = { pk: 'RECONCILER', sk: 'CURSOR' } as const;

/** A stable shard for a key, so one hour's records spread over the byTime partitions. */
export function timeShard(route: string, key: string, shards: number = EVENTS_TABLE.timeShards): number {
  return createHash('sha256').update(`${route}\u0000${key}`).digest().readUInt32BE(0) % shards;
}

/**
 * The byTime GSI keys of a record, over `shards` partitions an hour. Every writer and the
 * reader of one table must use the same count (EVENTS_TABLE.timeShards in a deployment).
 */
export function timeIndexKeys(route: string, key: string, receivedAt: number, shards: number = EVENTS_TABLE.timeShards): { gsi1pk: string; gsi1sk: string } {
  return {
    gsi1pk: `T#${hourBucket(receivedAt)}#${timeShard(route, key, shards)}`,
    gsi1sk: `${new Date(receivedAt).toISOString()}#${route}#${key}`,
  };
}
