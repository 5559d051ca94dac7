/**
 * `npm run fuzz`: fuzzes the edge (the local HTTP gateway and the real ingest handler on
 * DynamoDB Local and fauxqs, both started here on loopback) with fast-check, and checks
 * every answer against docs/openapi.json and every refusal against the table and queue.
 * A failure prints fast-check's shrunk counterexample and the flags that replay it.
 *
 *   npm run fuzz -- --runs 20000
 *   npm run fuzz -- --seed 1234 --path 56:3:0
 */
import fc from 'fast-check';
import { intFlag, parseFlags } from '../cli/args.ts';
import { EXIT, UsageError } from '../cli/errors.ts';
import { runScript } from '../cli/run-script.ts';
import type { EdgeCase } from '../test/fuzz/edge-cases.ts';

const USAGE = `usage: npm run fuzz -- [options]

Sends fuzzed requests (methods, paths, header sets and casings, body encodings and sizes
around every limit, valid and broken signatures of every scheme) through the local HTTP
gateway to the real ingest handler, on a DynamoDB Local and a fauxqs started here. Every
answer must be a documented status below 500 with the right body, no error may be logged,
and a refusal must write nothing. Needs Java 17+ (DynamoDB Local).

  --runs N     cases to run (default: 1000)
  --seed S     fast-check's seed (default: random, printed)
  --path P     replay a counterexample: fast-check's path, with the --seed it came from
  -h, --help   this text`;

const OPTIONS = {
  runs: { type: 'string' },
  seed: { type: 'string' },
  path: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Progress on stderr at most once a second: one rewritten line on a terminal, a line every 10 s otherwise. */
function progress(total: number, read: () => { runs: number; shrinking: boolean; shrinkSteps: number }): () => void {
  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastLine = 0;
  const draw = (): void => {
    const { runs, shrinking, shrinkSteps } = read();
    const seconds = Math.round((Date.now() - started) / 1000);
    const text = shrinking ? `fuzz: violation found after ${runs} runs; shrinking (${shrinkSteps} steps), ${seconds} s` : `fuzz: ${runs}/${total} runs, ${seconds} s`;
    if (tty) process.stderr.write(`\r\x1b[K${text}`);
    else if (Date.now() - lastLine >= 10_000) {
      process.stderr.write(`${text}\n`);
      lastLine = Date.now();
    }
  };
  const timer = setInterval(draw, 1_000);
  return () => {
    clearInterval(timer);
    if (tty) process.stderr.write('\r\x1b[K');
  };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, OPTIONS, USAGE);
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, USAGE);
  const runs = intFlag('runs', values.runs, 1, 10_000_000, USAGE) ?? 1000;
  // Drawn here rather than by fast-check, so it can be printed before the run: a run that
  // hangs or is interrupted can be replayed too.
  const seed = intFlag('seed', values.seed, -(2 ** 31), 2 ** 31 - 1, USAGE) ?? (Math.random() * 2 ** 32) | 0;
  const path = values.path;
  if (path !== undefined && !/^\d+(:\d+)*$/.test(path)) throw new UsageError(`--path must look like 12:0:3, got ${JSON.stringify(path)}`, USAGE);
  if (path !== undefined && values.seed === undefined) throw new UsageError('--path replays a run of one seed: give its --seed too', USAGE);

  // The handler logs through a captured logger; Powertools metrics stay off, as in the tests.
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const { startLocalDynamo, startLocalSqs } = await import('../local/local-aws.ts');
  const { edgeProperty, formatStatuses, newTally, startEdgeFuzz } = await import('../test/fuzz/edge-fuzz.ts');

  process.stderr.write('fuzz: starting DynamoDB Local and fauxqs\n');
  const [dynamo, sqs] = await Promise.all([startLocalDynamo(), startLocalSqs()]);
  try {
    const fuzz = await startEdgeFuzz({ dynamoEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint });
    const tally = newTally();
    process.stderr.write(`fuzz: ${runs} runs, seed ${seed}${path === undefined ? '' : `, path ${path}`}\n`);
    const started = Date.now();
    const stop = progress(runs, () => tally);
    let details: fc.RunDetails<[EdgeCase]>;
    try {
      details = await fc.check(edgeProperty(fuzz, tally), {
        numRuns: runs,
        seed,
        ...(path === undefined ? {} : { path }),
      });
    } finally {
      stop();
      await fuzz.close();
    }
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `runs ${tally.runs}, seed ${details.seed}; statuses: ${formatStatuses(tally.statuses)}` +
        `${tally.excused === 0 ? '' : ` (${tally.excused} of the 503s: fauxqs refusing characters above U+FFFF, which SQS carries)`}; ` +
        `violations ${details.failed ? 1 : 0}; ${seconds.toFixed(1)} s (${Math.round(tally.runs / Math.max(seconds, 0.001))} runs/s)\n`,
    );
    if (!details.failed) return EXIT.ok;
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    process.stdout.write(
      `\nFAILED after ${details.numRuns} runs, shrunk in ${details.numShrinks} steps:\n` +
        `  ${error}\n` +
        `counterexample: ${fc.stringify(details.counterexample)}\n` +
        `replay: npm run fuzz -- --seed ${details.seed} --path ${details.counterexamplePath ?? ''}\n`,
    );
    return EXIT.failed;
  } finally {
    await Promise.all([dynamo.stop(), sqs.stop()]);
  }
}

await runScript('fuzz', USAGE, main);
