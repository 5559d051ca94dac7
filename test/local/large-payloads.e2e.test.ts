/**
 * Issue 24's first must-show, on the local stack as a user runs it (`npm start -- --config`):
 * signed deliveries of 200 KiB, 1 MiB and 4 MiB are each accepted (202), kept in the Region's
 * bucket on fauxqs's S3 (the S3 claim check), and run once, on the very bytes that were sent (the
 * SHA-256 the action computes is the sender's); a copy of each is a replay; a body one byte over
 * the receiver's limit (MAX_BODY_BYTES) gets 413 naming the limit, and one at the limit is
 * accepted. `retryproof inspect --with-body` reads such a body back from the bucket, and does
 * again once the stack has restarted on the same folder (fauxqs keeps its objects there).
 *
 * The bodies are JSON, as a Standard Webhooks sender's are (the scheme refuses any other), each
 * carrying a long random string, cut to the exact size. test/local/http-gateway.test.ts shows a
 * binary body of MAX_BODY_BYTES, which API Gateway hands over base64-encoded, fitting Lambda's 6 MB.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDelivery } from '../../cli/operations/inspect-delivery.ts';
import { bodyObjectName, MAX_BODY_BYTES } from '../../lambdas/domain/body-object.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { readEndpointsFile } from '../../local/endpoints-file.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { runScript, shutDown, stackEnv, startStack, until, withLocalTarget } from './stack-process.ts';
import type { StackProcess } from './stack-process.ts';

/** One route on an action that records what it ran on; no demo. */
const CONFIG = `import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const config = {
  routes: [{ name: 'large', signature: { scheme: 'standard-webhooks' }, secretName: 'large/webhook', action: 'record', actionTimeSeconds: 2 }],
  actions: { record: { entry: './record-action.mjs' } },
  demo: false,
};

const here = dirname(fileURLToPath(import.meta.url));

export async function localSetup(): Promise<Record<string, string>> {
  return { RECORD_FILE: join(here, 'runs.log') };
}
`;

/**
 * The action: one line per run with the SHA-256 and length of the body it got: the context's
 * rawBody, the exact bytes, when the executor gives one, else its parsed body written back as JSON
 * (the same bytes for these compact documents of plain strings; the line says which it was).
 */
const ACTION = `import { createHash } from 'node:crypto';
import { appendFile } from 'node:fs/promises';

const file = process.env.RECORD_FILE;
if (file === undefined) throw new Error('RECORD_FILE is not set');

export default async (ctx) => {
  const raw = Buffer.isBuffer(ctx.rawBody);
  const bytes = raw ? ctx.rawBody : Buffer.from(JSON.stringify(ctx.body));
  const line = { key: ctx.key, attempt: ctx.attempt, length: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), via: raw ? 'rawBody' : 'body' };
  await appendFile(file, JSON.stringify(line) + '\\n');
  return { length: bytes.length };
};
`;

interface Run {
  readonly key: string;
  readonly attempt: number;
  readonly length: number;
  readonly sha256: string;
  readonly via: string;
}

/** The first Region's bucket, named as the construct names a receiver's: prefix, account, Region. */
const BUCKET = 'retryproof-bodies-000000000000-local-1';

const KIB = 1024;
const MIB = 1024 * KIB;

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A compact JSON document of exactly `size` bytes: an event carrying a random base64 string. */
function documentOf(key: string, size: number): Buffer {
  const head = `{"type":"export.ready","id":"${key}","blob":"`;
  const tail = '"}';
  const room = size - head.length - tail.length;
  const blob = randomBytes(Math.ceil((room * 3) / 4) + 3).toString('base64').slice(0, room);
  const body = Buffer.from(`${head}${blob}${tail}`);
  if (body.length !== size) throw new Error(`documentOf: ${body.length} bytes, not ${size}`);
  return body;
}

