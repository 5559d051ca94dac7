/**
 * The local stack in the foreground, as `npm start` (scripts/start.ts) and `retryproof start`
 * (cli/commands/start.ts) both run it: over ./retryproof.config.ts or the file `--config
 * <path>` names. Settings come from the environment (local/local-settings.ts); Ctrl-C or
 * SIGTERM stops every part and exits 0. A stop waits for the executor's running actions (it
 * says for how many, and how long at most); a second Ctrl-C abandons them, which loses
 * nothing: their records' leases run out and their messages come back.
 *
 * Exit codes: 0 stopped cleanly; 1 a part failed; 2 the command line, the configuration,
 * a setting, the port or Java is wrong; 130 stopped with running actions abandoned (a
 * second Ctrl-C), or a third Ctrl-C.
 */
import { relative, resolve } from 'node:path';
import { CLAIM_CHECK_ABOVE_BYTES, MAX_BODY_BYTES } from '../lambdas/domain/body-object.ts';
import { assertActionFiles } from './action-imports.ts';
import { loadConfigFile } from './config-file.ts';
import type { ConfigFile } from './config-file.ts';
import { DEFAULT_CONFIG_FILE, DEMO_ROUTE, LOCAL_ENV, readLocalSettings, SettingsError } from './local-settings.ts';
import type { LocalSettings } from './local-settings.ts';
import { LocalSetupError } from './local-setup.ts';
import { localRouteQueueName, ownQueueRoutes } from './route-queues.ts';
import { PortInUseError, startLocalStack } from './stack.ts';
import type { LocalStack } from './stack.ts';

/** Words of `text` on lines of at most 90 characters, each starting with `indent`. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + word.length < 90) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(`${indent}${word}`);
  }
  return lines.join('\n');
}

/** The flags both commands take, for their usage texts. */
export const LOCAL_STACK_FLAGS = `  --config PATH   the configuration file to run (default: ./retryproof.config.ts). It
                  exports \`config\` (a RetryproofConfig) and may export \`localSetup\`
                  (see local/local-setup.ts), run before the action modules load. The
                  actions' entry and ledger paths, when relative, are taken from the
                  current directory, not from the file's folder.
  --regions N     run N Regions (1 to 8), named local-1 ... local-N; or name them:
  --regions LIST  --regions us-east-1,us-east-2. Each Region has its own gateway (the first
                  on PORT, the next on PORT+1, ...), work queue, DLQ and executor; all share
                  the one events table and ledger, as Regions share one MRSC global table.
                  Default: the config's regions.replicas, else one Region, local-1.`;

/** The settings the environment gives, for the usage texts. */
export const LOCAL_STACK_ENVIRONMENT = `Environment (see local/local-settings.ts):
${wrap(Object.values(LOCAL_ENV).join(', '), '  ')}`;

/** What to run, as the command line gave it. */
export interface LocalStackRun {
  /**
   * The configuration file, absolute or relative to the current directory.
   * @default - ./retryproof.config.ts
   */
  readonly config?: string | undefined;
  /**
   * `--regions`: a count (1 to 8) or a list of names.
   * @default - the configuration's regions.replicas, else one Region
   */
  readonly regions?: string | undefined;
}

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** One line and the exit code: the stack refuses what it cannot run, never with a stack trace. */
export function failLocalStack(message: string, code: number): never {
  err(`retryproof local: ${message}`);
  process.exit(code);
}
const fail: (message: string, code: number) => never = failLocalStack;

/** Enough of a secret to recognise it, when it came from the environment. */
function masked(secret: string): string {
  return secret.length <= 12 ? '***' : `${secret.slice(0, 10)}...`;
}

