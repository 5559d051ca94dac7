/**
 * One reconcile run: its counts, its findings and reversals, its time budget and its
 * checkpoint, owned here so that each phase (phase-*.ts) only handles records.
 */
import type { ResolvedRoute } from '../config/resolve-config.ts';
import type { RecordSummary } from '../domain/event-record.ts';
import { operationFingerprint } from '../domain/operation-fingerprint.ts';
import type { RecordRef } from '../ports/execution-store.ts';
import type { ReconcilePosition } from '../ports/reconciler-store.ts';
import { REPORT_LIST_LIMIT } from './reconcile-types.ts';
import type { Finding, ReconcileDeps, ReconcileOptions, ReconcileReport } from './reconcile-types.ts';
import { WindowKeys } from './window-keys.ts';

export type Flagged = ReconcileReport['needsAttention'][number];
export type Reversal = ReconcileReport['reversals'][number];

const PHASES = ['parked', 'stranded', 'window', 'effects', 'done'] as const;

/** A record's position in its table: what a phase's position keeps of the last record handled. */
export function refOf(record: { route: string; key: string; receivedAt: number }): RecordRef {
  return { route: record.route, key: record.key, receivedAt: record.receivedAt };
}

export class ReconcileRun {
  readonly deps: ReconcileDeps;
  readonly options: ReconcileOptions;
  readonly startedAt: number;
  readonly runId: string;
  readonly counts = { scanned: 0, reenqueued: 0, reversed: 0, missing: 0, orphans: 0, failed: 0, parked: 0, needsAttention: 0 };
  readonly needsAttention: Flagged[] = [];
  readonly reversals: Reversal[] = [];
  readonly unlisted = { needsAttention: 0, reversals: 0 };
  /** The run's start as the phases judge ages by it (read once, after startedAt). */
  readonly now: number;
  /** RECEIVED work last sent before this is stuck. */
  readonly stuckBefore: number;
  readonly routes: readonly ResolvedRoute[];
  /** Where this run begins: options.start, else the parked sweep of the first route. */
  readonly start: ReconcilePosition;
  /** What the effects check keeps of the window, from the window phase to the effects phase. */
  readonly keys: WindowKeys;

  constructor(deps: ReconcileDeps, options: ReconcileOptions) {
    this.deps = deps;
    this.options = options;
    this.startedAt = deps.now();
    this.runId = `run_${this.startedAt.toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    this.now = deps.now();
    this.stuckBefore = this.now - options.stuckAfterMs;
    this.routes = [...deps.routes.values()];
    this.start = options.start ?? { phase: 'parked', route: this.routes[0]?.name ?? '' };
    this.keys = new WindowKeys(this.routes, deps.ledgers, options);
  }

  /** Whether this run does `phase`: it begins there or before. */
  reaches(phase: (typeof PHASES)[number]): boolean {
    return PHASES.indexOf(this.start.phase) <= PHASES.indexOf(phase);
  }

  overBudget(): boolean {
    return this.deps.now() - this.startedAt >= this.options.budgetMs;
  }

  /** False when the run must stop at once: another run took the window over. */
  async checkpoint(position: ReconcilePosition): Promise<boolean> {
    return this.options.checkpoint === undefined || (await this.options.checkpoint(position));
  }

  listFinding(finding: Flagged): void {
    this.counts.needsAttention++;
    if (this.needsAttention.length < REPORT_LIST_LIMIT) this.needsAttention.push(finding);
    else this.unlisted.needsAttention++;
  }

  flag(record: { route: string; key: string }, finding: Finding, detail?: string): void {
    this.listFinding({ route: record.route, key: record.key, finding, ...(detail === undefined ? {} : { detail }) });
  }

  listReversal(reversal: Reversal): void {
    this.counts.reversed++;
    if (this.reversals.length < REPORT_LIST_LIMIT) this.reversals.push(reversal);
    else this.unlisted.reversals++;
  }

  /** Logs a repair on the record's own log, as the executor logs its attempts. */
  async correction(record: RecordSummary, outcome: string, detail: Record<string, unknown>): Promise<void> {
    const at = this.deps.now();
    const route = this.deps.routes.get(record.route);
    await this.deps.store.appendLog({
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
      detail: { runId: this.runId, ...detail },
      expiresAt: record.expiresAt,
    });
  }

  /** The report of the run, stopped at `stoppedAt` or done. */
  report(stoppedAt: ReconcilePosition | undefined): ReconcileReport {
    const { fromMs, toMs } = this.options;
    return {
      runId: this.runId,
      window: { fromMs, toMs, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() },
      startedAt: this.startedAt,
      durationMs: this.deps.now() - this.startedAt,
      counts: this.counts,
      needsAttention: this.needsAttention,
      reversals: this.reversals,
      ...(this.unlisted.needsAttention + this.unlisted.reversals > 0 ? { unlisted: this.unlisted } : {}),
      ...(this.options.start === undefined ? {} : { startedFrom: this.options.start }),
      stoppedEarly: stoppedAt !== undefined,
      ...(stoppedAt === undefined ? {} : { stoppedAt }),
    };
  }
}
