/**
 * Phase 3 of a run: every record received in [fromMs, toMs), page by page. Failed ones are
 * reported, stuck ones re-sent (one resend per window: claimResend decides), and, when a ledger
 * is checked, every key is kept as a hash for phase 4. why: docs/architecture.md#reconciliation
 */
import { RECORD_STATUS, hourBucket } from '../domain/event-record.ts';
import type { RecordSummary } from '../domain/event-record.ts';
import type { ReconcilePosition, WindowStart } from '../ports/reconciler-store.ts';
import { refOf } from './reconcile-run.ts';
import type { ReconcileRun } from './reconcile-run.ts';
import { messageFor, resendRequestOf, trySend } from './resend.ts';

/** Reads the window from the run's start; undefined once done, or the position it stopped at. */
export async function windowPhase(run: ReconcileRun): Promise<ReconcilePosition | undefined> {
  const { deps, options, keys, start } = run;
  const from = start.phase === 'window' ? start : undefined;
  // Where this run stands: the page's start, or just after the last record handled in it (a position is made only when asked for).
  let at: WindowStart = from ?? { bucket: keys.buckets[0] ?? hourBucket(options.fromMs), shard: 0 };
  let last: RecordSummary | undefined;
  const here = (): ReconcilePosition =>
    last === undefined ? { phase: 'window', ...at } : { phase: 'window', bucket: at.bucket, shard: at.shard, after: refOf(last) };
  // Remembered from the window's start, or, carried between runs, from wherever this run starts.
  const remembering = keys.checksEffects && (from === undefined || options.keys !== undefined);
  if (keys.buckets.length === 0) return undefined;
  if (run.overBudget()) return here();
  let pages = 0;
  for await (const page of deps.store.readWindow(options.fromMs, options.toMs, at)) {
    pages++;
    if (page.bucket !== at.bucket || page.shard !== at.shard) at = { bucket: page.bucket, shard: page.shard };
    for (const record of page.records) {
      if (run.overBudget()) return here();
      if (remembering) {
        keys.remember(record, page.bucket, page.shard);
        keys.ownPart = true;
      }
      await windowRecord(run, record);
      last = record;
    }
    options.onProgress?.({ pages, records: run.counts.scanned });
    if (page.next === undefined) break;
    at = page.next;
    last = undefined;
    if (!(await run.checkpoint(here()))) return here();
  }
  keys.windowRemembered = keys.checksEffects && from === undefined;
  return undefined;
}

async function windowRecord(run: ReconcileRun, record: RecordSummary): Promise<void> {
  const { deps, counts, stuckBefore } = run;
  counts.scanned++;
  if (record.status === RECORD_STATUS.parked) return; // counted by the parked sweep
  const lastSent = record.lastEnqueuedAt ?? record.receivedAt;
  if (record.status === RECORD_STATUS.failed) {
    counts.failed++;
    run.flag(record, 'failed', record.lastError);
  }
  // A FAILED record's lost dead-letter copy is the retry partition's (`fail` put it there): no write spent on each here.
  const stuck =
    lastSent < stuckBefore &&
    (record.status === RECORD_STATUS.received || (record.status === RECORD_STATUS.executing && (record.leaseUntil ?? 0) < stuckBefore));
  if (!stuck) return;
  if (counts.reenqueued >= run.options.maxReenqueue) {
    run.flag(record, 'reenqueue-limit', 'left for the next window: the per-run re-enqueue bound was reached');
    return;
  }
  if (!deps.routes.has(record.route)) return;
  // The whole record: its message needs the body, and the resend the answer it gives now.
  const full = await deps.store.getRecord(record.route, record.key);
  if (full?.receivedAt !== record.receivedAt) return;
  const message = messageFor(run, full);
  if (message === undefined) {
    // Watched beyond the window (the retry partition): a later copy may keep the payload.
    await deps.store.markStranded(full);
    return;
  }
  // One resend per window, whoever else tries: the write decides, then we send.
  if (!(await deps.store.claimResend(record.route, record.key, resendRequestOf(run, full)))) return;
  if (await trySend(run, record, message)) {
    counts.reenqueued++;
    await run.correction(record, 're-enqueued', { was: record.status });
  } else {
    // Found again by every later run, also once it is older than the window.
    await deps.store.markStranded(full);
  }
}