describe('large payloads on the local stack (the S3 claim check)', () => {
  let work: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stack: StackProcess | undefined;
  let endpoints: LocalEndpoints;

  const runs = async (): Promise<Run[]> =>
    (await readFile(join(work, 'runs.log'), 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Run);

  /** Sends `body` signed as a Standard Webhooks sender would, under `key`; the same key and body sign the same. */
  const deliver = async (key: string, body: Buffer, nowSeconds: number): Promise<Response> => {
    const route = endpoints.routes.find((r) => r.name === 'large')!;
    const headers = { 'content-type': 'application/json', ...signDelivery(route.signature, route.secret, body, { nowSeconds, id: key }) };
    return fetch(`${endpoints.httpUrl}/webhooks/large`, { method: 'POST', headers, body });
  };

  const completed = (key: string): Promise<true> =>
    withLocalTarget(env, (target) =>
      until(`large/${key} to complete`, async () => ((await inspectDelivery(target, 'large', key)).record?.status === 'COMPLETED' ? true : undefined), 30_000),
    );

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'retryproof-large-'));
    dir = join(work, '.local');
    await writeFile(join(work, 'receiver.config.ts'), CONFIG);
    await writeFile(join(work, 'record-action.mjs'), ACTION);
    env = await stackEnv(dir);
    stack = await startStack(env, { cwd: work, args: ['--config', 'receiver.config.ts'] });
    endpoints = (await readEndpointsFile(dir))!;
  }, 120_000);

  afterAll(async () => {
    await shutDown(stack, dir);
    await rm(work, { recursive: true, force: true });
  }, 90_000);

  it('names the Region\'s bucket in endpoints.json, /_local/status and the banner', async () => {
    expect(endpoints.bodyBucket).toBe(BUCKET);
    expect(endpoints.regions?.[0]?.bodyBucket).toBe(BUCKET);
    expect(endpoints.s3Endpoint).toBe(endpoints.sqsEndpoint);
    const status = (await (await fetch(`${endpoints.httpUrl}/_local/status`)).json()) as { bodyBucket?: { name: string; objects: number } };
    expect(status.bodyBucket).toEqual({ name: BUCKET, objects: expect.any(Number) as number });
    expect(stack!.lines.some((l) => l.includes(`are kept in the bucket ${BUCKET} on fauxqs's S3`))).toBe(true);
  });

  it.each([
    ['200 KiB', 200 * KIB],
    ['1 MiB', MIB],
    ['4 MiB', 4 * MIB],
  ])('accepts a signed %s delivery, replays its copy, and runs its action once on the very bytes sent', async (size, bytes) => {
    // Prepare
    const key = `msg_${randomUUID()}`;
    const body = documentOf(key, bytes);
    const now = Math.floor(Date.now() / 1000);
    // Act: the delivery, then a copy of it, byte for byte.
    const first = await deliver(key, body, now);
    expect(first.status, await first.clone().text()).toBe(202);
    const copy = await deliver(key, body, now);
    await completed(key);
    // Assess
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(copy.status).toBe(202);
    expect(copy.headers.get('idempotent-replayed')).toBe('true');
    const mine = (await runs()).filter((r) => r.key === key);
    expect(mine).toHaveLength(1);
    const [run] = mine;
    console.log(`${size} (${bytes} bytes): sent sha256 ${sha256(body)}, the action got ${run?.length} bytes, sha256 ${run?.sha256} (via ctx.${run?.via})`);
    // One run of the action; its attempt number is not asserted: on a loaded machine an attempt may end before the action (a slow body read), and that is no run.
    expect(run).toMatchObject({ length: bytes, sha256: sha256(body) });
    // It travelled through the Region's bucket: the object its name gives holds it.
    const object = await withLocalTarget(env, (target) =>
      target.s3!.send(new HeadObjectCommand({ Bucket: BUCKET, Key: bodyObjectName('large', key, sha256(body)) })),
    );
    expect(object.ContentLength).toBe(bytes);
  }, 60_000);

  it('answers 413 naming the limit for a body one byte over MAX_BODY_BYTES, and accepts one at the limit', async () => {
    // Prepare
    const over = `msg_${randomUUID()}`;
    const at = `msg_${randomUUID()}`;
    const atBody = documentOf(at, MAX_BODY_BYTES);
    const now = Math.floor(Date.now() / 1000);
    // Act
    const refused = await deliver(over, documentOf(over, MAX_BODY_BYTES + 1), now);
    const accepted = await deliver(at, atBody, now);
    // Assess: the ingest's own 413, not the gateway's: the event fits Lambda's request.
    expect(refused.status).toBe(413);
    const problem = (await refused.json()) as { status: number; detail: string };
    expect(problem.status).toBe(413);
    expect(problem.detail).toContain(String(MAX_BODY_BYTES));
    expect(accepted.status, await accepted.clone().text()).toBe(202);
    await completed(at);
    const [run] = (await runs()).filter((r) => r.key === at);
    console.log(`MAX_BODY_BYTES (${MAX_BODY_BYTES} bytes): sent sha256 ${sha256(atBody)}, the action got ${run?.length} bytes, sha256 ${run?.sha256}`);
    expect(run).toMatchObject({ length: MAX_BODY_BYTES, sha256: sha256(atBody) });
    await withLocalTarget(env, async (target) => {
      expect((await inspectDelivery(target, 'large', over)).record).toBeNull();
    });
  }, 60_000);

  /** The delivery `inspect` reads, and reads again after a restart. */
  const inspected: { key: string; body: Buffer } = { key: `msg_${randomUUID()}`, body: Buffer.alloc(0) };

  /** Runs `retryproof --local inspect large <key> --with-body` and checks it shows `body` from the bucket. */
  const expectBodyFromBucket = async (key: string, body: Buffer): Promise<void> => {
    const shown = await runScript('cli/retryproof.ts', ['--local', 'inspect', 'large', key, '--with-body'], env);
    // The pointer, then the body's first 4 KiB between the marker lines (--json holds it whole).
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ {2}body {7}${body.length} bytes, in the receiver's bucket: s3://${BUCKET}/bodies/large/[0-9a-f]{64}/${sha256(body)}$`)));
    const start = lines.findIndex((l) => l === `----- body of large/${key} (${body.length} bytes, read from the bucket, shown as text) -----`);
    expect(start).toBeGreaterThan(-1);
    expect(lines[start + 1]).toBe(body.subarray(0, 4096).toString('utf8'));
    expect(lines[start + 2]).toBe(`----- body cut: the first 4096 of ${body.length} bytes shown; inspect large ${key} --with-body --json holds it whole -----`);
  };

  it('shows with `retryproof inspect --with-body` that the body is in the bucket, and prints it from there', async () => {
    // Prepare: one large delivery, run to its end.
    const { key } = inspected;
    const body = documentOf(key, 150 * KIB);
    inspected.body = body;
    expect((await deliver(key, body, Math.floor(Date.now() / 1000))).status).toBe(202);
    await completed(key);
    // Act, Assess
    await expectBodyFromBucket(key, body);
  }, 60_000);

  it('starts again on the same folder: its bucket is there, the bodies kept before are read back, and new ones go in', async () => {
    // Prepare: the stack stopped as a person stops it.
    expect(await stack!.stop('SIGINT')).toBe(0);
    stack = undefined;
    // Act
    stack = await startStack(env, { cwd: work, args: ['--config', 'receiver.config.ts'] });
    endpoints = (await readEndpointsFile(dir))!;
    // Assess: fauxqs kept the object in its data folder, as it keeps the queues.
    await expectBodyFromBucket(inspected.key, inspected.body);
    const key = `msg_${randomUUID()}`;
    const body = documentOf(key, 200 * KIB);
    expect((await deliver(key, body, Math.floor(Date.now() / 1000))).status).toBe(202);
    await completed(key);
    expect((await runs()).filter((r) => r.key === key)).toEqual([expect.objectContaining({ sha256: sha256(body) })]);
  }, 120_000);
});
