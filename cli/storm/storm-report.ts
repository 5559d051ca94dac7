/**
 * The storm's verdict: counts, the checks that prove "no double effect, nothing lost",
 * and the summary table. Pure: it judges what the sender saw and what the stack holds.
 */
import type { EventRecord } from '../../lambdas/domain/event-record.ts';
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import { quantile } from './storm-plan.ts';
import { EXPECTED_STATUS } from './storm-sender.ts';
import type { EventOutcome, RequestKind, RequestRecord } from './storm-sender.ts';
import type { Effects, SettleResult } from './storm-verify.ts';

export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export interface ReconciliationSummary {
  readonly ran: boolean;
  readonly rounds: number;
  readonly reversed: number;
  readonly reenqueued: number;
  readonly needsAttention: number;
  /** Why it did not run, when it did not. */
  readonly reason?: string;
}

export interface BreakerSummary {
  /** False when the route state could not be read (no table access). */
  readonly checked: boolean;
  /** The route was paused when the storm began (resumed before sending). */
  readonly pausedBefore: boolean;
  /** The storm's own duplicates tripped the breaker; the storm resumed the route after sending. */
  readonly trippedDuringStorm: boolean;
  readonly reason?: string;
  /** Parked records the resumes re-enqueued. */
  readonly reenqueuedOnResume: number;
}

/** What one Region of several answered. */
export interface RegionCounts {
  readonly name: string;
  readonly url: string;
  /** Requests sent to it, refused probes included. */
  readonly sent: number;
  /**
   * Genuine copies it answered 2xx without Idempotent-Replayed: the keys whose claim it won (and
   * a copy after our own 5xx, which gets the first acceptance wherever it lands).
   */
  readonly accepted: number;
  /** Copies it answered with Idempotent-Replayed: keys another copy (in any Region) had claimed. */
  readonly replayed: number;
}

export interface StormReport {
  readonly startedAt: string;
  readonly durationMs: number;
  readonly target: { readonly url: string; readonly route: string; readonly verified: boolean };
  readonly settings: Readonly<Record<string, unknown>>;
  readonly events: number;
  readonly sent: number;
  readonly accepted: number;
  readonly replayed: number;
  readonly acknowledged: number;
  readonly gaveUp: number;
  readonly rejected: Readonly<Record<Exclude<RequestKind, 'genuine'>, { count: number; asExpected: number; expectedStatus: number }>>;
  readonly genuineRefused: number;
  readonly serverErrors: number;
  readonly networkErrors: number;
  readonly behaviours: Readonly<Record<string, number>>;
  /**
   * Keys of this storm with more than one effect (ledger entry). A worker that dies after
   * the effect makes a second one when its work runs again; reconciliation reverses it.
   * Counted on the ledger as it ends (posted and reversed entries), so a second effect made
   * at any time during the run is seen. Null when the ledger was not read.
   */
  readonly doubleEffects: {
    /** Keys that got more than one effect at some point (posted + reversed entries > 1). */
    readonly keysWithSecondEffect: number | null;
    /** Entries of this storm's keys that reconciliation reversed. */
    readonly reversedEntries: number | null;
    /** Keys still holding more than one posted entry: must be 0. */
    readonly keysLeft: number | null;
    /** The keys left, up to all of them. */
    readonly keys: readonly string[];
  };
  /**
   * The end state, per accepted key planned to complete: how many hold exactly one posted effect
   * once reconciliation is done. Null when the ledger was not read.
   */
  readonly endState: { readonly keys: number; readonly oneEffect: number | null; readonly lost: number | null; readonly doubled: number | null };
  /** Per Region, when the storm spanned several. */
  readonly regions?: readonly RegionCounts[];
  readonly lost: number | null;
  readonly lostKeys: readonly { key: string; status: string; posted: number }[];
  readonly deadLettered: { readonly planned: number; readonly accountedFor: number; readonly unplanned: number };
  readonly ackLatencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly settle: SettleResult | null;
  /** Where the run's time went. */
  readonly phasesMs: Readonly<Record<string, number>>;
  readonly reconciliation: ReconciliationSummary;
  readonly executorRestart: string;
  readonly breaker: BreakerSummary;
  readonly checks: readonly Check[];
  readonly pass: boolean;
}

