import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../lambdas/domain/signatures/create-verifier.ts';
import {
  localRegionIn,
  localRegionsIn,
  readEndpointsFile,
  readRunningEndpoints,
  removeEndpoints,
  StackNotRunningError,
  UnknownRegionError,
  writeEndpoints,
} from '../../local/endpoints-file.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { deliveryLine, executionLine } from '../../local/log-lines.ts';
import { LOCAL_DEMO_SECRET } from '../../local/local-settings.ts';
import { newKey, sampleBody, signSample, webhookUrl } from '../../local/sample-delivery.ts';

describe('endpoints.json', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryproof-endpoints-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const endpoints = (pid: number): LocalEndpoints =>
    ({ version: 1, pid, httpUrl: 'http://127.0.0.1:3000', eventsTable: 'retryproof-events' }) as LocalEndpoints;

  it('is written for its owner only, read back while the writer lives, and removed by it', async () => {
    await writeEndpoints(dir, endpoints(process.pid));
    expect(((await stat(join(dir, 'endpoints.json'))).mode & 0o777).toString(8)).toBe('600');
    expect((await readRunningEndpoints(dir)).pid).toBe(process.pid);
    await removeEndpoints(dir, process.pid + 1);
    expect(await readEndpointsFile(dir)).toBeDefined();
    await removeEndpoints(dir);
    expect(await readEndpointsFile(dir)).toBeUndefined();
  });

  it('belongs to a stopped stack when its pid is gone', async () => {
    await writeEndpoints(dir, endpoints(2 ** 22 + 4321));
    await expect(readRunningEndpoints(dir)).rejects.toThrow(StackNotRunningError);
    await removeEndpoints(dir, 2 ** 22 + 4321);
  });
});

describe('the Regions of endpoints.json', () => {
  const queues = (name: string) => ({
    queueUrl: `http://q/${name}`,
    dlqUrl: `http://q/${name}-dlq`,
    queueArn: `arn:q:${name}`,
    dlqArn: `arn:q:${name}-dlq`,
  });
  const old = { version: 1, pid: 1, httpUrl: 'http://127.0.0.1:3000', eventsTable: 'retryproof-events', ...queues('retryproof-work') } as LocalEndpoints;
  const two = {
    ...old,
    regions: [
      { name: 'local-1', httpUrl: 'http://127.0.0.1:3000', adminUrl: 'http://127.0.0.1:3000', ...queues('retryproof-work') },
      { name: 'local-2', httpUrl: 'http://127.0.0.1:3001', adminUrl: 'http://127.0.0.1:3001', ...queues('retryproof-work-local-2') },
    ],
  } as LocalEndpoints;

  it('reads a file written before Regions as its one Region, local-1, from the top-level fields', () => {
    expect(localRegionsIn(old)).toEqual([{ name: 'local-1', httpUrl: 'http://127.0.0.1:3000', adminUrl: 'http://127.0.0.1:3000', ...queues('retryproof-work') }]);
  });

  it('picks the first Region without a name, the named one with it', () => {
    expect(localRegionIn(two).name).toBe('local-1');
    expect(localRegionIn(two, 'local-2').queueUrl).toBe('http://q/retryproof-work-local-2');
  });

  it('refuses a Region it does not run, listing those it runs', () => {
    const act = () => localRegionIn(two, 'local-3');
    expect(act).toThrow(UnknownRegionError);
    expect(act).toThrow('the local stack has no region "local-3"; its regions: local-1, local-2');
  });
});

describe('sample deliveries', () => {
  it('are signed as the route\'s sender signs, and verify with the receiver\'s own verifier', () => {
    const route = { name: 'demo', signature: { scheme: 'standard-webhooks' as const } };
    const key = newKey(route);
    const body = sampleBody(route, key, { amount: 5 });
    const now = Math.floor(Date.now() / 1000);
    const signed = signSample(route, LOCAL_DEMO_SECRET, key, body, now);
    expect(signed.headers['webhook-id']).toBe(key);
    const verdict = createVerifier(route.signature).verify({ headers: signed.headers, rawBody: Buffer.from(signed.body), nowSeconds: now }, [LOCAL_DEMO_SECRET]);
    expect(verdict.ok).toBe(true);
  });

  it('put a Stripe key in the body, where Stripe keeps its event id', () => {
    const route = { name: 'stripe', signature: { scheme: 'stripe' as const } };
    expect(JSON.parse(sampleBody(route, 'evt_1', { amount: 1 }))).toMatchObject({ id: 'evt_1', object: 'event', amount: 1 });
  });

  it.each([
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/webhooks/demo'],
    ['https://x.execute-api.eu-west-1.amazonaws.com/webhooks/', 'https://x.execute-api.eu-west-1.amazonaws.com/webhooks/demo'],
    ['https://x.example/prod/webhooks/demo', 'https://x.example/prod/webhooks/demo'],
  ])('find the webhook URL from %s', (base, url) => {
    expect(webhookUrl(base, 'demo')).toBe(url);
  });
});

describe('log lines', () => {
  it('name route, key and outcome, never a body', () => {
    expect(deliveryLine({ route: 'demo', id: 'demo/k1', status: 202, replayed: true, ms: 3.4 }, 0)).toBe('00:00:00.000 in   demo/k1  202 replayed  3 ms');
    expect(
      executionLine({ message: 'execution', route: 'demo', key: 'k1', attempt: 3, outcome: 'retries-exhausted', deadLetterReason: 'retries exhausted after 3 attempts', body: 'secret' }, 0),
    ).toBe('00:00:00.000 exec demo/k1  attempt 3 retries-exhausted  -> DLQ (retries exhausted after 3 attempts)');
    expect(executionLine({ message: 'something else' })).toBeUndefined();
  });
});
