/**
 * `retryproof send`: one signed sample delivery to a route of the local stack (the demo's, or
 * the stack's only route), or of any receiver with --url and --secret; `--dup N` sends N more
 * copies of it, byte for byte, so the receiver's replay answer shows. `npm run send` in this
 * repository runs it too.
 */
import { intFlag, numberFlag } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, EXIT, UsageError } from '../errors.ts';
import {
  DEMO_ROUTE,
  localDir,
  localRegionIn,
  newKey,
  readRunningEndpoints,
  recordKeyFor,
  sampleBody,
  signSample,
  StackNotRunningError,
  UnknownRegionError,
  webhookUrl,
  workTaken,
} from '../../local/index.ts';
import type { LocalEndpoints, SampleRoute } from '../../local/index.ts';

const USAGE = `retryproof send [options]   (in the retryproof repository also: npm run send -- [options])

Sends one signed sample payout delivery to the local stack, then --dup more copies of it.

  --route NAME        route to send to (default: demo, or the stack's only route)
  --id KEY            the delivery's key (default: a new one each run)
  --amount N          payout amount in minor units (default: 1250)
  --currency CODE     three-letter currency (default: EUR)
  --simulate JSON     merged into the body as "simulate", e.g. '{"failAttempts":9}',
                      '{"delayMs":35000}', '{"crashAfterEffect":true}', '{"permanentError":true}',
                      '{"permanentErrorRuns":1}' (fails for good until a redrive; the demo's action only)
  --dup N             send N more identical copies (default: 0); to the local stack, once its
                      worker took the work, as a sender's retries after its timeout come (the
                      circuit breaker counts only copies after that)
  --concurrent        send the copies all at once instead of one after another
  --region NAME       the local Region to send to, of a stack started with --regions (default: the first)
  --url URL           a receiver's webhook base URL (default: the local stack's)
  --secret SECRET     the route's signing secret (needed with --url)
  --scheme NAME       the route's signature scheme with --url (default: standard-webhooks)
  --json              print the answers as JSON
  -h, --help          this text

Exit code 0 when every answer is 2xx, 1 otherwise or when no local stack runs, 2 for a bad option.`;

/** How long `--dup` waits for the local stack's worker to take the first delivery's work. */
const WORK_TAKEN_WITHIN_MS = 15_000;

const SCHEMES = ['standard-webhooks', 'stripe', 'slack', 'github', 'shopify'] as const;

interface Answer {
  readonly copy: number;
  readonly status: number;
  readonly replayed: boolean;
  readonly body: string;
  readonly ms: number;
}

/** `--simulate`: a JSON object, or undefined. */
function simulateFlag(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--simulate must be JSON, got ${JSON.stringify(text)}`, USAGE);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError('--simulate must be a JSON object, e.g. \'{"failAttempts":9}\'', USAGE);
  }
  return parsed as Record<string, unknown>;
}

/** The route the local stack was asked for: --route, else the demo's, else its only route. */
function localRoute(endpoints: LocalEndpoints, asked: string | undefined): LocalEndpoints['routes'][number] {
  const names = endpoints.routes.map((r) => r.name);
  const only = endpoints.routes.length === 1 ? endpoints.routes[0] : undefined;
  const name = asked ?? (names.includes(DEMO_ROUTE) ? DEMO_ROUTE : only?.name);
  const known = endpoints.routes.find((r) => r.name === name);
  if (known !== undefined) return known;
  throw new UsageError(
    name === undefined
      ? `say which route: --route NAME; the local stack's routes: ${names.join(', ')}`
      : `the local stack has no route ${JSON.stringify(name)}; its routes: ${names.join(', ')}`,
    USAGE,
  );
}

