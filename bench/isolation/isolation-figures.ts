/**
 * The isolation benchmark's figures, from what it recorded: latencies (accept to effect), the
 * slow route's action starts (the most in any sliding 1 s window, the shortest gap between two
 * consecutive ones) and its drain rate, and the report that sets the scenarios side by side.
 * Pure: no stack, no clock.
 */
import { percentile } from '../stats.ts';

/** p50 and p95 of accept-to-effect, ms. */
export interface Latency {
  readonly count: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxMs: number;
}

export function latencyOf(values: readonly number[]): Latency {
  return { count: values.length, p50Ms: percentile(values, 50), p95Ms: percentile(values, 95), maxMs: values.length === 0 ? Number.NaN : Math.max(...values) };
}

/**
 * The most starts in any window of `windowMs` (closed at its start, open at its end): a window
 * that opens at one start and holds every start less than `windowMs` after it. 0 for none.
 */
export function mostStartsInWindow(starts: readonly number[], windowMs = 1000): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let begin = 0; begin < sorted.length; begin++) {
    const first = sorted[begin] ?? 0;
    while (end < sorted.length && (sorted[end] ?? 0) < first + windowMs) end++;
    most = Math.max(most, end - begin);
  }
  return most;
}

/** The shortest time between two consecutive starts, ms; undefined for fewer than two. */
export function shortestGap(starts: readonly number[]): number | undefined {
  const sorted = [...starts].sort((a, b) => a - b);
  let shortest: number | undefined;
  for (let i = 1; i < sorted.length; i++) {
    const gap = (sorted[i] ?? 0) - (sorted[i - 1] ?? 0);
    shortest = shortest === undefined ? gap : Math.min(shortest, gap);
  }
  return shortest;
}

/** The slow route's runs in one phase. */
export interface SlowFigures {
  readonly deliveries: number;
  /** Runs that started, and that ended, within the phase. */
  readonly started: number;
  readonly completed: number;
  readonly mostStartsIn1s: number;
  readonly shortestGapMs: number | undefined;
  /** Completed runs a second, from the first acceptance to the last completion. */
  readonly drainPerSecond: number;
  /** From the first acceptance to the last completion (or to the phase's end, if not all completed), s. */
  readonly drainSeconds: number;
  /** Whether every delivery completed within the phase. */
  readonly drained: boolean;
}

export function slowFiguresOf(input: {
  readonly deliveries: number;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  readonly firstAcceptedAt: number;
  readonly phaseEndedAt: number;
}): SlowFigures {
  const completed = input.ends.length;
  const drained = completed >= input.deliveries;
  const last = drained ? Math.max(...input.ends) : input.phaseEndedAt;
  const drainSeconds = Math.max(0.001, (last - input.firstAcceptedAt) / 1000);
  return {
    deliveries: input.deliveries,
    started: input.starts.length,
    completed,
    mostStartsIn1s: mostStartsInWindow(input.starts),
    shortestGapMs: shortestGap(input.starts),
    drainPerSecond: completed / drainSeconds,
    drainSeconds,
    drained,
  };
}

/** One scenario's figures. */
export interface ScenarioFigures {
  readonly name: string;
  /** `fast` alone (phase A), when the scenario ran it. */
  readonly fastAlone?: Latency;
  /** `fast` beside a backlogged `slow`. */
  readonly fastBeside: Latency;
  readonly slow: SlowFigures;
  /** Messages in the DLQ at the end (visible, in flight and delayed). */
  readonly dlqDepth: number;
  /** Completed runs per key (a non-deduplicating in-process ledger): the fewest and the most over the completed keys. */
  readonly entriesPerKey: { readonly min: number; readonly max: number; readonly keys: number };
}

export interface IsolationSettings {
  readonly quick: boolean;
  readonly deliveries: number;
  readonly slowActionSeconds: number;
  readonly slowConcurrency: number;
  readonly ratePerSecond: number;
  /** Phase C: how long after fast's last effect the slow route's drain is watched. */
  readonly peerDrainWatchSeconds: number;
}

