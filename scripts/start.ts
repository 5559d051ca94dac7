/**
 * `npm start`: the local stack in the foreground (local/run-local-stack.ts, which
 * `retryproof start` runs too), over ./retryproof.config.ts or the file `--config <path>`
 * names. This file reads the command line; the exit codes are run-local-stack.ts's.
 */
import { parseFlags, UsageError } from '../cli/index.ts';
import { failLocalStack, LOCAL_STACK_ENVIRONMENT, LOCAL_STACK_FLAGS, runLocalStackInForeground } from '../local/run-local-stack.ts';

const USAGE = `usage: npm start -- [--config PATH] [--regions N | --regions NAME,NAME...]

Runs the local stack in the foreground: DynamoDB Local and fauxqs, the ingest behind a
local gateway on http://127.0.0.1:PORT/webhooks/{route}, the executor and the reconciler.
Ctrl-C stops it.

${LOCAL_STACK_FLAGS}
  -h, --help      this text

${LOCAL_STACK_ENVIRONMENT}`;

const OPTIONS = { config: { type: 'string' }, regions: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

let run: { config: string | undefined; regions: string | undefined };
try {
  const { values, positionals } = parseFlags(process.argv.slice(2), OPTIONS, USAGE);
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, USAGE);
  run = { config: values.config, regions: values.regions };
} catch (error) {
  if (error instanceof UsageError) failLocalStack(`${error.message} (npm start -- --help)`, 2);
  throw error;
}

await runLocalStackInForeground(run);
