/**
 * Phase 4 of a run: each ledger against the window's keys. Duplicate posted entries are
 * reversed, orphan entries and missing effects reported. why: docs/architecture.md#reconciliation
 *
 * The ledger passes are not carried between runs: a run that stops inside this phase leaves
 * it to the next run, which starts it over with its whole budget. Reversals are idempotent
 * and the findings are listed only by the run that finishes the phase, so nothing is reported
 * twice; a window's ledger must so be read within one run (`npm run bench:reconcile`).
 */
import { createHash } from 'node:crypto';
import { CLOCK_SKEW_SECONDS, takeoverMarginMs } from '../config/route-config.ts';
import { RECORD_STATUS } from '../domain/event-record.ts';
import type { EventRecord } from '../domain/event-record.ts';
import { LEDGER_STATUS, ledgerPages } from '../ledger/ledger.ts';
import type { Ledger, LedgerEntry } from '../ledger/ledger.ts';
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { KeyHashes } from './key-hashes.ts';
import type { Flagged, ReconcileRun } from './reconcile-run.ts';
import { PART_SHARDS, scopedKey } from './window-keys.ts';
import type { WindowKeys } from './window-keys.ts';

/** The reversal id of an entry: the same for every reconciler that ever reverses it. */
export function reversalIdOf(entryId: string): string {
  return `rev_${createHash('sha256').update(`reversal\u0000${entryId}`).digest('hex').slice(0, 32)}`;
}

/** The earliest entry first: postedAt, then entryId, so every reconciler keeps the same one. */
function byPostingOrder(a: LedgerEntry, b: LedgerEntry): number {
  return a.postedAt - b.postedAt || (a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0);
}

/**
 * The entry of a COMPLETED key to keep (decision 3): the one the completing run posted, when it says
 * so, else the earliest. `posted` is in posting order and not empty.
 * why: docs/architecture.md#a-ledger-entry-is-not-the-effect
 */
export function keptEntryOf(posted: readonly LedgerEntry[], record: Pick<EventRecord, 'runs'>): LedgerEntry {
  const earliest = posted[0] as LedgerEntry;
  return posted.find((e) => e.attempt === record.runs) ?? earliest;
}

/** What the phase finds, listed only once it is done (see the header). */
interface EffectsTally {
  readonly findings: Flagged[];
  missing: number;
  orphans: number;
}

/** Checks every ledger against the window; undefined once done, or its own position when the budget ran out. */
export async function effectsPhase(run: ReconcileRun): Promise<ReconcilePosition | undefined> {
  const { keys, options } = run;
  if (!keys.checksEffects) return undefined;
  const here: ReconcilePosition = { phase: 'effects' };
  // Saved before anything is added to it: what a stop in this phase hands on is this run's own part.
  if (keys.ownPart && options.keys !== undefined && !keys.windowRemembered) {
    await options.keys.save(keys.exportPart());
    keys.ownPart = false;
  }
  if (!(await windowKeysReady(run))) return here;
  keys.inWindow.seal();
  const tally: EffectsTally = { findings: [], missing: 0, orphans: 0 };
  for (const [ledger, ledgerRoutes] of keys.routesByLedger) {
    if (!(await new LedgerCheck(run, ledger, ledgerRoutes, tally).check())) return here;
  }
  run.counts.missing += tally.missing;
  run.counts.orphans += tally.orphans;
  for (const finding of tally.findings) run.listFinding(finding);
  return undefined;
}

/**
 * The window's keys: this run's, when it read the whole window; else this run's part and the
 * parts earlier runs saved; else (none carried, or one lost) read again. False when the budget ran out.
 */
async function windowKeysReady(run: ReconcileRun): Promise<boolean> {
  const { keys, options } = run;
  if (keys.windowRemembered) return true;
  const earlier = options.keys?.earlier;
  if (earlier !== undefined) {
    for await (const part of earlier()) {
      if (run.overBudget()) return false;
      keys.absorb(part);
    }
    return true;
  }
  keys.forget();
  for await (const page of run.deps.store.readWindow(options.fromMs, options.toMs)) {
    if (run.overBudget()) return false;
    for (const record of page.records) keys.remember(record, page.bucket, page.shard);
  }
  return true;
}

// A key not in the window, by what its record says: received before it (its receipt, >= 0), after it (still settling), or none.
const IN_WINDOW = -1;
const SETTLING = -2;
const ORPHAN = -3;

/** One ledger against the window, for the routes whose action posts to it. Each pass returns false when the budget ran out. */
class LedgerCheck {
  readonly #run: ReconcileRun;
  readonly #keys: WindowKeys;
  readonly #ledger: Ledger;
  readonly #routes: ReadonlySet<string>;
  readonly #tally: EffectsTally;
  readonly #fromMs: number;
  /** Twice the clock bound: an entry's postedAt (executor's clock) may read that much before its receivedAt (ingest's), seed 428. */
  readonly #stampSkewMs: number;
  readonly #until: number;
  readonly #outside = new Map<string, number>();
  readonly #orphans = new Map<string, { route: string; key: string; entryIds: string[] }>();
  readonly #allKeys = new KeyHashes();
  readonly #postedKeys = new KeyHashes();
  /** The earliest receipt behind the window an entry's record has: a running minimum. */
  #oldest: number;