const ms = (v: number): string => (Number.isNaN(v) ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const ratio = (v: number, base: number): string => (Number.isNaN(v) || Number.isNaN(base) || base <= 0 ? '-' : `${(v / base).toFixed(2)}x`);

/** The figures as rows: one column per scenario, phase A's baseline first. */
export function figureRows(alone: Latency, scenarios: readonly ScenarioFigures[]): string[][] {
  const rows: string[][] = [];
  const each = (label: string, value: (s: ScenarioFigures) => string, base = '-'): void => {
    rows.push([label, base, ...scenarios.map(value)]);
  };
  each('fast: deliveries', (s) => String(s.fastBeside.count), String(alone.count));
  each('fast: p50 accept-to-effect', (s) => ms(s.fastBeside.p50Ms), ms(alone.p50Ms));
  each('fast: p95 accept-to-effect', (s) => ms(s.fastBeside.p95Ms), ms(alone.p95Ms));
  each('fast: p50 / alone', (s) => ratio(s.fastBeside.p50Ms, alone.p50Ms));
  each('fast: p95 / alone', (s) => ratio(s.fastBeside.p95Ms, alone.p95Ms));
  each('slow: runs started / completed', (s) => `${s.slow.started} / ${s.slow.completed} of ${s.slow.deliveries}`);
  each('slow: most starts in any 1 s', (s) => String(s.slow.mostStartsIn1s));
  each('slow: shortest gap between starts', (s) => (s.slow.shortestGapMs === undefined ? '-' : `${(s.slow.shortestGapMs / 1000).toFixed(3)} s`));
  each('slow: drain rate', (s) => `${s.slow.drainPerSecond.toFixed(2)}/s over ${s.slow.drainSeconds.toFixed(0)} s${s.slow.drained ? '' : ' (not drained)'}`);
  each('DLQ depth at the end', (s) => String(s.dlqDepth));
  each('ledger entries per key', (s) => (s.entriesPerKey.keys === 0 ? '-' : s.entriesPerKey.min === s.entriesPerKey.max ? `${s.entriesPerKey.min} (${s.entriesPerKey.keys} keys)` : `${s.entriesPerKey.min} to ${s.entriesPerKey.max} (${s.entriesPerKey.keys} keys)`));
  return rows;
}

/** Columns padded to their widest cell. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The header of the side-by-side table. */
export const SCENARIO_HEADER = ['', 'A: fast alone'];

/** What must hold, each with whether it did. */
export function verdicts(alone: Latency, own: ScenarioFigures, settings: IsolationSettings): { readonly what: string; readonly held: boolean }[] {
  const within = own.fastBeside.p95Ms / alone.p95Ms;
  return [
    { what: `fast's p95 beside slow on its own queue within 1.5x of alone (${Number.isFinite(within) ? within.toFixed(2) : '-'}x)`, held: within <= 1.5 },
    { what: `slow: at most ${settings.ratePerSecond} start(s) in any 1 s (${own.slow.mostStartsIn1s})`, held: own.slow.mostStartsIn1s <= settings.ratePerSecond },
    {
      what: `slow: starts at least ${(1 / settings.ratePerSecond).toFixed(3)} s apart (shortest ${own.slow.shortestGapMs === undefined ? '-' : (own.slow.shortestGapMs / 1000).toFixed(3)} s)`,
      held: own.slow.shortestGapMs === undefined || own.slow.shortestGapMs >= 1000 / settings.ratePerSecond,
    },
    { what: `every slow delivery ran (${own.slow.completed} of ${own.slow.deliveries})`, held: own.slow.drained },
    { what: `DLQ empty at the end (${own.dlqDepth})`, held: own.dlqDepth === 0 },
    { what: `one ledger entry per key (${own.entriesPerKey.min} to ${own.entriesPerKey.max})`, held: own.entriesPerKey.min === 1 && own.entriesPerKey.max === 1 },
  ];
}

/** The markdown report. */
export function renderIsolationReport(input: {
  readonly settings: IsolationSettings;
  readonly alone: Latency;
  readonly scenarios: readonly ScenarioFigures[];
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly machine: string;
}): string {
  const { settings, alone, scenarios } = input;
  const header = [...SCENARIO_HEADER, ...scenarios.map((s) => s.name)];
  const rows = figureRows(alone, scenarios);
  const md = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const own = scenarios[0];
  const checks = own === undefined ? [] : verdicts(alone, own, settings);
  return [
    `# Per-route isolation on the local stack${settings.quick ? ' (quick run)' : ''}`,
    '',
    `Run ${input.startedAt.toISOString()}, ${(input.durationMs / 1000).toFixed(0)} s, on ${input.machine}. \`npm run bench:isolation${settings.quick ? ' -- --quick' : ''}\` (bench/isolation.ts).`,
    '',
    `Route \`slow\`: an action of ${settings.slowActionSeconds} s, limited to ${settings.ratePerSecond} a second. Route \`fast\`: no limit, an action that returns at once. ` +
      `Phase A: ${settings.deliveries} deliveries to \`fast\` alone. Phase B: ${settings.deliveries} to \`slow\`, then ${settings.deliveries} to \`fast\`, ` +
      `with \`slow\` on its own queue at concurrency ${settings.slowConcurrency}. Phase C (the peer): the same with \`slow\` on the shared queue ` +
      `(ownQueue: false), whose local event source runs 3 batches at once; its drain is watched ${settings.peerDrainWatchSeconds} s past \`fast\`'s last effect.`,
    '',
    'Accept-to-effect: from the 202 the sender got to the start of the action, recorded by the action in this process. ' +
      'Starts: as the action recorded them. Ledger entries: runs that completed per key, counted without deduplication.',
    '',
    md(header),
    md(header.map(() => '---')),
    ...rows.map(md),
    '',
    ...checks.map((c) => `- ${c.held ? 'held' : 'NOT held'}: ${c.what}`),
    '',
  ].join('\n');
}
