/**
 * Per-route isolation on the local stack (issue 23): does a slow, rate-limited route hold up
 * the others, and does its rate limit hold at the action's start?
 *
 *   npm run bench:isolation                # 200 deliveries a phase, a 20 s action: about 12 minutes
 *   npm run bench:isolation -- --quick     # 20 deliveries, a 2 s action: about a minute
 *   npm run bench:isolation -- --deliveries 50 --action-seconds 5 --concurrency 10
 *
 * Scenario "own queue": the local stack with `slow` (its action --action-seconds long, 1 a
 * second, --concurrency on its own queue) and `fast` (no limit). Phase A: deliveries to `fast`
 * alone. Phase B: deliveries to `slow`, then as many to `fast`; every slow delivery is waited
 * for. Scenario "shared queue" (the peer): a new stack with `slow` on the shared queue
 * (ownQueue: false), phase C as B, the slow route's drain watched for a while after `fast`'s
 * last effect, then the stack stops without waiting. Prints the figures side by side and writes
 * them to bench/.build/isolation.md (isolation.quick.md for --quick).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseFlags, UsageError } from './flags.ts';
import { latencyOf, renderIsolationReport, figureRows, SCENARIO_HEADER, slowFiguresOf, textTable, verdicts } from './isolation/isolation-figures.ts';
import type { IsolationSettings, Latency, ScenarioFigures } from './isolation/isolation-figures.ts';
import { isolationRecorder } from './isolation/isolation-recorder.ts';
import { FAST, SLOW, startIsolationStack } from './isolation/isolation-stack.ts';
import type { IsolationStack } from './isolation/isolation-stack.ts';

const ROOT = resolve(import.meta.dirname, '..');

const USAGE = `usage: npm run bench:isolation [-- --quick] [--deliveries N] [--action-seconds S] [--concurrency C] [--peer-watch-seconds W]

  --quick                 20 deliveries a phase, a 2 s action, a 10 s watch of the peer's drain (about a minute)
  --deliveries N          deliveries per route and phase, 1 to 2000 (default 200; 20 with --quick)
  --action-seconds S      the slow action's time, 0.1 to 120 (default 20; 2 with --quick)
  --concurrency C         the slow route's own event source's concurrency, 2 to 1000 (default 25)
  --peer-watch-seconds W  phase C: how long to watch slow's drain after fast's last effect, 0 to 3600 (default 60; 10 with --quick)`;

/** Senders at once: a burst, as a sender's backlog arrives, without opening hundreds of sockets. */
const SENDERS = 8;

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

/** Reads the flags; a bad one is a UsageError naming it. */
export function isolationSettingsOf(argv: readonly string[]): IsolationSettings {
  const flags = parseFlags(argv, { quick: 'switch', deliveries: 'number', 'action-seconds': 'number', concurrency: 'number', 'peer-watch-seconds': 'number' });
  const quick = flags.switches.has('quick');
  const number = (name: string, fallback: number, min: number, max: number, whole: boolean): number => {
    const value = flags.numbers.get(name) ?? fallback;
    if (value < min || value > max || (whole && !Number.isInteger(value))) {
      throw new UsageError(`--${name} must be ${whole ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${value}`);
    }
    return value;
  };
  return {
    quick,
    deliveries: number('deliveries', quick ? 20 : 200, 1, 2000, true),
    slowActionSeconds: number('action-seconds', quick ? 2 : 20, 0.1, 120, false),
    slowConcurrency: number('concurrency', 25, 2, 1000, true),
    ratePerSecond: 1,
    peerDrainWatchSeconds: number('peer-watch-seconds', quick ? 10 : 60, 0, 3600, false),
  };
}

/** Sends `n` deliveries to `route`, SENDERS at a time, with a progress line every 50. */
async function sendAll(stack: IsolationStack, route: string, n: number): Promise<Map<string, number>> {
  const accepted = new Map<string, number>();
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < n) {
      next++;
      const { key, acceptedAt } = await stack.send(route);
      accepted.set(key, acceptedAt);
      if (accepted.size % 50 === 0 && accepted.size < n) log(`  ${route}: ${accepted.size}/${n} accepted`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SENDERS, n) }, () => sender()));
  log(`  ${route}: ${n} accepted`);
  return accepted;
}

/**
 * Waits until `done` says so, checking every 100 ms; says how far it is every 10 s.
 * @returns false when `withinMs` passed first
 */
