/**
 * The deploy page (docs/deploying.md) shows a team writing its own action before the first deploy
 * (the block marked `<!-- own-action: PATH -->`, PATH being the file it replaces). The block is
 * run here as written: saved as a module whose imports are the repository's, and called with
 * an ActionContext against a fulfilment service on loopback, so the docs cannot show an
 * action that does not run or that breaks the contract it claims to keep.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Action, ActionContext } from '../../lambdas/actions/index.ts';
import { PermanentActionError, RetryableActionError } from '../../lambdas/actions/index.ts';
import { allDocs } from './doc-files.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const MARKED = /<!-- own-action: (\S+) -->\n```ts\n([\s\S]*?)\n```/;
/** The one marked block, in whichever documentation file holds it. */
const holders = allDocs().filter((d) => MARKED.test(d.text));
const found = MARKED.exec(holders[0]?.text ?? '');
const replaces = found?.[1] ?? '';
const code = found?.[2] ?? '';
/** The block's relative imports, each as written. */
const relativeImports = [...code.matchAll(/from '(\.[^']+)'/g)].map((m) => m[1] ?? '');

interface Request {
  readonly idempotencyKey: string | undefined;
  readonly body: unknown;
}

/** A fulfilment service on loopback that records each request and answers `answer`'s status. */
let server: Server;
let answer = 201;
const requests: Request[] = [];
let action: Action;
let dir: string;

function context(body: unknown, signal: AbortSignal = new AbortController().signal): ActionContext {
  return { route: 'stripe', key: 'evt_1', idempotencyKey: 'stripe/evt_1', body, rawBody: Buffer.from(JSON.stringify(body)), headers: {}, attempt: 1, deadline: Date.now() + 10_000, signal };
}

const paid = { id: 'evt_1', type: 'checkout.session.completed', data: { object: { id: 'cs_1', payment_status: 'paid' } } };

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      requests.push({ idempotencyKey: req.headers['idempotency-key'] as string | undefined, body: JSON.parse(text) as unknown });
      res.writeHead(answer, { 'content-type': 'application/json' }).end('{"shipment":"sh_1"}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  process.env.FULFILMENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shipments`;
  // The block as a module beside nothing of the repository: its relative imports made absolute.
  dir = mkdtempSync(join(tmpdir(), 'retryproof-own-action-'));
  let module = code;
  for (const specifier of relativeImports) {
    module = module.replaceAll(`'${specifier}'`, `'${pathToFileURL(resolve(REPO, dirname(replaces), specifier)).href}'`);
  }
  const file = join(dir, 'handle-stripe-event.ts');
  writeFileSync(file, module);
  action = ((await import(pathToFileURL(file).href)) as { default: Action }).default;
});

afterAll(async () => {
  delete process.env.FULFILMENT_URL;
  await new Promise<void>((done) => server.close(() => { done(); }));
  rmSync(dir, { recursive: true, force: true });
});

describe("the docs' own action, before the first deploy", () => {
  it('is shown once, on the deploy page', () => {
    expect(holders.map((d) => d.path)).toEqual(['docs/deploying.md']);
  });

  it('replaces the shipped template, and imports what the repository has from where that file is', () => {
    expect(replaces).toBe('actions/handle-stripe-event.ts');
    expect(existsSync(join(REPO, replaces))).toBe(true);
    expect(relativeImports.length).toBeGreaterThan(0);
    for (const specifier of relativeImports) expect(existsSync(resolve(REPO, dirname(replaces), specifier)), specifier).toBe(true);
  });

  it('fulfils a paid session once per run, under the run\'s idempotency key, and says so', async () => {
    // Prepare
    requests.length = 0;
    answer = 201;
    // Act
    const first = await action(context(paid));
    const rerun = await action(context(paid));
    // Assess: a rerun sends the same key, so the service gives back the first shipment.
    expect(first).toEqual({ fulfilled: 'cs_1' });
    expect(rerun).toEqual(first);
    expect(requests).toEqual([
      { idempotencyKey: 'stripe/evt_1', body: { checkoutSession: 'cs_1' } },
      { idempotencyKey: 'stripe/evt_1', body: { checkoutSession: 'cs_1' } },
    ]);
  });

  it('leaves other events and unpaid sessions alone, calling nothing', async () => {
    requests.length = 0;
    const unpaid = { ...paid, data: { object: { id: 'cs_2', payment_status: 'unpaid' } } };
    await expect(action(context({ id: 'evt_2', type: 'invoice.paid' }))).resolves.toEqual({ skipped: 'invoice.paid' });
    await expect(action(context(unpaid))).resolves.toEqual({ skipped: 'checkout.session.completed' });
    expect(requests).toEqual([]);
  });

  it('throws retryable for a 5xx or a 429 and permanent for another 4xx', async () => {
    for (const [status, kind] of [
      [503, RetryableActionError],
      [429, RetryableActionError],
      [400, PermanentActionError],
    ] as const) {
      answer = status;
      await expect(action(context(paid)), String(status)).rejects.toBeInstanceOf(kind);
    }
    answer = 201;
  });

  it('throws retryable when the deadline aborted the call, and permanent for a body that is no event', async () => {
    // Prepare
    const aborted = new AbortController();
    aborted.abort(new Error('deadline'));
    // Act and assess
    await expect(action(context(paid, aborted.signal))).rejects.toBeInstanceOf(RetryableActionError);
    await expect(action(context('not json'))).rejects.toBeInstanceOf(PermanentActionError);
  });
});