export interface Verification {
  readonly records: ReadonlyMap<string, EventRecord | undefined>;
  /** Ledger entries per key as the run ends, after reconciliation. */
  readonly effectsAfter: ReadonlyMap<string, Effects>;
  /** Reasons of DLQ messages, by key of the storm's route. */
  readonly deadLetters: ReadonlyMap<string, string>;
  /** The last wait's state, with `waitedMs` summed over every wait (the same figure as the `settling` phase). */
  readonly settle: SettleResult;
  /** How many times the storm waited for the work to settle (once, plus once per reconciliation that re-enqueued). */
  readonly settleWaits?: number;
}

export interface ReportInput {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly url: string;
  readonly route: string;
  /** The Regions the requests went to, when several (RequestRecord.region names one). */
  readonly regions?: readonly { readonly name: string; readonly url: string }[];
  readonly settings: Readonly<Record<string, unknown>>;
  readonly requests: readonly RequestRecord[];
  readonly events: readonly EventOutcome[];
  /** Undefined when the stack's tables cannot be read (a remote --url). */
  readonly verification: Verification | undefined;
  readonly reconciliation: ReconciliationSummary;
  readonly executorRestart: string;
  readonly breaker: BreakerSummary;
  readonly phasesMs: Readonly<Record<string, number>>;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

function waitsNote(waits: number | undefined): string {
  return waits === undefined || waits <= 1 ? '' : ` (${waits} waits)`;
}

const PROBE_KINDS = Object.keys(EXPECTED_STATUS) as Exclude<RequestKind, 'genuine'>[];

/** Requests of each probe kind, and how many got the answer they must get. */
function rejectedCounts(requests: readonly RequestRecord[]): StormReport['rejected'] {
  return Object.fromEntries(
    PROBE_KINDS.map((kind) => {
      const sent = requests.filter((r) => r.kind === kind);
      return [kind, { count: sent.length, asExpected: sent.filter((r) => r.status === EXPECTED_STATUS[kind]).length, expectedStatus: EXPECTED_STATUS[kind] }];
    }),
  ) as StormReport['rejected'];
}

/** How each accepted key ended against the stack's tables; every figure null when they were not read. */
interface EndStates {
  readonly secondEffectKeys: number | null;
  readonly reversedEntries: number | null;
  readonly doubleAfter: number | null;
  readonly doubleKeys: string[];
  readonly lost: number | null;
  readonly lostKeys: StormReport['lostKeys'][number][];
  readonly accountedDlq: number;
  readonly unplannedDlq: number;
  readonly unplannedEnds: string[];
}

const unread = (): EndStates => ({
  secondEffectKeys: null,
  reversedEntries: null,
  doubleAfter: null,
  doubleKeys: [],
  lost: null,
  lostKeys: [],
  accountedDlq: 0,
  unplannedDlq: 0,
  unplannedEnds: [],
});

function judgeEndStates(accepted: readonly EventOutcome[], v: Verification | undefined): EndStates {
  if (v === undefined) return unread();
  const keys = accepted.map((e) => e.key);
  const effectsOf = (k: string) => v.effectsAfter.get(k) ?? { posted: 0, reversed: 0 };
  const doubleKeys = keys.filter((k) => (v.effectsAfter.get(k)?.posted ?? 0) > 1);
  const ends = { lost: 0, lostKeys: [] as StormReport['lostKeys'][number][], accountedDlq: 0, unplannedDlq: 0, unplannedEnds: [] as string[] };
  for (const e of accepted) {
    const record: EventRecord | undefined = v.records.get(e.key);
    const status = record?.status ?? 'absent';
    const posted = v.effectsAfter.get(e.key)?.posted ?? 0;
    const completed = record?.status === RECORD_STATUS.completed && posted >= 1;
    const deadLettered =
      record?.status === RECORD_STATUS.failed && record.lastError !== undefined && v.deadLetters.has(e.key) && posted === 0;
    const parked = record?.status === RECORD_STATUS.parked;
    if (deadLettered) {
      if (e.plan.expect === 'dead-lettered') ends.accountedDlq++;
      else ends.unplannedDlq++;
    }
    // Parked work is not lost (a resume runs it), but it is not what the storm planned either.
    if (parked || (completed && e.plan.expect !== 'completed') || (deadLettered && e.plan.expect !== 'dead-lettered')) {
      ends.unplannedEnds.push(`${e.key}: planned ${e.plan.expect}, ended ${status}`);
    }
    if (!completed && !deadLettered && !parked) {
      ends.lost++;
      ends.lostKeys.push({ key: e.key, status, posted });
    }
  }
  return {
    secondEffectKeys: keys.filter((k) => effectsOf(k).posted + effectsOf(k).reversed > 1).length,
    reversedEntries: keys.reduce((sum, k) => sum + effectsOf(k).reversed, 0),
    doubleAfter: doubleKeys.length,
    doubleKeys,
    ...ends,
  };
}

function regionCounts(regions: ReportInput['regions'], requests: readonly RequestRecord[]): RegionCounts[] | undefined {
  return regions?.map((region): RegionCounts => {
    const here = requests.filter((r) => r.region === region.name);
    return {
      name: region.name,
      url: region.url,
      sent: here.length,
      accepted: here.filter((r) => r.kind === 'genuine' && r.status >= 200 && r.status < 300 && !r.replayed).length,
      replayed: here.filter((r) => r.replayed).length,
    };
  });
}

/** What the checks judge: the sender's counts and the end states. */
interface Tally {
  readonly events: readonly EventOutcome[];
  readonly keys: readonly string[];
  readonly rejected: StormReport['rejected'];
  readonly genuineRefused: number;
  readonly serverErrors: number;
  readonly networkErrors: number;
  readonly plannedDlq: number;
  readonly ends: EndStates;
}

const SKIPPED = 'not checked: the stack\'s tables are not reachable (run against the local stack)';

/** The sender's side of the verdict: every event accepted, every probe refused as it must be. */
function senderChecks(t: Tally): Check[] {
  const neverAccepted = t.events.filter((e) => !e.accepted);
  return [
    {
      name: 'every event was accepted',
      ok: neverAccepted.length === 0,
      detail: neverAccepted.length === 0 ? `${t.events.length} of ${t.events.length}` : `not accepted: ${neverAccepted.slice(0, 5).map((e) => e.key).join(', ')}`,
    },
    {
      name: 'no genuine delivery was refused',
      ok: t.genuineRefused === 0 && t.networkErrors === 0,
      detail: `${t.genuineRefused} refused with 4xx, ${t.networkErrors} without an answer, ${t.serverErrors} 5xx (retried)`,
    },
    ...PROBE_KINDS.map((kind) => ({
      name: `every ${kind} copy got ${EXPECTED_STATUS[kind]}`,
      ok: t.rejected[kind].asExpected === t.rejected[kind].count,
      detail: `${t.rejected[kind].asExpected} of ${t.rejected[kind].count}`,
    })),
  ];
}

/** The stack's side of the verdict: settled, no double effect, nothing lost, every end as planned. */
function stackChecks(t: Tally, v: Verification | undefined, reconciliation: ReconciliationSummary): Check[] {
  const { doubleAfter, secondEffectKeys, reversedEntries, lost, lostKeys, unplannedEnds, accountedDlq } = t.ends;
  return [
    {
      name: 'the work settled',
      ok: v === undefined ? true : v.settle.settled,
      detail:
        v === undefined
          ? SKIPPED
          : v.settle.settled
            ? `queue empty and no live lease, after ${seconds(v.settle.waitedMs)} of waiting${waitsNote(v.settleWaits)}`
            : `still ${v.settle.queued} queued and ${v.settle.executing} executing after ${seconds(v.settle.waitedMs)} of waiting${waitsNote(v.settleWaits)}`,
    },
    {
      name: 'no double effect after reconciliation',
      ok: doubleAfter === 0,
      detail:
        doubleAfter === null
          ? SKIPPED
          : `${doubleAfter} of ${t.keys.length} keys hold more than one posted entry` +
            (secondEffectKeys === 0
              ? '; no key got a second effect'
              : `; ${secondEffectKeys ?? 0} got a second effect and reconciliation reversed ${reversedEntries ?? 0} ${plural(reversedEntries ?? 0, 'entry', 'entries')}` +
                (reconciliation.ran ? '' : ` (reconciliation not run: ${reconciliation.reason ?? ''})`)),
    },
    {
      name: 'nothing accepted is lost',
      ok: lost === 0,
      detail: lost === null ? SKIPPED : lost === 0 ? `all ${t.keys.length} accepted keys completed or are in the DLQ with a reason` : `lost: ${lostKeys.slice(0, 5).map((l) => `${l.key} (${l.status}, ${l.posted} posted)`).join(', ')}`,
    },
    {
      name: 'every event ended as planned',
      ok: v === undefined ? true : unplannedEnds.length === 0,
      detail: v === undefined ? SKIPPED : unplannedEnds.length === 0 ? `${accountedDlq} of ${t.plannedDlq} planned dead letters, the rest completed` : unplannedEnds.slice(0, 5).join('; '),
    },
  ];
}

/** Judges one storm: what the sender saw against what the stack holds. */
export function buildReport(input: ReportInput): StormReport {
  const { requests, events, verification: v } = input;
  const genuine = requests.filter((r) => r.kind === 'genuine');
  const behaviours: Record<string, number> = {};
  for (const e of events) for (const b of e.plan.behaviours) behaviours[b] = (behaviours[b] ?? 0) + 1;
  const latencies = genuine.filter((r) => r.status !== 0).map((r) => r.ms).sort((a, b) => a - b);
  const accepted = events.filter((e) => e.accepted);
  const ends = judgeEndStates(accepted, v);
  const toComplete = accepted.filter((e) => e.plan.expect === 'completed');
  const oneEffect = v === undefined ? null : toComplete.filter((e) => (v.effectsAfter.get(e.key)?.posted ?? 0) === 1).length;
  const regions = regionCounts(input.regions, requests);
  const tally: Tally = {
    events,
    keys: accepted.map((e) => e.key),
    rejected: rejectedCounts(requests),
    genuineRefused: genuine.filter((r) => r.status >= 400 && r.status < 500).length,
    serverErrors: requests.filter((r) => r.status >= 500).length,
    networkErrors: requests.filter((r) => r.status === 0).length,
    plannedDlq: events.filter((e) => e.plan.expect === 'dead-lettered').length,
    ends,
  };
  const checks = [...senderChecks(tally), ...stackChecks(tally, v, input.reconciliation)];
  return {
    startedAt: new Date(input.startedAt).toISOString(),
    durationMs: input.endedAt - input.startedAt,
    target: { url: input.url, route: input.route, verified: v !== undefined },
    settings: input.settings,
    events: events.length,
    sent: requests.length,
    accepted: accepted.length,
    replayed: requests.filter((r) => r.replayed).length,
    acknowledged: events.filter((e) => e.acknowledged).length,
    gaveUp: events.filter((e) => !e.acknowledged).length,
    rejected: tally.rejected,
    genuineRefused: tally.genuineRefused,
    serverErrors: tally.serverErrors,
    networkErrors: tally.networkErrors,
    behaviours,
    doubleEffects: { keysWithSecondEffect: ends.secondEffectKeys, reversedEntries: ends.reversedEntries, keysLeft: ends.doubleAfter, keys: ends.doubleKeys },
    endState: { keys: toComplete.length, oneEffect, lost: ends.lost, doubled: ends.doubleAfter },
    ...(regions === undefined ? {} : { regions }),
    lost: ends.lost,
    lostKeys: ends.lostKeys,
    deadLettered: { planned: tally.plannedDlq, accountedFor: ends.accountedDlq, unplanned: ends.unplannedDlq },
    ackLatencyMs: {
      p50: Math.round(quantile(latencies, 0.5) * 10) / 10,
      p99: Math.round(quantile(latencies, 0.99) * 10) / 10,
      max: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
    },
    settle: v?.settle ?? null,
    phasesMs: input.phasesMs,
    reconciliation: input.reconciliation,
    executorRestart: input.executorRestart,
    breaker: input.breaker,
    checks,
    pass: checks.every((c) => c.ok),
  };
}

/**
 * The summary printed at the end of a run: the figures, each named for what it counts,
 * then one PASS or FAIL line per check, then the verdict. The storm's own keys are
 * counted apart from what the reconciler did over its whole window (every route, 24 h).
 */
export function formatSummary(r: StormReport): string {
  const n = (value: number | null): string => (value === null ? 'n/a (tables not read)' : String(value));
  const d = r.doubleEffects;
  const rec = r.reconciliation;
  const rows: [string, string][] = [
    ['events', `${r.events} (behaviours, several per event: ${Object.entries(r.behaviours).map(([b, c]) => `${b} ${c}`).join(', ')})`],
    ['sent', `${r.sent} requests in ${seconds(r.phasesMs.sending ?? r.durationMs)}`],
    ['accepted', `${r.accepted} keys, one record each`],
    ['replayed', `${r.replayed} answers with Idempotent-Replayed`],
    ...(r.regions ?? []).map((g): [string, string] => [
      `region ${g.name}`,
      `${g.sent} requests to ${g.url}: ${g.accepted} accepted (claims won here), ${g.replayed} replayed`,
    ]),
    ['acknowledged', `${r.acknowledged} events whose sender saw a 2xx; ${r.gaveUp} sender(s) gave up after the whole ladder`],
    ...Object.entries(r.rejected).map(([kind, v]): [string, string] => [`rejected: ${kind}`, `${v.count} copies, ${v.asExpected} got ${v.expectedStatus}`]),
    ['5xx / no answer', `${r.serverErrors} answers 5xx (retried), ${r.networkErrors} requests without an answer`],
    [
      'second effects',
      d.keysLeft === null
        ? n(null)
        : `${d.keysWithSecondEffect ?? 0} ${plural(d.keysWithSecondEffect ?? 0, 'key', 'keys')} got a second effect (a worker died after the effect); ` +
          `reconciliation reversed ${d.reversedEntries ?? 0} of their entries; ${d.keysLeft} ${plural(d.keysLeft, 'key', 'keys')} still ${plural(d.keysLeft, 'holds', 'hold')} more than one`,
    ],
    ['lost', r.lost === null ? n(null) : `${r.lost} accepted keys neither completed nor in the DLQ`],
    [
      'end state',
      r.endState.oneEffect === null
        ? n(null)
        : `${r.endState.oneEffect} of ${r.endState.keys} keys planned to complete hold exactly one effect; lost ${r.endState.lost ?? 0}, doubled ${r.endState.doubled ?? 0}`,
    ],
    ['dead-lettered', `${r.deadLettered.accountedFor} of ${r.deadLettered.planned} planned keys in the DLQ with a reason; ${r.deadLettered.unplanned} unplanned`],
    ['ack latency', `p50 ${r.ackLatencyMs.p50} ms, p99 ${r.ackLatencyMs.p99} ms, max ${r.ackLatencyMs.max} ms`],
    [
      'reconciler',
      rec.ran
        ? `${rec.rounds} ${plural(rec.rounds, 'run', 'runs')} over its whole window (every route, 24 h): reversed ${rec.reversed} ${plural(rec.reversed, 'entry', 'entries')}, ` +
          `re-enqueued ${rec.reenqueued}, needs attention ${rec.needsAttention} (FAILED or PARKED records, missing effects, orphans)`
        : `not run (${rec.reason ?? ''})`,
    ],
    ['executor restart', r.executorRestart],
    [
      'circuit breaker',
      !r.breaker.checked
        ? 'not checked'
        : r.breaker.trippedDuringStorm
          ? `tripped (${r.breaker.reason ?? 'route paused'}); resumed after sending, ${r.breaker.reenqueuedOnResume} parked records re-enqueued`
          : `not tripped${r.breaker.pausedBefore ? ' (the route was paused before the storm: resumed)' : ''}`,
    ],
    ['time', `${seconds(r.durationMs)} in all: ${Object.entries(r.phasesMs).map(([phase, ms]) => `${phase} ${seconds(ms)}`).join(', ')}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
  const passed = r.checks.filter((c) => c.ok).length;
  const checks = r.checks.map((c) => `  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  const verdict = `storm: ${r.pass ? 'PASS' : 'FAIL'} (${passed} of ${r.checks.length} checks passed)`;
  const against = r.regions === undefined ? r.target.url : `${r.regions.length} regions (${r.regions.map((g) => g.name).join(', ')}) on one table`;
  return [`retry storm against ${against} (route ${r.target.route})`, ...lines, 'checks:', ...checks, verdict].join('\n');
}
