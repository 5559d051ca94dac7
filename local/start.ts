/**
 * `npm start`: the local stack in the foreground. Settings come from the environment
 * (local/local-settings.ts); Ctrl-C or SIGTERM stops every part and exits 0. A stop waits
 * for the executor's running actions (it says for how many, and how long at most); a
 * second Ctrl-C abandons them, which loses nothing: their records' leases run out and
 * their messages come back.
 *
 * Exit codes: 0 stopped cleanly; 1 a part failed; 2 a setting, the port or Java is wrong;
 * 130 stopped with running actions abandoned (a second Ctrl-C), or a third Ctrl-C.
 */
import { relative } from 'node:path';
import { readLocalSettings, SettingsError, DEMO_ROUTE } from './local-settings.ts';
import type { LocalSettings } from './local-settings.ts';
import { PortInUseError, startLocalStack } from './stack.ts';
import type { LocalStack } from './stack.ts';

// The handlers' EMF metrics would flood the terminal; the local stack prints its own lines.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// DynamoDB Local sends usage telemetry to AWS (Cognito, Pinpoint) unless told not to; the
// local stack stays on loopback. The JVM inherits this environment.
process.env.DDB_LOCAL_TELEMETRY ??= '0';

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

function fail(message: string, code: number): never {
  err(`retryproof local: ${message}`);
  process.exit(code);
}

/** Enough of a secret to recognise it, when it came from the environment. */
function masked(secret: string): string {
  return secret.length <= 12 ? '***' : `${secret.slice(0, 10)}...`;
}

function banner(settings: LocalSettings): void {
  const near = relative(process.cwd(), settings.dir);
  const shown = near === '' ? '.' : near.startsWith('..') ? settings.dir : near;
  const { queue, reconciliation } = settings.config;
  out(
    `retryproof local: data in ${shown}/ (DynamoDB Local + fauxqs), visibility ${queue.visibilityTimeoutSeconds} s, ` +
      `maxReceiveCount ${queue.maxReceiveCount}, reconcile ${
        settings.reconcileEverySeconds > 0 ? `every ${settings.reconcileEverySeconds} s` : 'timer off'
      } (settle ${reconciliation.settleSeconds} s, stuck after ${reconciliation.stuckAfterSeconds} s)`,
  );
  for (const route of settings.config.routes) {
    const local = settings.secrets.find((s) => s.route === route.name);
    if (route.name === DEMO_ROUTE || local === undefined) continue;
    // A v1a sender signs with the private key; the receiver holds only its public half.
    const secret =
      local.signingSecret === local.secret
        ? `local secret ${local.secret}`
        : `local signing key ${local.signingSecret} (the receiver holds ${local.secret})`;
    out(`route ${route.name} (${route.signature.scheme}, lease ${route.leaseSeconds} s): ${secret}`);
  }
}

let settings: LocalSettings;
try {
  settings = readLocalSettings();
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

banner(settings);
try {
  stack = await startLocalStack({ settings, out, err });
} catch (error) {
  if (error instanceof PortInUseError || error instanceof SettingsError) fail(error.message, 2);
  const message = (error as Error).message;
  if (message.startsWith('java was not found')) fail(message, 2);
  fail(`the local stack did not start: ${message.split('\n')[0] ?? ''}`, 1);
}

if (state.stopRequested) {
  onSignal('SIGTERM');
} else {
  const demo = settings.secrets.find((s) => s.route === DEMO_ROUTE);
  const secretNote = demo === undefined ? '' : ` (demo secret ${settings.demoSecretFromEnv ? masked(demo.secret) : demo.secret})`;
  out(`retryproof local stack ready at ${stack.url}${secretNote}`);
}