function banner(settings: LocalSettings, file: ConfigFile): void {
  const near = relative(process.cwd(), settings.dir);
  const shown = near === '' ? '.' : near.startsWith('..') ? settings.dir : near;
  const { queue, reconciliation } = settings.config;
  if (file.path !== resolve(DEFAULT_CONFIG_FILE)) {
    const actions = Object.keys(settings.actions);
    out(`retryproof local: config ${file.shown}, actions ${actions.length === 0 ? 'none' : actions.join(', ')}`);
  }
  out(
    `retryproof local: data in ${shown}/ (DynamoDB Local + fauxqs), visibility ${queue.visibilityTimeoutSeconds} s, ` +
      `maxReceiveCount ${queue.maxReceiveCount}, reconcile ${
        settings.reconcileEverySeconds > 0 ? `every ${settings.reconcileEverySeconds} s` : 'timer off'
      } (settle ${reconciliation.settleSeconds} s, stuck after ${reconciliation.stuckAfterSeconds} s)`,
  );
  // Where large bodies wait (the S3 claim check), as the queues hold the rest.
  const buckets = settings.regions.length === 1 ? `the bucket ${settings.regions[0]?.bodyBucket ?? ''}` : `each region's bucket (${settings.regions.map((r) => `${r.name} ${r.bodyBucket}`).join(', ')})`;
  out(
    `retryproof local: bodies over a route's claimCheckAboveBytes (${CLAIM_CHECK_ABOVE_BYTES / 1024} KiB by default) are kept in ${buckets} ` +
      `on fauxqs's S3 (a body has at most ${MAX_BODY_BYTES} bytes, or its route's smaller maxBodyBytes)`,
  );
  for (const route of settings.config.routes) {
    const local = settings.secrets.find((s) => s.route === route.name);
    if (route.name === DEMO_ROUTE || local === undefined) continue;
    // A v1a sender signs with the private key; the receiver holds only its public half.
    const secret =
      local.signingSecret === local.secret
        ? `local secret ${local.secret}`
        : `local signing key ${local.signingSecret} (the receiver holds ${local.secret})`;
    // A route with a time per destination leases each record for its own; the longest bounds them.
    const lease = route.actionTime === undefined ? `${route.leaseSeconds} s` : `up to ${route.leaseSeconds} s by ${route.actionTime.pointer}`;
    out(`route ${route.name} (${route.signature.scheme}, lease ${lease}): ${secret}`);
  }
  // Where each isolated route's work waits, and how much of it runs at once.
  const [firstRegion] = settings.regions;
  for (const route of ownQueueRoutes(settings.config)) {
    const concurrency = route.concurrency === undefined ? "the shared queue's concurrency" : `concurrency ${route.concurrency}`;
    const limit = route.rateLimit === undefined ? '' : `, ${route.rateLimit.text}`;
    out(`route ${route.name}: its own queue ${localRouteQueueName(firstRegion?.queue ?? '', route.name)} (${concurrency}${limit}), dead-lettering into the one DLQ`);
  }
}

/**
 * Runs the local stack in the foreground of this process: loads the configuration, starts
 * every part, prints the ready line, and resolves. From then on the process belongs to the
 * stack: Ctrl-C or SIGTERM stops it and exits the process (see the exit codes above). What
 * it cannot run (the configuration, a setting, the port, Java) ends the process with one line.
 */