async function waitFor(what: string, done: () => { readonly finished: boolean; readonly progress: string }, withinMs: number): Promise<boolean> {
  const started = Date.now();
  let said = started;
  for (;;) {
    const state = done();
    if (state.finished) return true;
    const now = Date.now();
    if (now - started > withinMs) {
      log(`  ${what}: not within ${Math.round(withinMs / 1000)} s (${state.progress})`);
      return false;
    }
    if (now - said >= 10_000) {
      said = now;
      log(`  ${what}: ${state.progress} after ${Math.round((now - started) / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The first run's start per key, of the keys given. */
function firstStarts(keys: ReadonlyMap<string, number>): Map<string, number> {
  const starts = new Map<string, number>();
  for (const run of isolationRecorder.runs) {
    if (!keys.has(run.key)) continue;
    const seen = starts.get(run.key);
    if (seen === undefined || run.startedAt < seen) starts.set(run.key, run.startedAt);
  }
  return starts;
}

/** Waits for every key's first run, then its accept-to-effect latencies. */
async function effectsOf(route: string, accepted: ReadonlyMap<string, number>, withinMs: number): Promise<Latency> {
  await waitFor(`${route}: effects`, () => {
    const n = firstStarts(accepted).size;
    return { finished: n >= accepted.size, progress: `${n}/${accepted.size} ran` };
  }, withinMs);
  const starts = firstStarts(accepted);
  return latencyOf([...starts].map(([key, at]) => at - (accepted.get(key) ?? at)));
}

/** Completed runs per key, over the keys that completed at least once. */
function entriesPerKey(keys: readonly string[]): ScenarioFigures['entriesPerKey'] {
  const wanted = new Set(keys);
  const counts = new Map<string, number>();
  for (const run of isolationRecorder.runs) if (wanted.has(run.key) && run.endedAt !== undefined) counts.set(run.key, (counts.get(run.key) ?? 0) + 1);
  const values = [...counts.values()];
  return values.length === 0 ? { min: 0, max: 0, keys: 0 } : { min: Math.min(...values), max: Math.max(...values), keys: values.length };
}

/** Slow's runs among `keys`: starts, ends and how many keys completed. */
function slowRuns(keys: ReadonlyMap<string, number>): { starts: number[]; ends: number[]; completedKeys: number } {
  const runs = isolationRecorder.runs.filter((r) => keys.has(r.key));
  const ends = runs.flatMap((r) => (r.endedAt === undefined ? [] : [r.endedAt]));
  return { starts: runs.map((r) => r.startedAt), ends, completedKeys: new Set(runs.filter((r) => r.endedAt !== undefined).map((r) => r.key)).size };
}

/**
 * Warms the stack up before anything is measured: a fresh process's first deliveries pay for
 * loading and compiling the handlers, which would make phase A look slower than it is.
 */
async function warmUp(stack: IsolationStack, settings: IsolationSettings): Promise<void> {
  const n = Math.min(20, settings.deliveries);
  log(`  warming up: ${n} deliveries to fast, not measured`);
  await effectsOf(FAST, await sendAll(stack, FAST, n), 120_000);
}

/** Sends to slow, then to fast, and waits for fast's effects: phase B, or C. */
async function slowThenFast(stack: IsolationStack, settings: IsolationSettings, fastWithinMs: number): Promise<{ slow: Map<string, number>; fast: Map<string, number>; fastBeside: Latency }> {
  const slow = await sendAll(stack, SLOW, settings.deliveries);
  const fast = await sendAll(stack, FAST, settings.deliveries);
  const fastBeside = await effectsOf(FAST, fast, fastWithinMs);
  return { slow, fast, fastBeside };
}

async function ownQueueScenario(settings: IsolationSettings, dir: string): Promise<{ alone: Latency; figures: ScenarioFigures }> {
  log(`scenario "own queue": slow on its own queue at concurrency ${settings.slowConcurrency}; starting the local stack`);
  const stack = await startIsolationStack({ dir, slowConcurrency: settings.slowConcurrency, ratePerSecond: settings.ratePerSecond, slowActionSeconds: settings.slowActionSeconds, onProblem: (l) => { log(`  stack: ${l}`); } });
  try {
    await warmUp(stack, settings);
    log(`phase A: ${settings.deliveries} deliveries to fast alone`);
    const aloneKeys = await sendAll(stack, FAST, settings.deliveries);
    const alone = await effectsOf(FAST, aloneKeys, 120_000);
    log(`phase B: ${settings.deliveries} to slow, then ${settings.deliveries} to fast`);
    const b = await slowThenFast(stack, settings, 300_000);
    const firstAcceptedAt = Math.min(...b.slow.values());
    // Every slow delivery, admitted one an interval apart, each then running its action.
    const slowWithinMs = (settings.deliveries / settings.ratePerSecond + settings.slowActionSeconds) * 1000 * 1.5 + 120_000;
    log(`  slow: waiting for its ${settings.deliveries} runs, one every ${(1 / settings.ratePerSecond).toFixed(1)} s at most (about ${Math.round(settings.deliveries / settings.ratePerSecond + settings.slowActionSeconds)} s)`);
    await waitFor(`${SLOW}: drain`, () => {
      const { completedKeys } = slowRuns(b.slow);
      return { finished: completedKeys >= settings.deliveries, progress: `${completedKeys}/${settings.deliveries} completed` };
    }, slowWithinMs);
    const runs = slowRuns(b.slow);
    const figures: ScenarioFigures = {
      name: `B: beside slow, own queue (c=${settings.slowConcurrency})`,
      fastAlone: alone,
      fastBeside: b.fastBeside,
      slow: slowFiguresOf({ deliveries: settings.deliveries, starts: runs.starts, ends: runs.ends, firstAcceptedAt, phaseEndedAt: Date.now() }),
      dlqDepth: await stack.dlqDepth(),
      entriesPerKey: entriesPerKey([...aloneKeys.keys(), ...b.slow.keys(), ...b.fast.keys()]),
    };
    log('  stopping the stack');
    await stack.stop('drain');
    return { alone, figures };
  } catch (error) {
    await stack.stop('abandon');
    throw error;
  }
}

async function sharedQueueScenario(settings: IsolationSettings, dir: string): Promise<ScenarioFigures> {
  log('scenario "shared queue" (the peer): slow on the shared queue (ownQueue: false); starting the local stack');
  const stack = await startIsolationStack({ dir, slowConcurrency: undefined, ratePerSecond: settings.ratePerSecond, slowActionSeconds: settings.slowActionSeconds, onProblem: (l) => { log(`  stack: ${l}`); } });
  try {
    await warmUp(stack, settings);
    log(`phase C: ${settings.deliveries} to slow, then ${settings.deliveries} to fast, all on the shared queue`);
    // fast waits behind slow's batches here: allow for all of slow's runs, three at a time.
    const fastWithinMs = (settings.deliveries * settings.slowActionSeconds) * 1000 + 300_000;
    const c = await slowThenFast(stack, settings, fastWithinMs);
    const firstAcceptedAt = Math.min(...c.slow.values());
    log(`  slow: watching its drain for ${settings.peerDrainWatchSeconds} s more`);
    await waitFor(`${SLOW}: drain`, () => {
      const { completedKeys } = slowRuns(c.slow);
      return { finished: completedKeys >= settings.deliveries, progress: `${completedKeys}/${settings.deliveries} completed` };
    }, settings.peerDrainWatchSeconds * 1000);
    const runs = slowRuns(c.slow);
    const figures: ScenarioFigures = {
      name: 'C: beside slow, shared queue',
      fastBeside: c.fastBeside,
      slow: slowFiguresOf({ deliveries: settings.deliveries, starts: runs.starts, ends: runs.ends, firstAcceptedAt, phaseEndedAt: Date.now() }),
      dlqDepth: await stack.dlqDepth(),
      entriesPerKey: entriesPerKey([...c.slow.keys(), ...c.fast.keys()]),
    };
    log('  stopping the stack without waiting for slow\'s running actions (nothing is lost: their leases run out)');
    await stack.stop('abandon');
    return figures;
  } catch (error) {
    await stack.stop('abandon');
    throw error;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let settings: IsolationSettings;
  try {
    settings = isolationSettingsOf(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (Number(process.versions.node.split('.')[0]) < 24) {
    process.stderr.write(`error: node ${process.versions.node}: run it with "npm run bench:isolation" so the node@24 devDependency is used\n`);
    return 1;
  }
  // The handlers' EMF metrics would flood the output; DynamoDB Local's telemetry stays off.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.DDB_LOCAL_TELEMETRY ??= '0';
  isolationRecorder.slowActionMs = settings.slowActionSeconds * 1000;
  const startedAt = new Date();
  const root = await mkdtemp(join(tmpdir(), 'retryproof-isolation-'));
  try {
    const own = await ownQueueScenario(settings, join(root, 'own'));
    const shared = await sharedQueueScenario(settings, join(root, 'shared'));
    const scenarios = [own.figures, shared];
    const durationMs = Date.now() - startedAt.getTime();
    const header = [...SCENARIO_HEADER, ...scenarios.map((s) => s.name)];
    process.stdout.write(`\n${textTable(header, figureRows(own.alone, scenarios))}\n\n`);
    const checks = verdicts(own.alone, own.figures, settings);
    for (const c of checks) process.stdout.write(`${c.held ? 'held' : 'NOT held'}: ${c.what}\n`);
    const out = resolve(ROOT, settings.quick ? 'bench/.build/isolation.quick.md' : 'bench/.build/isolation.md');
    // bench/.build is not in a fresh clone.
    mkdirSync(dirname(out), { recursive: true });
    const machine = `${cpus().length} cores, node ${process.versions.node}`;
    writeFileSync(out, renderIsolationReport({ settings, alone: own.alone, scenarios, startedAt, durationMs, machine }));
    log(`wrote ${relative(ROOT, out)} after ${(durationMs / 1000).toFixed(0)} s`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
