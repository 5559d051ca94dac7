/**
 * `retryproof storm`: the retry-storm simulator. Sends N events with every sender behaviour
 * mixed (concurrent duplicates, a retry ladder, lost acks, forged, stale and mismatched
 * copies, slow and failing actions, crashes after the effect, an executor restart), waits
 * for the work to settle, reconciles, and checks: no double effect, nothing lost, every
 * refusal as expected. Exits 1 when a check fails. See cli/storm/; `npm run storm` in this
 * repository runs it too.
 *
 *   npm start -- --regions 2        (another terminal)
 *   npx retryproof storm --regions  each key's copies to both Regions in turn
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DEMO_ACTION } from '../../lambdas/config/resolve-config.ts';
import { intFlag, numberFlag } from '../args.ts';
import type { Command, CommandContext, ParsedArgs } from '../command.ts';
import { CliError, EXIT, UsageError } from '../errors.ts';
import { DEMO_ROUTE, localDir, localRegionsIn, readRunningEndpoints, StackNotRunningError } from '../../local/index.ts';
import type { LocalEndpoints, LocalRegionEndpoint, SampleRoute } from '../../local/index.ts';
import { runStorm } from '../storm/run-storm.ts';
import type { StormRegion } from '../storm/run-storm.ts';
import { DEFAULT_MIX, parseLadder } from '../storm/storm-plan.ts';
import type { StormMix } from '../storm/storm-plan.ts';
import { formatSummary } from '../storm/storm-report.ts';
import { resolveTarget } from '../target.ts';
import type { Target } from '../target.ts';

const USAGE = `retryproof storm [options]   (in the retryproof repository also: npm run storm -- [options])

Against the local stack (npm start) by default; --url and --secret for another receiver.
There the effect checks (double effects, lost work) need --stack NAME for table access;
without it they say "not checked" and the run does not pass: it proved nothing about them.

  --events N            events to send (default 300)
  --concurrency N       events in flight at once (default 16)
  --ladder LIST         the sender's retry waits (default 1s,5s,30s,5m)
  --time-scale X        multiply the ladder by X (default 0.01: 10ms,50ms,300ms,3s)
  --copies N            concurrent copies of a first attempt, 1 to N (default 3)
  --lost-ack X          share of answers the sender loses, 0..1 (default 0.2)
  --mismatch X          share of keys reused with another payload, expect 422 (default 0.05)
  --bad-signature X     share of events preceded by a forged copy, expect 401 (default 0.05)
  --stale X             share of events preceded by a stale copy, expect 401 (default 0.05)
  --slow X              share of slow actions, longer than the ladder's third step (default 0.05)
  --fail X              share of actions failing once or twice, then passing (default 0.1)
  --dead-letter X       share of actions that never pass: FAILED, in the DLQ (default 0.02)
  --crash X             share of workers dying after the effect (default 0.03)
  --no-restart          do not restart the local executor mid-run
  --settle-timeout S    seconds to wait for the work to settle (default: from the stack's timings, at least 30)
  --seed N              the plan's random seed (default: random, printed)
  --regions [all|LIST]  a local stack started with --regions: send each event's requests to its
                        Regions in turn (request i of event e to Region (e + i) mod n), restart every
                        Region's executor, watch every Region's queue and DLQ; LIST such as
                        local-1,local-2 picks some (at least two). Bare --regions is all
  --route NAME          route (default demo)
  --url URL --secret S  another receiver; --scheme NAME for its signature scheme (default standard-webhooks)
  --stack NAME          read a deployed stack's tables to verify (--region R); no reconciliation
  --json-out PATH       write the report here (default: RETRYPROOF_LOCAL_DIR/storm-report.json)
  --json                print the report as JSON instead of the summary
  --quiet               no progress bar
  -h, --help            this text`;

const OPTIONS = {
  events: { type: 'string' },
  concurrency: { type: 'string' },
  ladder: { type: 'string' },
  'time-scale': { type: 'string' },
  copies: { type: 'string' },
  'lost-ack': { type: 'string' },
  mismatch: { type: 'string' },
  'bad-signature': { type: 'string' },
  stale: { type: 'string' },
  slow: { type: 'string' },
  fail: { type: 'string' },
  'dead-letter': { type: 'string' },
  crash: { type: 'string' },
  'no-restart': { type: 'boolean' },
  'settle-timeout': { type: 'string' },
  seed: { type: 'string' },
  route: { type: 'string' },
  url: { type: 'string' },
  secret: { type: 'string' },
  scheme: { type: 'string' },
  regions: { type: 'string' },
  'json-out': { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

/** The storm's flags as parsed: its own and the global --stack, --region and --receiver. */
type StormValues = Partial<Record<Exclude<keyof typeof OPTIONS, 'no-restart' | 'quiet'> | 'stack' | 'region' | 'receiver', string>> &
  Partial<Record<'no-restart' | 'quiet', boolean>>;

