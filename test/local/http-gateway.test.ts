import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createGateway, GATEWAY_MAX_BODY_BYTES, lambdaRequestBytes, listen, webhookEventOf } from '../../local/http-gateway.ts';
import { LAMBDA_SYNC_REQUEST_BYTES, MAX_BODY_BYTES } from '../../lambdas/domain/body-object.ts';

describe('webhookEventOf', () => {
  it('builds an HTTP API v2 event with the real method, headers and raw body', () => {
    const body = Buffer.from('{"amount": 1, "note": "é"}');
    const event = webhookEventOf({
      method: 'POST',
      url: '/webhooks/demo?x=1&x=2',
      headers: { 'content-type': ['application/json'], 'webhook-id': ['msg_1'], 'x-multi': ['a', 'b'], cookie: ['a=1; b=2'] },
      body,
      sourceIp: '127.0.0.1',
    });
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /webhooks/{route}',
      rawPath: '/webhooks/demo',
      rawQueryString: 'x=1&x=2',
      queryStringParameters: { x: '1,2' },
      pathParameters: { route: 'demo' },
      cookies: ['a=1', 'b=2'],
      isBase64Encoded: false,
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'x-multi': 'a,b' },
      requestContext: { http: { method: 'POST', path: '/webhooks/demo', sourceIp: '127.0.0.1' } },
    });
    expect(Buffer.from(event?.body ?? '', 'utf8').equals(body)).toBe(true);
  });

  it('hands a binary body over base64-encoded, byte for byte', () => {
    const body = Buffer.from([0, 255, 1, 254]);
    const event = webhookEventOf({ method: 'POST', url: '/webhooks/bin', headers: { 'content-type': ['application/octet-stream'] }, body, sourceIp: '::1' });
    expect(event?.isBase64Encoded).toBe(true);
    expect(Buffer.from(event?.body ?? '', 'base64').equals(body)).toBe(true);
  });

  it('keeps query parameters named like Object.prototype members as plain parameters', () => {
    const event = webhookEventOf({ method: 'POST', url: '/webhooks/demo?toString=1&__proto__=2&toString=3', headers: {}, body: Buffer.alloc(0), sourceIp: '127.0.0.1' });
    expect(Object.entries(event?.queryStringParameters ?? {})).toEqual([['toString', '1,3'], ['__proto__', '2']]);
  });

  it('reads a path starting with "//" as a path, not as a host', () => {
    expect(webhookEventOf({ method: 'POST', url: '//x/webhooks/demo', headers: {}, body: Buffer.alloc(0), sourceIp: '127.0.0.1' })).toBeUndefined();
    expect(webhookEventOf({ method: 'POST', url: '//a:b', headers: {}, body: Buffer.alloc(0), sourceIp: '127.0.0.1' })).toBeUndefined();
  });

  it.each([
    ['GET', '/webhooks/demo'],
    ['POST', '/webhooks/demo/extra'],
    ['POST', '/webhooks/'],
    ['POST', '/other'],
  ])('has no event for %s %s: only POST /webhooks/{route} exists', (method, url) => {
    expect(webhookEventOf({ method, url, headers: {}, body: Buffer.alloc(0), sourceIp: '127.0.0.1' })).toBeUndefined();
  });
});

describe('the local gateway server', () => {
  const seen: APIGatewayProxyEventV2[] = [];
  let ready = false;
  let base = '';
  const server = createGateway({
    invoke: (event) => {
      seen.push(event);
      return Promise.resolve({ statusCode: 202, headers: { 'content-type': 'application/json', 'idempotent-replayed': 'true' }, body: '{"ok":true}' });
    },
    admin: new Map([['POST /_local/ping', (body: unknown) => Promise.resolve({ status: 200, body: { pong: body } })]]),
    isReady: () => ready,
  });
  beforeAll(async () => {
    await listen(server, 0);
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => { resolve(); })));

  it('answers 503 problem+json until the stack is ready', async () => {
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    ready = true;
  });

  it('passes the handler\'s answer through, headers included', async () => {
    ready = true;
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', headers: { 'webhook-id': 'k1' }, body: '{"a":1}' });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('idempotent-replayed')).toBe('true');
    expect(await answer.json()).toEqual({ ok: true });
    expect(seen.at(-1)?.headers['webhook-id']).toBe('k1');
    expect(seen.at(-1)?.body).toBe('{"a":1}');
  });

  it('answers every other path with a 404 problem+json, without calling the handler', async () => {
    const before = seen.length;
    for (const [method, path] of [['GET', '/webhooks/demo'], ['POST', '/'], ['POST', '/_local/nothing']] as const) {
      const answer = await fetch(`${base}${path}`, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
    }
    expect(seen.length).toBe(before);
  });

  it('hands a binary body of the receiver\'s whole limit to the function: its base64 event fits Lambda\'s 6 MB', async () => {
    // Prepare
    ready = true;
    const body = Buffer.alloc(MAX_BODY_BYTES, 0xab);
    // Act
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    // Assess
    expect(answer.status).toBe(202);
    const event = seen.at(-1);
    expect(event?.isBase64Encoded).toBe(true);
    expect(Buffer.from(event?.body ?? '', 'base64').equals(body)).toBe(true);
    expect(lambdaRequestBytes(event!)).toBeLessThanOrEqual(LAMBDA_SYNC_REQUEST_BYTES);
  });

  it('answers 413 itself, without calling the function, for a body whose event is over Lambda\'s 6 MB', async () => {
    // Prepare: under API Gateway's 10 MiB, but 5 MiB of binary is about 6.7 MB as base64.
    ready = true;
    const before = seen.length;
    const body = Buffer.alloc(5 * 1024 * 1024, 0xcd);
    // Act
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    // Assess
    expect(answer.status).toBe(413);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    const problem = (await answer.json()) as { status: number; title: string; detail: string };
    expect(problem).toMatchObject({ status: 413, title: 'Request Entity Too Large' });
    expect(problem.detail).toContain(String(LAMBDA_SYNC_REQUEST_BYTES));
    expect(seen.length).toBe(before);
  });

  it('answers 413 for a text body over Lambda\'s 6 MB once JSON-escaped, though its bytes are fewer', async () => {
    // Prepare: 3.5 MB of quotes, each escaped to two characters in the event.
    ready = true;
    const before = seen.length;
    // Act
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '"'.repeat(3_500_000) });
    // Assess
    expect(answer.status).toBe(413);
    expect(seen.length).toBe(before);
  });

  it('answers 413 for a body over API Gateway\'s 10 MiB, without calling the function', async () => {
    // Prepare
    ready = true;
    const before = seen.length;
    // Act
    const answer = await fetch(`${base}/webhooks/demo`, { method: 'POST', body: Buffer.alloc(GATEWAY_MAX_BODY_BYTES + 1, 0x20) });
    // Assess
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { detail: string }).detail).toContain(String(GATEWAY_MAX_BODY_BYTES));
    expect(seen.length).toBe(before);
  });

  it('runs the admin calls it knows, from loopback', async () => {
    const answer = await fetch(`${base}/_local/ping`, { method: 'POST', body: '{"n":1}' });
    expect(await answer.json()).toEqual({ pong: { n: 1 } });
  });
});
