/**
 * Layer 3: reconcile a window. Re-enqueue stuck work, compare accepted work with the
 * ledger, reverse duplicate effects (keep the earliest), and report everything a person
 * must look at. Safe to run twice or twice at once: every write is conditional and each
 * reversal id is derived from the entry it reverses.
 */
import { createHash } from 'node:crypto';
import type { ResolvedRoute } from '../config/resolve-config.ts';
import { RECORD_STATUS, acceptedAnswer, keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { EventRecord, RecordSummary, WorkMessage } from '../domain/event-record.ts';
import { operationFingerprint } from '../domain/operation-fingerprint.ts';
import type { Ledger, LedgerEntry } from '../ledger/ledger.ts';
import type { ResendRequest } from '../ports/event-store.ts';
import type { ReconcilerStore } from '../ports/reconciler-store.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';

export interface ReconcileDeps {
  readonly store: ReconcilerStore;
  readonly queue: WorkQueue;
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
  /**
   * The ledger of each action that declares one, by action name: the routes running that
   * action get the effects check against it. Actions may share a ledger. @default - none
   */
  readonly ledgers?: ReadonlyMap<string, Ledger>;
  readonly now: () => number;
  /** Route states: parked work on an active route is re-enqueued. @default - parked work is only reported */
  readonly routeState?: RouteStateStore;
}

export interface ReconcileOptions {
  readonly fromMs: number;
  readonly toMs: number;
  /** A run stops cleanly once this much time is spent, and says where. */
  readonly budgetMs: number;
  /** RECEIVED work not sent for this long is re-enqueued. */
  readonly stuckAfterMs: number;
  readonly maxReenqueue: number;
  /** Progress, for long runs started by hand. */
  readonly onProgress?: (done: { pages: number; records: number }) => void;
}

export type Finding =
  | 'failed'
  | 'parked'
  | 'missing-effect'
  | 'orphan-entry'
  | 'reenqueue-limit'
  | 'reenqueue-failed'
  /** Stuck, and the record keeps no payload to send again: see messageFor. */
  | 'payload-not-kept'
  | 'duplicate-reversed';

export interface ReconcileReport {
  readonly runId: string;
  readonly window: { readonly fromMs: number; readonly toMs: number; readonly from: string; readonly to: string };
  readonly startedAt: number;
  readonly durationMs: number;
  readonly counts: {
    scanned: number;
    reenqueued: number;
    reversed: number;
    missing: number;
    orphans: number;
    failed: number;
    parked: number;
    needsAttention: number;
  };
  readonly needsAttention: { route: string; key: string; finding: Finding; detail?: string }[];
  readonly reversals: { route: string; key: string; entryId: string; keptEntryId: string; reversalId: string }[];
  readonly stoppedEarly: boolean;
  /** Where a run that ran out of budget stopped: the next run starts over the window and covers it. */
  readonly stoppedAt?: { readonly bucket: string; readonly shard: number };
}

/** The reversal id of an entry: the same for every reconciler that ever reverses it. */
export function reversalIdOf(entryId: string): string {
  return `rev_${createHash('sha256').update(`reversal\u0000${entryId}`).digest('hex').slice(0, 32)}`;
}

/** A parked record whose expiry comes within this much is given a whole TTL more. */
const PARKED_KEEP_AHEAD_SECONDS = 7 * 86_400;

function scopedKey(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

/** The earliest entry first: postedAt, then entryId, so every reconciler keeps the same one. */
function byPostingOrder(a: LedgerEntry, b: LedgerEntry): number {
  return a.postedAt - b.postedAt || (a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0);
}

export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const startedAt = deps.now();
  const runId = `run_${startedAt.toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const counts = { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, parked: 0, needsAttention: 0 };
  const needsAttention: ReconcileReport['needsAttention'] = [];
  const reversals: ReconcileReport['reversals'] = [];
  const flag = (record: { route: string; key: string }, finding: Finding, detail?: string): void => {
    needsAttention.push({ route: record.route, key: record.key, finding, ...(detail === undefined ? {} : { detail }) });
  };
  const overBudget = (): boolean => deps.now() - startedAt >= options.budgetMs;
  const correction = async (record: RecordSummary, outcome: string, detail: Record<string, unknown>): Promise<void> => {
    const at = deps.now();
    const route = deps.routes.get(record.route);
    await deps.store.appendLog({
      route: record.route,
      key: record.key,
      receivedAt: record.receivedAt,
      kind: 'reconciliation',
      // A completed record read from the index alone has no attempts: its completing attempt is logged on it.
      attempt: record.attempts ?? 0,
      startedAt: at,
      endedAt: at,
      outcome,
      operationFingerprint: operationFingerprint(record.route, record.key, route?.action ?? 'unknown', record.fingerprint),
      detail: { runId, ...detail },
      expiresAt: record.expiresAt,
    });
  };

  const routeStates = new Map<string, Promise<boolean>>();
  const routeIsActive = (route: string): Promise<boolean> => {
    const store = deps.routeState;
    if (store === undefined) return Promise.resolve(false);
    let active = routeStates.get(route);
    if (active === undefined) {
      active = store.get(route).then((s) => s.state === 'active');
      routeStates.set(route, active);
    }
    return active;
  };

  const now = deps.now();
  const stuckBefore = now - options.stuckAfterMs;
  /** What a re-send of this record claims: one per window, answered as accepted from now on. */
  const resendRequestOf = (full: EventRecord): ResendRequest => ({
    receivedAt: full.receivedAt,
    nowMs: now,
    sentBeforeMs: stuckBefore,
    answer: acceptedAnswer(full.route, full.key),
    answeredFailure: full.answer.status >= 500,
  });
  /**
   * Sends a message, and says so in the report when SQS refuses it: one record SQS cannot
   * carry (an old, oversized body, say) must not end the run for every other record.
   */
  const trySend = async (record: { route: string; key: string }, message: WorkMessage): Promise<boolean> => {
    try {
      await deps.queue.send(message);
      return true;
    } catch (err) {
      flag(record, 'reenqueue-failed', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      return false;
    }
  };
  /**
   * The message a stuck record needs: its work, or the dead-letter copy a FAILED record never
   * got out. Undefined, and reported, when the record keeps no payload: then its work message
   * was sent and has not been lost (it waits in the queue, or in the DLQ after workers died on
   * it), or no delivery of it was acknowledged yet and the sender's retry brings it.
   */
  const messageFor = (full: EventRecord): WorkMessage | undefined => {
    const payload = keptPayloadOf(full);
    if (payload === undefined) {
      flag(full, 'payload-not-kept', 'its work message is in the queue or the DLQ, or no delivery of it was acknowledged yet');
      return undefined;
    }
    return full.status === RECORD_STATUS.failed
      ? {
          ...workMessageOf(full, payload),
          attempts: full.attempts,
          ...(full.lastError === undefined ? {} : { lastError: full.lastError }),
          reason: `failed after ${full.attempts} attempts; dead-letter copy re-sent by the reconciler`,
          deadLetterId: full.deadLetterId ?? '',
        }
      : workMessageOf(full, payload);
  };

  // 1. Parked work of any age, through the sparse `parked` index: re-enqueue it on an
  //    active route (sent first, then unparked, so a failed send leaves it findable), keep
  //    it from expiring on a paused one.
  let stoppedAt: ReconcileReport['stoppedAt'];
  const keepUntilSeconds = Math.floor(now / 1000) + PARKED_KEEP_AHEAD_SECONDS;
  sweep: for (const route of deps.routes.values()) {
    const active = await routeIsActive(route.name);
    for await (const page of deps.store.listParked(route.name)) {
      if (overBudget()) {
        // The window is not read either: the next run starts over, parked work first.
        stoppedAt = { bucket: `parked:${route.name}`, shard: 0 };
        break sweep;
      }
      for (const record of page) {
        if (active && counts.reenqueued < options.maxReenqueue) {
          // park keeps the payload: a parked record can always be sent from the table.
          const message = messageFor(record);
          if (message === undefined || !(await trySend(record, message))) continue;
          if (await deps.store.unpark(record, deps.now())) {
            counts.reenqueued++;
            await correction(record, 'unparked', { reason: 'parked on a route that is active again' });
          }
          continue;
        }
        if (record.expiresAt < keepUntilSeconds) await deps.store.keepParked(record, now, route.ttlSeconds, keepUntilSeconds);
        counts.parked++;
        flag(record, 'parked', active ? 'left for the next run: the per-run re-enqueue bound was reached' : undefined);
      }
    }
  }

  // 2. Records an earlier run could not re-send (SQS down, or refusing them), whatever their
  //    age: without this, one that left the 24 h window unrepaired would be lost from view.
  if (stoppedAt === undefined) {
    for (const route of deps.routes.values()) {
      for await (const page of deps.store.listStranded(route.name)) {
        for (const full of page) {
          const settled =
            full.status === RECORD_STATUS.completed ||
            full.status === RECORD_STATUS.parked ||
            (full.status === RECORD_STATUS.failed && full.deadLettered !== undefined);
          if (settled) {
            await deps.store.clearStranded(full);
            continue;
          }
          if (counts.reenqueued >= options.maxReenqueue) {
            flag(full, 'reenqueue-limit', 'left for the next run: the per-run re-enqueue bound was reached');
            continue;
          }
          // fail keeps the payload; a record kept here for want of one is re-sent once a copy kept it.
          const message = messageFor(full);
          if (message === undefined) {
            // No copy was answered 2xx, or its message waits in the DLQ: watched for as long as its
            // sender may still retry, then left to the DLQ and to the sender.
            const windowMs = (deps.routes.get(full.route)?.senderRetryWindowSeconds ?? 0) * 1000;
            if (now - full.receivedAt > windowMs + options.stuckAfterMs) await deps.store.clearStranded(full);
            continue;
          }
          if (!(await deps.store.claimResend(full.route, full.key, resendRequestOf(full)))) continue;
          if (await trySend(full, message)) {
            await deps.store.clearStranded(full);
            counts.reenqueued++;
            await correction(full, 're-enqueued', { was: full.status, from: 'retry partition' });
          }
        }
      }
    }
  }

  // 3. Read the window, and repair what is stuck as we go.
  const records = new Map<string, RecordSummary>();
  let pages = 0;
  for await (const page of stoppedAt === undefined ? deps.store.readWindow(options.fromMs, options.toMs) : []) {
    pages++;
    for (const record of page.records) {
      counts.scanned++;
      records.set(scopedKey(record.route, record.key), record);
      if (record.status === RECORD_STATUS.parked) continue; // counted by the parked sweep
      const lastSent = record.lastEnqueuedAt ?? record.receivedAt;
      if (record.status === RECORD_STATUS.failed) {
        counts.failed++;
        flag(record, 'failed', record.lastError);
      }
      // A FAILED record's lost dead-letter copy is the retry partition's business (step 2):
      // `fail` put it there, so no conditional write is spent here on every failed record.
      const stuck =
        lastSent < stuckBefore &&
        (record.status === RECORD_STATUS.received ||
          (record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) < stuckBefore));
      if (!stuck) continue;
      if (counts.reenqueued >= options.maxReenqueue) {
        flag(record, 'reenqueue-limit', 'left for the next run: the per-run re-enqueue bound was reached');
        continue;
      }
      if (!deps.routes.has(record.route)) continue;
      // The whole record: its message needs the body, and the resend the answer it gives now.
      const full = await deps.store.getRecord(record.route, record.key);
      if (full?.receivedAt !== record.receivedAt) continue;
      const message = messageFor(full);
      if (message === undefined) {
        // Watched beyond the window (the retry partition): a later copy may keep the payload.
        await deps.store.markStranded(full);
        continue;
      }
      // One resend per window, whoever else tries: the write decides, then we send.
      if (!(await deps.store.claimResend(record.route, record.key, resendRequestOf(full)))) continue;
      if (await trySend(record, message)) {
        counts.reenqueued++;
        await correction(record, 're-enqueued', { was: record.status });
      } else {
        // Found again by every later run, also once it is older than the window.
        await deps.store.markStranded(full);
      }
    }
    options.onProgress?.({ pages, records: counts.scanned });
    if (overBudget()) {
      stoppedAt = { bucket: page.bucket, shard: page.shard };
      break;
    }
  }

  // 4. Compare effects with each ledger, for the routes whose action declares it.
  const routesByLedger = new Map<Ledger, Set<string>>();
  for (const route of deps.routes.values()) {
    const ledger = deps.ledgers?.get(route.action);
    if (ledger === undefined) continue;
    routesByLedger.set(ledger, (routesByLedger.get(ledger) ?? new Set()).add(route.name));
  }
  for (const [ledger, ledgerRoutes] of stoppedAt === undefined ? routesByLedger : []) {
    // Effects land after receipt: read the ledger from the window's start up to now.
    const entries = await ledger.listWindow(options.fromMs, deps.now() + 1);
    const byKey = new Map<string, LedgerEntry[]>();
    for (const entry of entries) {
      // A configured route of another ledger's action is that ledger's business.
      if (deps.routes.has(entry.route) && !ledgerRoutes.has(entry.route)) continue;
      const k = scopedKey(entry.route, entry.idempotencyKey);
      byKey.set(k, [...(byKey.get(k) ?? []), entry]);
    }
    const groups: { group: LedgerEntry[]; record: RecordSummary }[] = [];
    for (const [k, group] of byKey) {
      const first = group[0];
      if (first === undefined) continue;
      let record: RecordSummary | undefined = records.get(k);
      if (record === undefined) {
        // Received before the window, executed inside it: look before calling it an orphan.
        record = await deps.store.getRecord(first.route, first.idempotencyKey);
        if (record === undefined) {
          counts.orphans++;
          flag({ route: first.route, key: first.idempotencyKey }, 'orphan-entry', `entries ${group.map((e) => e.entryId).join(', ')}`);
          continue;
        }
      }
      // Work younger than the window's end is still settling: leave it to a later run.
      if (record.receivedAt >= options.toMs) continue;
      groups.push({ group, record });
    }
    // An effect inside the window of work received before it (a redrive days later, say)
    // may double one that lies before the window: read back to the oldest such receipt.
    const oldest = Math.min(...groups.map((g) => g.record.receivedAt));
    if (oldest < options.fromMs) {
      const earlier = await ledger.listWindow(oldest, options.fromMs);
      const byScope = new Map(groups.map((g) => [scopedKey(g.record.route, g.record.key), g.group]));
      for (const entry of earlier) byScope.get(scopedKey(entry.route, entry.idempotencyKey))?.push(entry);
    }
    for (const { group, record } of groups) {
      const posted = group.filter((e) => e.status === 'posted').sort(byPostingOrder);
      const [keep, ...extra] = posted;
      if (keep === undefined) continue;
      for (const entry of extra) {
        const reversalId = reversalIdOf(entry.entryId);
        const result = await ledger.reverse(entry.entryId, {
          reversalId,
          reason: `duplicate effect of ${record.route}/${record.key}; kept ${keep.entryId}`,
          at: deps.now(),
        });
        if (result !== 'reversed') continue;
        counts.reversed++;
        reversals.push({ route: record.route, key: record.key, entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
        await correction(record, 'duplicate-reversed', { entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
      }
    }
    for (const [k, record] of records) {
      if (record.status !== RECORD_STATUS.completed || !ledgerRoutes.has(record.route) || byKey.has(k)) continue;
      // Never re-executed blindly: the effect may exist somewhere the ledger does not show.
      counts.missing++;
      flag(record, 'missing-effect', `completed at ${new Date(record.completedAt ?? 0).toISOString()} with no ledger entry`);
    }
  }

  counts.needsAttention = needsAttention.length;
  return {
    runId,
    window: {
      fromMs: options.fromMs,
      toMs: options.toMs,
      from: new Date(options.fromMs).toISOString(),
      to: new Date(options.toMs).toISOString(),
    },
    startedAt,
    durationMs: deps.now() - startedAt,
    counts,
    needsAttention,
    reversals,
    stoppedEarly: stoppedAt !== undefined,
    ...(stoppedAt === undefined ? {} : { stoppedAt }),
  };
}