/** Where to send and with what: --url and --secret, else the local stack's route. */
async function destination(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: NodeJS.ProcessEnv,
): Promise<{ base: string; secret: string; route: SampleRoute; endpoints?: LocalEndpoints }> {
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const url = text('url');
  if (url !== undefined) {
    const secret = text('secret');
    if (secret === undefined) throw new UsageError("--url needs --secret, the route's signing secret", USAGE);
    if (text('region') !== undefined) throw new UsageError("--region picks a Region of the local stack; with --url, give that Region's URL instead", USAGE);
    try {
      new URL(url);
    } catch {
      throw new UsageError(`--url ${JSON.stringify(url)} is not a URL`, USAGE);
    }
    const scheme = text('scheme') ?? 'standard-webhooks';
    if (!(SCHEMES as readonly string[]).includes(scheme)) throw new UsageError(`--scheme ${JSON.stringify(scheme)} is not one of ${SCHEMES.join(', ')}`, USAGE);
    return { base: url, secret, route: { name: text('route') ?? DEMO_ROUTE, signature: { scheme } as SampleRoute['signature'] } };
  }
  const endpoints = await readRunningEndpoints(localDir(env)).catch((err: unknown) => {
    if (err instanceof StackNotRunningError) throw new CliError(err.message);
    throw err;
  });
  const known = localRoute(endpoints, text('route'));
  try {
    return { base: localRegionIn(endpoints, text('region')).httpUrl, secret: text('secret') ?? known.secret, route: known, endpoints };
  } catch (err) {
    if (err instanceof UnknownRegionError) throw new UsageError(`--region ${err.region}: ${err.message}`, USAGE);
    throw err;
  }
}

async function post(url: string, signed: { headers: Record<string, string>; body: string }, copy: number): Promise<Answer> {
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`could not reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  return { copy, status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: await response.text(), ms: performance.now() - started };
}

export const sendCommand: Command = {
  name: 'send',
  summary: 'send a signed sample delivery (and --dup copies) to a route of the local stack, or to --url',
  usage: USAGE,
  options: {
    route: { type: 'string' },
    id: { type: 'string' },
    amount: { type: 'string' },
    currency: { type: 'string' },
    simulate: { type: 'string' },
    dup: { type: 'string' },
    concurrent: { type: 'boolean' },
    url: { type: 'string' },
    secret: { type: 'string' },
    scheme: { type: 'string' },
  },
  args: [],
  async run(ctx, { values }) {
    if (typeof values.stack === 'string' || typeof values.receiver === 'string') {
      throw new UsageError("send posts to the local stack, or to --url URL --secret S; a deployed stack's secrets are not the CLI's to read", USAGE);
    }
    const dup = intFlag('dup', values.dup as string | undefined, 0, 1000, USAGE) ?? 0;
    const amount = numberFlag('amount', values.amount as string | undefined, -1e12, 1e12, USAGE) ?? 1250;
    const simulate = simulateFlag(values.simulate as string | undefined);
    const { base, secret, route, endpoints } = await destination(values, ctx.env);
    const key = typeof values.id === 'string' ? values.id : newKey(route);
    const currency = typeof values.currency === 'string' ? values.currency : 'EUR';
    const body = sampleBody(route, key, { type: 'payout.requested', amount, currency, ...(simulate === undefined ? {} : { simulate }) });
    let signed;
    try {
      signed = signSample(route, secret, key, body, Math.floor(ctx.now() / 1000));
    } catch (err) {
      throw new UsageError(`the secret cannot sign a ${route.signature.scheme} delivery: ${(err as Error).message}`, USAGE);
    }
    const url = webhookUrl(base, route.name);
    // On the body-only schemes the receiver keys on the body's hash, not on the id we sent.
    const recordKey = recordKeyFor(route, key, signed.body);
    const answers: Answer[] = [await post(url, signed, 1)];
    const first = answers[0];
    if (dup > 0 && endpoints !== undefined && first !== undefined && first.status < 300 && !first.replayed) {
      if (!(await workTaken(endpoints, route.name, recordKey, WORK_TAKEN_WITHIN_MS))) {
        ctx.progress(`the stack's worker had not taken the work after ${WORK_TAKEN_WITHIN_MS / 1000} s; the copies go now, and the circuit breaker may not count them`, { whole: true });
      }
    }
    const copies = Array.from({ length: dup }, (_, i) => i + 2);
    if (values.concurrent === true) answers.push(...(await Promise.all(copies.map((copy) => post(url, signed, copy)))));
    else for (const copy of copies) answers.push(await post(url, signed, copy));

    if (ctx.json) {
      ctx.print(`${JSON.stringify({ url, route: route.name, key: recordKey, senderId: key, answers }, null, 2)}\n`);
    } else {
      ctx.print(`POST ${url}  key ${recordKey}${recordKey === key ? '' : ` (sender's id ${key})`}\n`);
      for (const a of answers) {
        ctx.print(`#${a.copy}  ${a.status}${a.replayed ? '  Idempotent-Replayed: true' : ''}  ${a.body.trim()}  (${Math.round(a.ms)} ms)\n`);
      }
    }
    return answers.every((a) => a.status < 300) ? EXIT.ok : EXIT.failed;
  },
};
