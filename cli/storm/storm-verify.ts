/**
 * After the storm: wait for the work to settle, then read what really happened, from
 * the events table, the ledger and the DLQ. Reads only; nothing here changes state.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { fromRecordItem } from '../../lambdas/store/record-item.ts';
import type { Target } from '../target.ts';

/** Records of `keys` on `route`, by key; absent keys map to undefined. */
export async function readRecords(target: Target, route: string, keys: readonly string[]): Promise<Map<string, EventRecord | undefined>> {
  const doc = documentClient(target.dynamo);
  const found = new Map<string, EventRecord | undefined>(keys.map((k) => [k, undefined]));
  for (let i = 0; i < keys.length; i += 100) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + 100).map((key) => ({ pk: recordPk(route, key), sk: RECORD_SK }));
    for (let round = 0; pending !== undefined && pending.length > 0 && round < 10; round++) {
      const out: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({ RequestItems: { [target.eventsTable]: { Keys: pending, ConsistentRead: true } } }),
      );
      for (const item of out.Responses?.[target.eventsTable] ?? []) {
        const record = fromRecordItem(item);
        found.set(record.key, record);
      }
      pending = out.UnprocessedKeys?.[target.eventsTable]?.Keys;
    }
  }
  return found;
}

/** A Region's work queues to watch: its shared queue and its routes' own. */
export type WatchedQueue = Pick<Target, 'sqs' | 'queueUrl' | 'routeQueueUrls'>;

/** Messages waiting, in flight or delayed on every work queue of a Region: the shared one and each route's own. */
async function queueBusy(target: WatchedQueue): Promise<number> {
  let busy = 0;
  for (const queueUrl of [target.queueUrl, ...Object.values(target.routeQueueUrls ?? {})]) {
    const out = await target.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    const a = out.Attributes ?? {};
    busy +=
      Number(a.ApproximateNumberOfMessages ?? 0) +
      Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
      Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
  }
  return busy;
}

export interface SettleResult {
  readonly settled: boolean;
  readonly waitedMs: number;
  /** Still queued or running when the wait ended. */
  readonly queued: number;
  readonly executing: number;
}

/**
 * Waits until the work queue (every Region's, with `queues`) is empty and no record holds a
 * live lease, twice in a row.
 * A record left EXECUTING under an expired lease (its worker crashed and its message ran
 * out of receives) cannot progress by itself: that is the reconciler's work, not a wait.
 */
export async function waitForSettle(
  target: Target,
  route: string,
  keys: readonly string[],
  options: {
    timeoutMs: number;
    pollMs?: number;
    onTick?: (queued: number, executing: number) => void;
    /** The queues to watch. @default - the target's own */
    queues?: readonly WatchedQueue[];
  },
): Promise<SettleResult> {
  const started = Date.now();
  let calm = 0;
  for (;;) {
    const queued = (await Promise.all((options.queues ?? [target]).map((q) => queueBusy(q)))).reduce((sum, n) => sum + n, 0);
    const records = await readRecords(target, route, keys);
    const now = Date.now();
    const executing = [...records.values()].filter(
      (r) => r?.status === RECORD_STATUS.executing && (r.leaseUntil ?? 0) > now,
    ).length;
    options.onTick?.(queued, executing);
    calm = queued === 0 && executing === 0 ? calm + 1 : 0;
    const waitedMs = Date.now() - started;
    if (calm >= 2) return { settled: true, waitedMs, queued, executing };
    if (waitedMs > options.timeoutMs) return { settled: false, waitedMs, queued, executing };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 300));
  }
}

export interface Effects {
  readonly posted: number;
  readonly reversed: number;
}

/** Ledger entries per key of `route`, posted since `fromMs`. */
export async function readEffects(target: Target, route: string, fromMs: number): Promise<Map<string, Effects>> {
  const effects = new Map<string, Effects>();
  if (target.ledgerTable === undefined) return effects;
  const entries = await ledgerEntries(new DynamoDbLedger(target.dynamo, target.ledgerTable), fromMs, Date.now() + 60_000);
  for (const entry of entries) {
    if (entry.route !== route) continue;
    const old = effects.get(entry.idempotencyKey) ?? { posted: 0, reversed: 0 };
    effects.set(
      entry.idempotencyKey,
      entry.status === 'posted' ? { ...old, posted: old.posted + 1 } : { ...old, reversed: old.reversed + 1 },
    );
  }
  return effects;
}

/** Keys with more than one posted entry. */
export function doubleEffects(effects: ReadonlyMap<string, Effects>, keys: readonly string[]): string[] {
  return keys.filter((k) => (effects.get(k)?.posted ?? 0) > 1);
}
