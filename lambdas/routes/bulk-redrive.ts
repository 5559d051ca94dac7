/**
 * A person's bulk redrive (`retryproof redrive`): the FAILED records a selection names (routes,
 * a window of receipt, text of the last error, a key prefix) run again, each once, with a fresh
 * budget, through the same redrive transition a dead-letter copy uses. Optionally the PARKED
 * records of active routes too, as a resume takes them back.
 *
 * Safe to interrupt and to run again. Each record is taken back by one conditional write that
 * holds only while it is FAILED under the dead-letter copy it names; the write also puts it in
 * the retry partition, and only then is its message sent. So:
 *  - a record redriven already (by this run, an earlier one, a copy from the DLQ) loses the
 *    write and is skipped: nothing runs twice, and a second run finishes what the first left;
 *  - a run that dies between the write and the send leaves the record RECEIVED in the retry
 *    partition, where the reconciler finds it whatever its age and sends it (at most one resend
 *    per window): nothing taken back is lost;
 *  - the dead-letter copies of redriven records, still in the DLQ, are harmless: a later console
 *    redrive brings each back as an ordinary wake-up call, which the record refuses (COMPLETED:
 *    a duplicate; FAILED again: a stray; running: the lease lets one run).
 * The sends are paced (`ratePerSecond`), so a large selection does not flood the executor.
 */
import { keptPayloadOf, workMessageOf } from '../domain/event-record.ts';
import type { EventRecord, Payload } from '../domain/event-record.ts';
import type { FailedRecords, FailedSelection } from '../ports/failed-records.ts';
import type { ParkedRecords } from '../ports/parked-records.ts';
import type { RouteStateStore } from '../ports/route-state-store.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import { sentQueueOf } from './route-control.ts';
import type { RouteControlOptions } from './route-control.ts';
import { DynamoDbFailedRecords } from '../store/dynamodb-failed-records.ts';
import { DynamoDbParkedRecords } from '../store/dynamodb-parked-records.ts';
import { DynamoDbRouteStateStore } from '../store/dynamodb-route-state-store.ts';

/** What to redrive: the routes (each named one), and the filters every record must pass. */
export interface RedriveSelection extends FailedSelection {
  readonly routes: readonly string[];
  /** PARKED records of the routes too (of active routes only: a paused route would park them again). @default false */
  readonly includeParked?: boolean;
}

/** A selected record, as a dry run lists it. */
export interface SelectedRecord {
  readonly route: string;
  readonly key: string;
  readonly status: string;
  readonly receivedAt: number;
  readonly runs: number;
  readonly lastError?: string;
}

export interface RedrivePreview {
  readonly count: number;
  readonly byRoute: Readonly<Record<string, number>>;
  /** The earliest received of the selection, `firstRows` at most. */
  readonly first: readonly SelectedRecord[];
}

export interface RedriveProgress {
  /** The selection's size, counted before the run. */
  readonly total: number;
  /** Records looked at so far. */
  readonly done: number;
  readonly redriven: number;
  readonly skipped: number;
  /** Waiting this long for a record that failed a moment ago (its dead-letter copy's margin). */
  readonly waitingMs?: number;
}

export interface RedriveOutcome {
  readonly total: number;
  /** Taken back and sent: each runs once more. */
  readonly redriven: number;
  /** No longer FAILED (or PARKED) when the run came to it: redriven already, or the index lagged. */
  readonly skipped: number;
  /** Kept no payload to send (a record of an older version): left as it is, for `dlq redrive`. */
  readonly unsendable: number;
  /** Stopped by the signal before the selection's end: run the same selection again to finish. */
  readonly interrupted: boolean;
}

export interface BulkRedriveDeps {
  readonly failed: FailedRecords;
  readonly parked: ParkedRecords;
  readonly states: RouteStateStore;
  readonly queue: WorkQueue;
  /** The routes the receiver serves. */
  readonly routes: readonly string[];
  readonly now: () => number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface RunOptions {
  /** Sends a second at most. */
  readonly ratePerSecond: number;
  /** Aborted: the record in hand is finished, then the run stops. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: RedriveProgress) => void;
}

/** A selection that names a route the receiver does not serve, or filters that contradict each other. */
export class RedriveSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedriveSelectionError';
  }
}

function selected(record: EventRecord): SelectedRecord {
  return {
    route: record.route,
    key: record.key,
    status: record.status,
    receivedAt: record.receivedAt,
    runs: record.runs,
    ...(record.lastError === undefined ? {} : { lastError: record.lastError }),
  };
}

/** The parked index has no filters of its own: the selection's are applied here. */
function parkedMatches(record: EventRecord, s: FailedSelection): boolean {
  if (s.sinceMs !== undefined && record.receivedAt < s.sinceMs) return false;
  if (s.untilMs !== undefined && record.receivedAt >= s.untilMs) return false;
  if (s.keyPrefix !== undefined && !record.key.startsWith(s.keyPrefix)) return false;
  if (s.errorContains !== undefined && !(record.lastError ?? '').includes(s.errorContains)) return false;
  return true;
}

/** The bulk redrive over its ports. @throws RedriveSelectionError on a selection it cannot run */
export function bulkRedrive(deps: BulkRedriveDeps) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return {
    /** Counts the selection and lists its earliest rows; changes nothing. */
    preview(s: RedriveSelection, firstRows = 10): Promise<RedrivePreview> {
      return previewSelection(deps, s, firstRows);
    },
    /** Redrives the selection, paced; see the module's comment for why a second run is safe. */
    run(s: RedriveSelection, options: RunOptions): Promise<RedriveOutcome> {
      return runSelection(deps, sleep, s, options);
    },
  };
}