/** A progress bar on a terminal; a line per phase (and per quarter of the sending) otherwise. */
function progressWriter(quiet: boolean): { update: (phase: string, done: number, total: number, note?: string) => void; end: () => void } {
  const tty = process.stderr.isTTY;
  let lastLine = '';
  let lastPhase = '';
  let lastQuarter = -1;
  let lastDraw = 0;
  return {
    update(phase, done, total, note) {
      if (quiet) return;
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 80 && phase === lastPhase && done !== total) return;
        lastDraw = now;
        const width = 30;
        const filled = total > 0 ? Math.round((done / total) * width) : 0;
        const bar = total > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}` : '';
        const line = `${phase.padEnd(11)} ${bar}${note === undefined ? '' : `  ${note}`}`;
        if (line !== lastLine) process.stderr.write(`\r\x1b[K${line}`);
        lastLine = line;
        lastPhase = phase;
        return;
      }
      const quarter = total > 0 ? Math.floor((done / total) * 4) : -1;
      if (phase !== lastPhase || (phase === 'sending' && quarter !== lastQuarter)) {
        process.stderr.write(`${phase}${total > 0 ? ` ${done}/${total}` : ''}${note === undefined ? '' : ` (${note})`}\n`);
        lastPhase = phase;
        lastQuarter = quarter;
      }
    },
    end() {
      if (tty && !quiet && lastLine !== '') process.stderr.write('\r\x1b[K');
    },
  };
}

function share(name: string, text: string | undefined, fallback: number): number {
  return numberFlag(name, text, 0, 1, USAGE) ?? fallback;
}

/** `--regions` with no value (last, or before another flag) means every Region. */
function withRegionsValue(argv: readonly string[]): string[] {
  return argv.map((token, i) => (token === '--regions' && (argv[i + 1] === undefined || (argv[i + 1] ?? '').startsWith('-')) ? '--regions=all' : token));
}

/**
 * The local Regions `--regions` names: every one for `all`, else those listed, in the stack's order.
 * @throws UsageError for a name the stack does not run, or fewer than two Regions
 */
function pickRegions(flag: string, endpoints: LocalEndpoints): LocalRegionEndpoint[] {
  const running = localRegionsIn(endpoints);
  const names = running.map((r) => r.name);
  if (running.length < 2) {
    throw new UsageError(
      `--regions needs a local stack of several Regions; this one runs one (${names.join(', ')}): start it with npm start -- --regions 2`,
      USAGE,
    );
  }
  if (flag.trim() === 'all') return [...running];
  const wanted = flag.split(',').map((n) => n.trim());
  for (const name of wanted) {
    if (!names.includes(name)) throw new UsageError(`--regions: the local stack has no region ${JSON.stringify(name)}; its regions: ${names.join(', ')}`, USAGE);
  }
  const picked = running.filter((r) => wanted.includes(r.name));
  if (picked.length < 2) throw new UsageError(`--regions must name at least two regions (or all), got ${JSON.stringify(flag)}; the stack's: ${names.join(', ')}`, USAGE);
  return picked;
}

/** The storm's own settings from its flags: size, ladder, mix and seed. */
function stormSettings(values: StormValues) {
  const events = intFlag('events', values.events, 1, 100_000, USAGE) ?? 300;
  const concurrency = intFlag('concurrency', values.concurrency, 1, 1000, USAGE) ?? 16;
  const ladderMs = values.ladder === undefined ? [1000, 5000, 30_000, 300_000] : parseLadder(values.ladder);
  if (ladderMs === undefined) throw new UsageError(`--ladder must list durations such as 1s,5s,30s,5m, got ${JSON.stringify(values.ladder)}`, USAGE);
  const timeScale = numberFlag('time-scale', values['time-scale'], 0.0001, 10, USAGE) ?? 0.01;
  const mix: StormMix = {
    maxConcurrentCopies: intFlag('copies', values.copies, 1, 50, USAGE) ?? DEFAULT_MIX.maxConcurrentCopies,
    lostAck: share('lost-ack', values['lost-ack'], DEFAULT_MIX.lostAck),
    mismatch: share('mismatch', values.mismatch, DEFAULT_MIX.mismatch),
    badSignature: share('bad-signature', values['bad-signature'], DEFAULT_MIX.badSignature),
    stale: share('stale', values.stale, DEFAULT_MIX.stale),
    slow: share('slow', values.slow, DEFAULT_MIX.slow),
    fail: share('fail', values.fail, DEFAULT_MIX.fail),
    deadLetter: share('dead-letter', values['dead-letter'], DEFAULT_MIX.deadLetter),
    crash: share('crash', values.crash, DEFAULT_MIX.crash),
  };
  if (mix.slow + mix.fail + mix.deadLetter + mix.crash > 1) {
    throw new UsageError('--slow, --fail, --dead-letter and --crash are shares of one roll: together at most 1', USAGE);
  }
  const seed = intFlag('seed', values.seed, 0, 2 ** 31, USAGE) ?? Math.floor(Math.random() * 2 ** 31);
  return { events, concurrency, ladderMs, timeScale, mix, seed };
}

/**
 * The local stack, when one runs (its URL, secrets, timings and admin calls), and the Regions `--regions` picks.
 * @throws CliError when none runs and no --url names another receiver
 */
async function localStackOf(ctx: CommandContext, values: StormValues): Promise<{ endpoints: LocalEndpoints | undefined; picked: LocalRegionEndpoint[] | undefined }> {
  let endpoints: LocalEndpoints | undefined;
  try {
    endpoints = await readRunningEndpoints(localDir(ctx.env));
  } catch (err) {
    if (!(err instanceof StackNotRunningError)) throw err;
    if (values.url === undefined) throw new CliError(err.message);
  }
  if (values.regions !== undefined && (values.url !== undefined || values.stack !== undefined)) {
    throw new UsageError('--regions works on the local stack (npm start -- --regions 2); not with --url or --stack', USAGE);
  }
  if (values.regions !== undefined && endpoints === undefined) throw new CliError('no local stack runs: start one with npm start -- --regions 2');
  const picked = values.regions === undefined || endpoints === undefined ? undefined : pickRegions(values.regions, endpoints);
  return { endpoints, picked };
}

/** The receiver the requests go to: its URL, the local Region it is (if any), the route and its secret. */
function stormReceiver(values: StormValues, endpoints: LocalEndpoints | undefined, picked: readonly LocalRegionEndpoint[] | undefined) {
  const routeName = values.route ?? DEMO_ROUTE;
  const url = values.url ?? picked?.[0]?.httpUrl ?? endpoints?.httpUrl ?? '';
  // The local Region whose gateway `url` is (the first one's, unless --url names another's).
  const localRegion = endpoints === undefined ? undefined : localRegionsIn(endpoints).find((r) => new URL(r.httpUrl).origin === new URL(url).origin);
  const known = localRegion !== undefined ? endpoints?.routes.find((r) => r.name === routeName) : undefined;
  if (localRegion !== undefined && known === undefined) {
    throw new UsageError(`the local stack has no route ${JSON.stringify(routeName)}; its routes: ${endpoints?.routes.map((r) => r.name).join(', ') ?? ''}`, USAGE);
  }
  if (known !== undefined && known.action !== DEMO_ACTION) {
    throw new UsageError(
      `route ${JSON.stringify(routeName)} runs the action ${JSON.stringify(known.action)}: the storm drives the demo's ${DEMO_ACTION} action ` +
        '(its crashes and failures are asked for in the body); start the stack with demo: true and pick a demo route',
      USAGE,
    );
  }
  const route: SampleRoute = known ?? { name: routeName, signature: { scheme: (values.scheme ?? 'standard-webhooks') as 'standard-webhooks' } };
  const secret = values.secret ?? known?.secret ?? '';
  const toleranceSeconds =
    'toleranceSeconds' in route.signature && typeof route.signature.toleranceSeconds === 'number' ? route.signature.toleranceSeconds : 300;
  return { url, localRegion, leaseSeconds: known?.leaseSeconds, route, secret, toleranceSeconds };
}

/** Where the effects are read: a deployed stack's tables (--stack), or the local stack's, one view per Region picked. */
async function stormTargets(
  ctx: CommandContext,
  values: StormValues,
  picked: readonly LocalRegionEndpoint[] | undefined,
  localRegion: LocalRegionEndpoint | undefined,
): Promise<{ target: Target | undefined; regions: StormRegion[] | undefined }> {
  if (values.stack !== undefined) return { target: await resolveTarget(ctx.flags, ctx.env, ctx.aws), regions: undefined };
  if (picked !== undefined) {
    // One view of the stack per Region: the same table, that Region's queues.
    const regions: StormRegion[] = [];
    for (const region of picked) regions.push({ name: region.name, url: region.httpUrl, target: await resolveTarget({ local: true, region: region.name }, ctx.env, ctx.aws) });
    return { target: regions[0]?.target, regions };
  }
  if (localRegion !== undefined) return { target: await resolveTarget({ local: true, region: localRegion.name }, ctx.env, ctx.aws), regions: undefined };
  return { target: undefined, regions: undefined };
}

/** How long to wait for the work to settle: --settle-timeout, else long enough for the local stack's timings; notes slow timings. */
function settleTimeoutSeconds(values: StormValues, endpoints: LocalEndpoints | undefined, isLocal: boolean, leaseSeconds: number | undefined): number {
  const s = endpoints?.settings;
  // Long enough for a dead letter's receives and a crashed lease to run out, twice over.
  const derivedSettle = isLocal && s !== undefined ? (s.maxReceiveCount * s.visibilityTimeoutSeconds + (leaseSeconds ?? 0)) * 2 + 10 : 60;
  const settleTimeoutS = intFlag('settle-timeout', values['settle-timeout'], 1, 3600, USAGE) ?? Math.max(30, derivedSettle);
  if (isLocal && s !== undefined && ((leaseSeconds ?? 0) > 10 || s.visibilityTimeoutSeconds > 10)) {
    process.stderr.write(
      `note: this stack's lease is ${leaseSeconds ?? '?'} s and its visibility timeout ${s.visibilityTimeoutSeconds} s; crash recovery waits for them ` +
        `(up to ${settleTimeoutS} s). For a storm that settles in seconds start the stack with ` +
        'RETRYPROOF_ACTION_TIME_S=1 RETRYPROOF_VISIBILITY_TIMEOUT_S=1 RETRYPROOF_MAX_RECEIVE_COUNT=3\n',
    );
  }
  return settleTimeoutS;
}

async function storm(ctx: CommandContext, args: ParsedArgs): Promise<number> {
  const values = args.values as StormValues;
  const settings = stormSettings(values);
  if (values.url !== undefined && values.secret === undefined) throw new UsageError('--url needs --secret', USAGE);
  const { endpoints, picked } = await localStackOf(ctx, values);
  const receiver = stormReceiver(values, endpoints, picked);
  const { url, localRegion, leaseSeconds, route } = receiver;
  const { target, regions } = await stormTargets(ctx, values, picked, localRegion);
  const settleTimeoutS = settleTimeoutSeconds(values, endpoints, localRegion !== undefined, leaseSeconds);

  const across = regions === undefined ? url : `${regions.length} regions (${regions.map((r) => `${r.name} ${r.url}`).join(', ')})`;
  process.stderr.write(`storm: ${settings.events} events against ${across} (route ${route.name}), seed ${settings.seed}\n`);
  const bar = progressWriter(values.quiet === true);
  let report;
  try {
    report = await runStorm({
      ...settings,
      url,
      route,
      secret: receiver.secret,
      toleranceSeconds: receiver.toleranceSeconds,
      leaseSeconds,
      target,
      adminUrl: localRegion?.adminUrl,
      ...(regions === undefined ? {} : { regions }),
      restartExecutor: values['no-restart'] !== true,
      settleTimeoutMs: settleTimeoutS * 1000,
      maxReconcileRounds: 3,
      onProgress: bar.update,
    });
  } finally {
    bar.end();
    if (regions === undefined) target?.close();
    else for (const r of regions) r.target.close();
  }
  const out = resolve(values['json-out'] ?? resolve(localDir(ctx.env), 'storm-report.json'));
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  ctx.print(ctx.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatSummary(report)}\nreport: ${out}\n`);
  return report.pass ? EXIT.ok : EXIT.failed;
}

export const stormCommand: Command = {
  name: 'storm',
  summary: 'play a retry storm against the local stack (or --url), then check: no double effect, nothing lost',
  usage: USAGE,
  options: OPTIONS,
  args: [],
  normalize: withRegionsValue,
  run: storm,
};

