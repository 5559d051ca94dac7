/**
 * `npm run send`: one signed sample delivery to a route (the demo by default) of the
 * local stack, or of any receiver with --url and --secret; `--dup N` sends N more copies
 * of it, byte for byte, so the receiver's replay answer shows.
 *
 *   npm run send -- --dup 3
 *   npm run send -- --id k1 --region local-2   (a stack started with --regions)
 *   npm run send -- --simulate '{"failAttempts":9}'
 *   npm run send -- --url https://abc.execute-api.eu-west-1.amazonaws.com/webhooks/ --secret whsec_...
 */
import { parseFlags, intFlag, numberFlag } from '../cli/args.ts';
import { CliError, EXIT, UsageError } from '../cli/errors.ts';
import { runScript } from '../cli/run-script.ts';
import { localDir, localRegionIn, readRunningEndpoints, StackNotRunningError, UnknownRegionError } from '../local/endpoints-file.ts';
import { DEMO_ROUTE } from '../local/local-settings.ts';
import { newKey, recordKeyFor, sampleBody, signSample, webhookUrl } from '../local/sample-delivery.ts';
import type { SampleRoute } from '../local/sample-delivery.ts';

const USAGE = `usage: npm run send -- [options]

Sends one signed sample payout delivery, then --dup more copies of it.

  --route NAME        route to send to (default: demo)
  --id KEY            the delivery's key (default: a new one each run)
  --amount N          payout amount in minor units (default: 1250)
  --currency CODE     three-letter currency (default: EUR)
  --simulate JSON     merged into the body as "simulate", e.g. '{"failAttempts":9}',
                      '{"delayMs":35000}', '{"crashAfterEffect":true}', '{"permanentError":true}',
                      '{"permanentErrorRuns":1}' (fails for good until a redrive)
  --dup N             send N more identical copies (default: 0)
  --concurrent        send the copies all at once instead of one after another
  --region NAME       the local Region to send to, of a stack started with --regions (default: the first)
  --url URL           a receiver's webhook base URL (default: the local stack's)
  --secret SECRET     the route's signing secret (needed with --url)
  --scheme NAME       the route's signature scheme with --url (default: standard-webhooks)
  --json              print the answers as JSON
  -h, --help          this text`;

const OPTIONS = {
  route: { type: 'string' },
  id: { type: 'string' },
  amount: { type: 'string' },
  currency: { type: 'string' },
  simulate: { type: 'string' },
  dup: { type: 'string' },
  concurrent: { type: 'boolean' },
  region: { type: 'string' },
  url: { type: 'string' },
  secret: { type: 'string' },
  scheme: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface Answer {
  readonly copy: number;
  readonly status: number;
  readonly replayed: boolean;
  readonly body: string;
  readonly ms: number;
}

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, OPTIONS, USAGE);
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, USAGE);
  const routeName = values.route ?? DEMO_ROUTE;
  const dup = intFlag('dup', values.dup, 0, 1000, USAGE) ?? 0;
  const amount = numberFlag('amount', values.amount, -1e12, 1e12, USAGE) ?? 1250;
  const currency = values.currency ?? 'EUR';
  let simulate: unknown;
  if (values.simulate !== undefined) {
    try {
      simulate = JSON.parse(values.simulate);
    } catch {
      throw new UsageError(`--simulate must be JSON, got ${JSON.stringify(values.simulate)}`, USAGE);
    }
    if (simulate === null || typeof simulate !== 'object' || Array.isArray(simulate)) {
      throw new UsageError('--simulate must be a JSON object, e.g. \'{"failAttempts":9}\'', USAGE);
    }
  }

  let base: string;
  let secret: string;
  let route: SampleRoute;
  if (values.url !== undefined) {
    if (values.secret === undefined) throw new UsageError('--url needs --secret, the route\'s signing secret', USAGE);
    if (values.region !== undefined) throw new UsageError('--region picks a Region of the local stack; with --url, give that Region\'s URL instead', USAGE);
    try {
      new URL(values.url);
    } catch {
      throw new UsageError(`--url ${JSON.stringify(values.url)} is not a URL`, USAGE);
    }
    const scheme = values.scheme ?? 'standard-webhooks';
    if (!['standard-webhooks', 'stripe', 'slack', 'github', 'shopify'].includes(scheme)) {
      throw new UsageError(`--scheme ${JSON.stringify(scheme)} is not one of standard-webhooks, stripe, slack, github, shopify`, USAGE);
    }
    base = values.url;
    secret = values.secret;
    route = { name: routeName, signature: { scheme } as SampleRoute['signature'] };
  } else {
    const endpoints = await readRunningEndpoints(localDir()).catch((err: unknown) => {
      if (err instanceof StackNotRunningError) throw new CliError(err.message);
      throw err;
    });
    const known = endpoints.routes.find((r) => r.name === routeName);
    if (known === undefined) {
      throw new UsageError(
        `the local stack has no route ${JSON.stringify(routeName)}; its routes: ${endpoints.routes.map((r) => r.name).join(', ')}`,
        USAGE,
      );
    }
    try {
      base = localRegionIn(endpoints, values.region).httpUrl;
    } catch (err) {
      if (err instanceof UnknownRegionError) throw new UsageError(`--region ${err.region}: ${err.message}`, USAGE);
      throw err;
    }
    secret = values.secret ?? known.secret;
    route = known;
  }

  const key = values.id ?? newKey(route);
  const body = sampleBody(route, key, {
    type: 'payout.requested',
    amount,
    currency,
    ...(simulate === undefined ? {} : { simulate }),
  });
  let signed;
  try {
    signed = signSample(route, secret, key, body, Math.floor(Date.now() / 1000));
  } catch (err) {
    throw new UsageError(`the secret cannot sign a ${route.signature.scheme} delivery: ${(err as Error).message}`, USAGE);
  }
  const url = webhookUrl(base, route.name);
  const sendOne = async (copy: number): Promise<Answer> => {
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`could not reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    return {
      copy,
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: await response.text(),
      ms: performance.now() - started,
    };
  };

  const answers: Answer[] = [await sendOne(1)];
  const copies = Array.from({ length: dup }, (_, i) => i + 2);
  if (values.concurrent === true) answers.push(...(await Promise.all(copies.map(sendOne))));
  else for (const copy of copies) answers.push(await sendOne(copy));

  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ url, route: route.name, key: recordKeyFor(route, key, signed.body), senderId: key, answers }, null, 2)}\n`);
  } else {
    // On the body-only schemes the receiver keys on the body's hash, not on the id we sent.
    const recordKey = recordKeyFor(route, key, signed.body);
    process.stdout.write(`POST ${url}  key ${recordKey}${recordKey === key ? '' : ` (sender's id ${key})`}\n`);
    for (const a of answers) {
      const replay = a.replayed ? '  Idempotent-Replayed: true' : '';
      process.stdout.write(`#${a.copy}  ${a.status}${replay}  ${a.body.trim()}  (${Math.round(a.ms)} ms)\n`);
    }
  }
  return answers.every((a) => a.status < 300) ? EXIT.ok : EXIT.failed;
}

await runScript('send', USAGE, main);