export async function runLocalStackInForeground(run: LocalStackRun): Promise<void> {
  // The handlers' EMF metrics would flood the terminal; the local stack prints its own lines.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // DynamoDB Local sends usage telemetry to AWS (Cognito, Pinpoint) unless told not to; the
  // local stack stays on loopback. The JVM inherits this environment.
  process.env.DDB_LOCAL_TELEMETRY ??= '0';

  let file: ConfigFile;
  let settings: LocalSettings;
  try {
    file = await loadConfigFile(run.config ?? DEFAULT_CONFIG_FILE);
    settings = readLocalSettings(process.env, file.config, process.cwd(), file.shown, { regions: run.regions });
    await assertActionFiles(settings.actions);
  } catch (error) {
    if (error instanceof SettingsError) fail(error.message, 2);
    throw error;
  }

  let stack: LocalStack | undefined;
  const state = { stopRequested: false };
  let stopping = false;
  let abandoning = false;

  const actions = (n: number): string => `${n} running action${n === 1 ? '' : 's'}`;

  /** A second signal during a stop: stop waiting for running actions; a third: exit now. */
  function onSignalAgain(running: LocalStack, signal: NodeJS.Signals): void {
    if (abandoning) {
      err(`retryproof local: ${signal} again, exiting now; nothing accepted is lost (leases run out, messages come back)`);
      process.exit(130);
    }
    abandoning = true;
    const { messages } = running.running();
    out(
      messages === 0
        ? `retryproof local: ${signal} again, stopping without waiting`
        : `retryproof local: ${signal} again, abandoning ${actions(messages)}: nothing is lost, ` +
            `${messages === 1 ? 'its record\'s lease runs out and its message comes' : 'their records\' leases run out and their messages come'} back on the next start`,
    );
    running.abandon().then(
      () => {
        out('retryproof local: stopped');
        process.exit(130);
      },
      (error: unknown) => {
        fail(`stopping failed: ${(error as Error).message}`, 1);
      },
    );
  }

  /**
   * One Ctrl-C can arrive twice: the terminal signals the whole process group, and `npm start`
   * forwards its own copy to this process. Copies this close together are one keypress.
   */
  const SAME_KEYPRESS_MS = 500;
  let firstSignalAt = 0;

  const onSignal = (signal: NodeJS.Signals): void => {
    state.stopRequested = true;
    if (stack === undefined) return;
    if (stopping) {
      if (Date.now() - firstSignalAt < SAME_KEYPRESS_MS) return;
      onSignalAgain(stack, signal);
      return;
    }
    stopping = true;
    firstSignalAt = Date.now();
    out(`retryproof local: ${signal}, stopping`);
    // Say what the stop waits for, so a quiet terminal does not look like a hang.
    const { messages, atMostMs } = stack.running();
    if (messages > 0) {
      out(
        `retryproof local: waiting for ${actions(messages)}, at most ${Math.ceil(atMostMs / 1000)} s; ` +
          (messages === 1
            ? 'Ctrl-C again to abandon it (nothing is lost: its message comes back)'
            : 'Ctrl-C again to abandon them (nothing is lost: their messages come back)'),
      );
    }
    stack.stop().then(
      () => {
        // An abandoned stop ends the same promise; its own handler reports and exits.
        if (abandoning) return;
        out('retryproof local: stopped');
        process.exit(0);
      },
      (error: unknown) => {
        fail(`stopping failed: ${(error as Error).message}`, 1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let started: LocalStack;
  try {
    started = await startLocalStack({ settings, localSetup: file.localSetup, out, err, onPortsTaken: () => { banner(settings, file); } });
    stack = started;
  } catch (error) {
    if (error instanceof PortInUseError || error instanceof SettingsError) fail(error.message, 2);
    const message = (error as Error).message;
    if (message.startsWith('java was not found')) fail(message, 2);
    if (error instanceof LocalSetupError) fail(message, 1);
    fail(`the local stack did not start: ${message.split('\n')[0] ?? ''}`, 1);
  }

  if (state.stopRequested) {
    onSignal('SIGTERM');
  } else {
    const demo = settings.secrets.find((s) => s.route === DEMO_ROUTE);
    const secretNote = demo === undefined ? '' : ` (demo secret ${settings.demoSecretFromEnv ? masked(demo.secret) : demo.secret})`;
    if (started.regions.length > 1) {
      out(
        `retryproof local: ${started.regions.length} regions on one events table, each with its own queue, DLQ and executor: ` +
          started.regions.map((r) => `${r.name} ${r.url}`).join(', '),
      );
    }
    out(`retryproof local stack ready at ${started.url}${secretNote}`);
  }
}