  constructor(run: ReconcileRun, ledger: Ledger, routes: ReadonlySet<string>, tally: EffectsTally) {
    this.#run = run;
    this.#keys = run.keys;
    this.#ledger = ledger;
    this.#routes = routes;
    this.#tally = tally;
    this.#fromMs = run.options.fromMs;
    this.#stampSkewMs = takeoverMarginMs(run.deps.clockSkewSeconds ?? CLOCK_SKEW_SECONDS);
    this.#oldest = this.#fromMs;
    this.#until = run.deps.now() + 1;
  }

  async check(): Promise<boolean> {
    if (!(await this.#readEntries())) return false;
    if (this.#oldest < this.#fromMs && !(await this.#readLookback())) return false;
    for (const { route, key, entryIds } of this.#orphans.values()) {
      this.#tally.orphans++;
      this.#tally.findings.push({ route, key, finding: 'orphan-entry', detail: `entries ${entryIds.join(', ')}` });
    }
    if (!(await this.#reverseDuplicates())) return false;
    return this.#findMissing();
  }

  /** A configured route of another ledger's action is that ledger's business. */
  #ours(e: LedgerEntry): boolean {
    return !this.#run.deps.routes.has(e.route) || this.#routes.has(e.route);
  }

  #verdictOf(e: LedgerEntry, h: number): number {
    return this.#keys.inWindow.has(h) ? IN_WINDOW : (this.#outside.get(scopedKey(e.route, e.idempotencyKey)) ?? ORPHAN);
  }

  /** An entry of the record generation the window knows: posted no earlier than its receipt, by the clocks' bound. */
  #sameGeneration(e: LedgerEntry, verdict: number): boolean {
    return e.postedAt >= (verdict >= 0 ? verdict : this.#fromMs) - this.#stampSkewMs;
  }

  /** Every entry from the clock bound before the window: its keys, the posted ones apart, and the orphans. */
  async #readEntries(): Promise<boolean> {
    for await (const page of ledgerPages(this.#ledger.listWindow(this.#fromMs - this.#stampSkewMs, this.#until))) {
      if (this.#run.overBudget()) return false;
      await this.#judgeUnknown(page);
      for (const e of page) {
        if (!this.#ours(e)) continue;
        const h = this.#keys.hashOf(e.route, e.idempotencyKey);
        const verdict = this.#verdictOf(e, h);
        if (verdict === ORPHAN) {
          const k = scopedKey(e.route, e.idempotencyKey);
          const orphan = this.#orphans.get(k) ?? { route: e.route, key: e.idempotencyKey, entryIds: [] };
          orphan.entryIds.push(e.entryId);
          this.#orphans.set(k, orphan);
          continue;
        }
        // Work younger than the window's end is still settling: a later run looks at it.
        if (verdict === SETTLING) continue;
        if (verdict >= 0 && verdict < this.#oldest) this.#oldest = verdict;
        this.#allKeys.add(h);
        if (e.status === LEDGER_STATUS.posted) this.#postedKeys.add(h);
      }
    }
    return true;
  }

  /** Reads the records of a page's keys the window does not hold, and remembers what each says. */
  async #judgeUnknown(page: readonly LedgerEntry[]): Promise<void> {
    const { fromMs, toMs } = this.#run.options;
    const unknown = new Map<string, { route: string; key: string }>();
    for (const e of page) {
      if (!this.#ours(e)) continue;
      const k = scopedKey(e.route, e.idempotencyKey);
      if (!this.#keys.inWindow.has(this.#keys.hashOf(e.route, e.idempotencyKey)) && !this.#outside.has(k)) unknown.set(k, { route: e.route, key: e.idempotencyKey });
    }
    if (unknown.size === 0) return;
    const found = new Map((await this.#run.deps.store.getRecords([...unknown.values()])).map((r) => [scopedKey(r.route, r.key), r]));
    for (const k of unknown.keys()) {
      const r = found.get(k);
      this.#outside.set(k, r === undefined ? ORPHAN : r.receivedAt >= toMs ? SETTLING : r.receivedAt < fromMs ? r.receivedAt : IN_WINDOW);
    }
  }

  /** Received before the window, executed inside it (a redrive days later): posted entries back to the earliest such receipt. */
  async #readLookback(): Promise<boolean> {
    for await (const page of ledgerPages(this.#ledger.listWindow(this.#oldest - this.#stampSkewMs, this.#fromMs - this.#stampSkewMs))) {
      if (this.#run.overBudget()) return false;
      for (const e of page) {
        if (!this.#ours(e) || e.status !== LEDGER_STATUS.posted) continue;
        const verdict = this.#outside.get(scopedKey(e.route, e.idempotencyKey));
        if (verdict !== undefined && verdict >= 0 && this.#sameGeneration(e, verdict)) this.#postedKeys.add(this.#keys.hashOf(e.route, e.idempotencyKey));
      }
    }
    return true;
  }

  /** Keys with two posted entries or more: read their entries (rare), keep one, reverse the others. */
  async #reverseDuplicates(): Promise<boolean> {
    const twice = this.#postedKeys.seal().repeated();
    if (twice.size === 0) return true;
    const groups = await this.#groupsOf(twice);
    if (groups === undefined) return false;
    const duplicated = [...groups.values()].filter((g) => g.length > 1);
    const refs = duplicated.map((g) => ({ route: (g[0] as LedgerEntry).route, key: (g[0] as LedgerEntry).idempotencyKey }));
    const records = new Map((await this.#run.deps.store.getRecords(refs)).map((r) => [scopedKey(r.route, r.key), r]));
    for (const group of duplicated) {
      const first = group[0] as LedgerEntry;
      const record = records.get(scopedKey(first.route, first.idempotencyKey));
      // Gone, in flight or FAILED: the run that completes it may post the entry to keep (seed 961).
      if (record?.status === RECORD_STATUS.failed) {
        this.#tally.findings.push({ route: record.route, key: record.key, finding: 'failed-with-entries', detail: `entries ${group.map((e) => e.entryId).join(', ')}` });
      }
      if (record?.status !== RECORD_STATUS.completed) continue;
      if (!(await this.#reverseAllBut(group.sort(byPostingOrder), record))) return false;
    }
    return true;
  }

  /** The posted entries of the keys in `twice`, by key, of the generation the window knows; undefined when the budget ran out. */
  async #groupsOf(twice: KeyHashes): Promise<Map<string, LedgerEntry[]> | undefined> {
    const groups = new Map<string, LedgerEntry[]>();
    for await (const page of ledgerPages(this.#ledger.listWindow(Math.min(this.#oldest, this.#fromMs) - this.#stampSkewMs, this.#until))) {
      if (this.#run.overBudget()) return undefined;
      for (const e of page) {
        if (!this.#ours(e) || e.status !== LEDGER_STATUS.posted) continue;
        const h = this.#keys.hashOf(e.route, e.idempotencyKey);
        if (!twice.has(h)) continue;
        const verdict = this.#verdictOf(e, h);
        if (verdict === ORPHAN || verdict === SETTLING || !this.#sameGeneration(e, verdict)) continue;
        const k = scopedKey(e.route, e.idempotencyKey);
        const group = groups.get(k);
        if (group === undefined) groups.set(k, [e]);
        else group.push(e);
      }
    }
    return groups;
  }

  /** Reverses every posted entry of a COMPLETED key but the one kept. */
  async #reverseAllBut(posted: LedgerEntry[], record: EventRecord): Promise<boolean> {
    const run = this.#run;
    const keep = keptEntryOf(posted, record);
    for (const entry of posted) {
      if (entry === keep) continue;
      if (run.overBudget()) return false;
      const reversalId = reversalIdOf(entry.entryId);
      const result = await this.#ledger.reverse(entry.entryId, {
        reversalId,
        reason: `duplicate effect of ${record.route}/${record.key}; kept ${keep.entryId}`,
        at: run.deps.now(),
      });
      if (result !== 'reversed') continue;
      run.listReversal({ route: record.route, key: record.key, entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
      await run.correction(record, 'duplicate-reversed', { entryId: entry.entryId, keptEntryId: keep.entryId, reversalId });
    }
    return true;
  }

  /** Completed work with no entry: named by reading again the few partitions that hold it. */
  async #findMissing(): Promise<boolean> {
    const { fromMs, toMs } = this.#run.options;
    const missing = this.#missingKeys();
    for (const part of missing.parts) {
      const bucket = this.#keys.buckets[Math.floor(part / PART_SHARDS)] as string;
      const shard = part % PART_SHARDS;
      for await (const page of this.#run.deps.store.readWindow(fromMs, toMs, { bucket, shard })) {
        if (this.#run.overBudget()) return false;
        for (const record of page.records) {
          if (record.status !== RECORD_STATUS.completed || !this.#routes.has(record.route)) continue;
          if (!missing.hashes.has(this.#keys.hashOf(record.route, record.key))) continue;
          // Never re-executed blindly: the effect may exist somewhere the ledger does not show.
          this.#tally.missing++;
          this.#tally.findings.push({
            route: record.route,
            key: record.key,
            finding: 'missing-effect',
            detail: `completed at ${new Date(record.completedAt ?? 0).toISOString()} with no ledger entry`,
          });
        }
        if (page.next?.bucket !== bucket || page.next.shard !== shard) break;
      }
    }
    return true;
  }

  /** The completed records of the ledger's routes with no entry: their hashes, and the partitions that hold them. */
  #missingKeys(): { hashes: KeyHashes; parts: number[] } {
    const hashes = new KeyHashes();
    const parts = new Set<number>();
    this.#allKeys.seal();
    for (const route of this.#routes) {
      const found = this.#keys.completedIn(route)?.missingFrom(this.#allKeys);
      if (found === undefined) continue;
      hashes.addAll(found.hashes.values());
      for (const part of found.parts) parts.add(part);
    }
    return { hashes: hashes.seal(), parts: [...parts].sort((a, b) => a - b) };
  }
}