function check(deps: BulkRedriveDeps, s: RedriveSelection): void {
  if (s.routes.length === 0) throw new RedriveSelectionError('no route selected');
  const unknown = s.routes.filter((r) => !deps.routes.includes(r));
  if (unknown.length > 0) {
    throw new RedriveSelectionError(`route "${unknown[0]}" is not configured; configured routes: ${deps.routes.join(', ')}`);
  }
  if (s.sinceMs !== undefined && s.untilMs !== undefined && s.untilMs <= s.sinceMs) {
    throw new RedriveSelectionError(`--until (${new Date(s.untilMs).toISOString()}) must come after --since (${new Date(s.sinceMs).toISOString()})`);
  }
}

/** Each record of the selection, page by page: FAILED through its index, then PARKED of active routes. */
async function* records(deps: BulkRedriveDeps, s: RedriveSelection): AsyncIterable<EventRecord> {
  for (const route of s.routes) {
    for await (const page of deps.failed.listFailed(route, s)) yield* page;
    if (s.includeParked === true && (await deps.states.get(route)).state === 'active') {
      for await (const page of deps.parked.listParked(route)) for (const r of page) if (parkedMatches(r, s)) yield r;
    }
  }
}

async function previewSelection(deps: BulkRedriveDeps, s: RedriveSelection, firstRows: number): Promise<RedrivePreview> {
  check(deps, s);
  let count = 0;
  const byRoute: Record<string, number> = Object.fromEntries(s.routes.map((r) => [r, 0]));
  // The earliest `firstRows`, kept sorted: a bounded buffer however large the selection.
  const first: SelectedRecord[] = [];
  for await (const record of records(deps, s)) {
    count++;
    byRoute[record.route] = (byRoute[record.route] ?? 0) + 1;
    if (first.length < firstRows || record.receivedAt < (first.at(-1)?.receivedAt ?? Infinity)) {
      first.push(selected(record));
      first.sort((a, b) => a.receivedAt - b.receivedAt || a.key.localeCompare(b.key));
      if (first.length > firstRows) first.pop();
    }
  }
  return { count, byRoute, first };
}

type Sleep = (ms: number) => Promise<void>;
type Progress = { total: number; done: number; redriven: number; skipped: number };

async function runSelection(deps: BulkRedriveDeps, sleep: Sleep, s: RedriveSelection, options: RunOptions): Promise<RedriveOutcome> {
  check(deps, s);
  if (!(options.ratePerSecond > 0)) throw new RedriveSelectionError(`the rate must be above 0 a second, got ${options.ratePerSecond}`);
  const progress: Progress = { total: (await previewSelection(deps, s, 0)).count, done: 0, redriven: 0, skipped: 0 };
  let unsendable = 0;
  const outcome = (interrupted: boolean): RedriveOutcome => ({ total: progress.total, redriven: progress.redriven, skipped: progress.skipped, unsendable, interrupted });
  const startedAt = deps.now();
  const report = (): void => options.onProgress?.({ ...progress });
  report();
  for await (const record of records(deps, s)) {
    if (options.signal?.aborted === true) return outcome(true);
    progress.done++;
    const payload = keptPayloadOf(record);
    if (payload === undefined) {
      unsendable++;
      report();
      continue;
    }
    // Paced: the next send waits until the run is at or under its rate.
    const wait = startedAt + (progress.redriven * 1000) / options.ratePerSecond - deps.now();
    if (wait > 0) await sleep(wait);
    const result = await redriveOne(deps, sleep, record, payload, options, progress);
    // Stopped while waiting for it: it is left FAILED, for the next run.
    if (result === 'stopped') return outcome(true);
    progress[result]++;
    report();
  }
  return outcome(false);
}

/** Takes one record back and sends it: 'skipped' when it was no longer FAILED (or PARKED), 'stopped' when aborted first. */
async function redriveOne(
  deps: BulkRedriveDeps,
  sleep: Sleep,
  record: EventRecord,
  payload: Payload,
  options: RunOptions,
  progress: Progress,
): Promise<'redriven' | 'skipped' | 'stopped'> {
  if (record.status === 'PARKED') {
    // As a resume does: send, then unpark; a send that fails leaves it PARKED and indexed.
    await deps.queue.send(workMessageOf(record, payload));
    return (await deps.parked.unpark(record, deps.now())) ? 'redriven' : 'skipped';
  }
  // A record that failed a moment ago waits (seconds at most) until its dead-letter copy is surely stamped, lest a redrive race it.
  const wait = deps.failed.redrivableFrom(record) - deps.now();
  if (wait > 0) {
    options.onProgress?.({ ...progress, waitingMs: wait });
    await sleep(wait);
  }
  if (options.signal?.aborted === true) return 'stopped';
  if (!(await deps.failed.redrive(record, deps.now()))) return 'skipped';
  await deps.queue.send(workMessageOf(record, payload));
  return 'redriven';
}

export type BulkRedrive = ReturnType<typeof bulkRedrive>;

/** Where a receiver's table and queue are: the same as route control's. */
export type BulkRedriveOptions = RouteControlOptions;

/** The bulk redrive over DynamoDB and SQS, for the CLI and the local stack. */
export function createBulkRedrive(options: BulkRedriveOptions): BulkRedrive {
  return bulkRedrive({
    failed: new DynamoDbFailedRecords(options.dynamo, options.eventsTable, options.config.clockSkewSeconds),
    parked: new DynamoDbParkedRecords(options.dynamo, options.eventsTable),
    states: new DynamoDbRouteStateStore(options.dynamo, options.eventsTable),
    queue: sentQueueOf(options),
    routes: options.routes ?? options.config.routes.map((r) => r.name),
    now: options.now ?? Date.now,
  });
}
