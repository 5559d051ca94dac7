/**
 * The local API Gateway: an HTTP server on 127.0.0.1 that turns `POST /webhooks/{route}`
 * into an HTTP API (payload format 2.0) event for the real ingest handler, with the real
 * headers, method and raw body bytes. Every other path gets a 404 problem+json, as the
 * deployed HTTP API has no other route. `/_local/...` holds the local stack's own admin
 * calls; the server listens on loopback only and refuses them from anywhere else.
 *
 * Large requests meet two limits, as deployed: API Gateway's payload quota (10 MB), then Lambda's
 * synchronous request limit (6 MB for the whole event, the body JSON-escaped or base64-encoded in
 * it). A body between the receiver's own limit (MAX_BODY_BYTES) and Lambda's reaches the ingest,
 * which answers 413 naming its limit; one whose event is over Lambda's never reaches it.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { PROBLEM_CONTENT_TYPE } from '../lambdas/edge/problem-json.ts';
import { LAMBDA_SYNC_REQUEST_BYTES, MAX_BODY_BYTES } from '../lambdas/domain/body-object.ts';

/**
 * API Gateway's own payload limit: "Payload size: 10 MB", not adjustable (API Gateway Developer
 * Guide, "Quotas for configuring and running an HTTP API"). The service counts it in MiB: over it,
 * it answers 413 "HTTP content length exceeded 10485760 bytes." itself (measured and quoted in
 * koki-develop/lgtm-generator#10, 2021). The ingest applies each route's smaller limit.
 */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * The bytes of the request Lambda gets for an event: the event as JSON, which is what API Gateway
 * sends to Invoke ("the JSON that you want to provide to your Lambda function as input", Lambda
 * API Reference, Invoke, Payload).
 */
export function lambdaRequestBytes(event: APIGatewayProxyEventV2): number {
  return Buffer.byteLength(JSON.stringify(event), 'utf8');
}

const ROUTE_KEY = 'POST /webhooks/{route}';
const WEBHOOK_PATH = /^\/webhooks\/([^/]+)$/;

/** Content types API Gateway hands over as text; anything else arrives base64-encoded. */
export function isTextual(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === '') return true;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/x-www-form-urlencoded' ||
    type === 'application/javascript'
  );
}

export interface RawRequest {
  readonly method: string;
  /** Path and query, as on the request line. */
  readonly url: string;
  /** Lowercase names; repeated headers as several values. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: Buffer;
  readonly sourceIp: string;
  readonly receivedAt?: number;
}

/**
 * The URL of a request target. An origin-form target ("/a/b?q") is a path even when it
 * starts with "//" ("//host:port/..." is not an authority there); only an absolute-form
 * target ("http://host/a") names a host. Undefined for a target that is neither.
 */
function targetUrl(target: string): URL | undefined {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target);
  } catch {
    return undefined;
  }
}

/**
 * The HTTP API v2 event for a request on `POST /webhooks/{route}`, or undefined when
 * the request does not match that route (API Gateway answers those itself).
 */
export function webhookEventOf(request: RawRequest): APIGatewayProxyEventV2 | undefined {
  const url = targetUrl(request.url);
  if (url === undefined) return undefined;
  const match = WEBHOOK_PATH.exec(url.pathname);
  if (request.method !== 'POST' || match?.[1] === undefined) return undefined;
  let route: string;
  try {
    route = decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, values] of Object.entries(request.headers)) {
    if (name === 'cookie') cookies = values.flatMap((v) => v.split(';').map((c) => c.trim())).filter((c) => c !== '');
    // API Gateway joins a repeated header's values with commas.
    else headers[name] = values.join(',');
  }
  // A Map, not an object: names such as `toString` or `__proto__` are parameters like any other.
  const joined = new Map<string, string>();
  for (const [name, value] of url.searchParams) joined.set(name, joined.has(name) ? `${joined.get(name) ?? ''},${value}` : value);
  const query: Record<string, string> = Object.fromEntries(joined);
  const base64 = !isTextual(headers['content-type']);
  const at = request.receivedAt ?? Date.now();
  return {
    version: '2.0',
    routeKey: ROUTE_KEY,
    rawPath: url.pathname,
    rawQueryString: url.search.startsWith('?') ? url.search.slice(1) : '',
    ...(cookies === undefined ? {} : { cookies }),
    headers,
    ...(Object.keys(query).length === 0 ? {} : { queryStringParameters: query }),
    pathParameters: { route },
    isBase64Encoded: base64,
    ...(request.body.length === 0 ? {} : { body: base64 ? request.body.toString('base64') : request.body.toString('utf8') }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: ROUTE_KEY,
      stage: '$default',
      time: new Date(at).toISOString(),
      timeEpoch: at,
    },
  };
}

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

export type AdminHandler = (body: unknown) => Promise<AdminAnswer>;

export interface GatewayOptions {
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
  /** By `METHOD /path`, for example `POST /_local/reconcile`. */
  readonly admin: ReadonlyMap<string, AdminHandler>;
  /** Until the stack is ready, deliveries get 503 (the sender retries). */
  readonly isReady: () => boolean;
  /** Called after each webhook answer, for the log line. */
  readonly onAnswer?: (event: APIGatewayProxyEventV2, answer: APIGatewayProxyStructuredResultV2, ms: number) => void;
  readonly onError?: (error: unknown) => void;
}

function problem(res: ServerResponse, status: number, title: string, detail: string, instance?: string): void {
  res.writeHead(status, { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store' });
  res.end(JSON.stringify({ type: 'about:blank', title, status, detail, ...(instance === undefined ? {} : { instance }) }));
}

/** A problem+json answer in the form a Lambda returns one, for the delivery lines. */
function problemAnswer(status: number, title: string, detail: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store' },
    body: JSON.stringify({ type: 'about:blank', title, status, detail }),
  };
}

/** Writes a function's answer as API Gateway does: its status, headers, cookies and body. */
function send(res: ServerResponse, answer: APIGatewayProxyStructuredResultV2): void {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name] = String(value);
  if (answer.cookies !== undefined && answer.cookies.length > 0) res.setHeader('set-cookie', answer.cookies);
  const text = answer.body ?? '';
  res.writeHead(answer.statusCode ?? 200, headers);
  res.end(answer.isBase64Encoded === true ? Buffer.from(text, 'base64') : text);
}

/**
 * A whole problem+json answer as raw bytes, for a socket the HTTP server no longer answers
 * through: a request its parser refused, or a CONNECT. Node would otherwise answer a bare
 * 400 or 431 without a body, or drop the connection without a word.
 */
function rawProblem(socket: Duplex, status: number, title: string, detail: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: ${PROBLEM_CONTENT_TYPE}\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

/**
 * The body, or undefined when it is over `limit`. An oversized body is still read to its
 * end, only not kept: leaving the loop early would destroy the request mid-body, and the
 * sender, still writing, would get a reset (or wait forever) instead of the 413.
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size <= limit) chunks.push(buf);
  }
  return size > limit ? undefined : Buffer.concat(chunks);
}

/** The server, not yet listening. */
export function createGateway(options: GatewayOptions): Server {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const path = targetUrl(req.url ?? '/')?.pathname ?? req.url ?? '/';
    const body = await readBody(req, GATEWAY_MAX_BODY_BYTES);
    if (body === undefined) {
      problem(res, 413, 'Request Entity Too Large', `The body is over the ${GATEWAY_MAX_BODY_BYTES} bytes API Gateway takes (its 10 MB payload quota).`);
      return;
    }
    if (path.startsWith('/_local/')) {
      const admin = options.admin.get(`${method} ${path}`);
      if (admin === undefined || !isLoopback(req.socket.remoteAddress)) {
        problem(res, 404, 'Not Found', `No local admin call ${method} ${path}.`);
        return;
      }
      let parsed: unknown;
      try {
        parsed = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
      } catch {
        problem(res, 400, 'Bad Request', 'The body of an admin call is JSON.');
        return;
      }
      const answer = await admin(parsed);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(answer.body)}\n`);
      return;
    }
    const event = webhookEventOf({
      method,
      url: req.url ?? '/',
      headers: req.headersDistinct as Record<string, string[]>,
      body,
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    });
    if (event === undefined) {
      problem(res, 404, 'Not Found', 'Webhooks are delivered with POST /webhooks/{route}.', path);
      return;
    }
    if (!options.isReady()) {
      problem(res, 503, 'Service Unavailable', 'The local stack is starting; retry shortly.');
      return;
    }
    const eventBytes = lambdaRequestBytes(event);
    if (eventBytes > LAMBDA_SYNC_REQUEST_BYTES) {
      // Lambda refuses an invocation whose request is over 6 MB ("6 MB each for request and response
      // (synchronous)", Lambda Developer Guide, "Lambda quotas") with RequestTooLargeException, HTTP
      // 413 ("The request payload exceeded the Invoke request body JSON input quota", Lambda API
      // Reference, Invoke, Errors), and the function never runs. The API Gateway guide names no answer
      // of its own for that case that we found: its troubleshooting page says only that an API whose Lambda
      // integration fails answers 500 {"message":"Internal Server Error"}, the cause in
      // $context.integrationErrorMessage ("Troubleshooting issues with HTTP API Lambda
      // integrations"). The service was measured passing Lambda's 413 on, as 413 {"message": "Request
      // Too Long"} (koki-develop/lgtm-generator#10, 2021, a REST API in front of Lambda). Here: 413,
      // as that measurement and Lambda's own status say, in the problem+json every other refusal of
      // this gateway has. A sender retries it as it would the 500, and no retry can succeed.
      const answer = problemAnswer(
        413,
        'Request Entity Too Large',
        `The invocation event would be ${eventBytes} bytes, over Lambda's ${LAMBDA_SYNC_REQUEST_BYTES} for a synchronous request: ` +
          `API Gateway's call to the function is refused, and the function never runs (a text body travels JSON-escaped in the event, ` +
          `a binary one base64-encoded; a binary body of at most ${MAX_BODY_BYTES} bytes always fits).`,
      );
      send(res, answer);
      options.onAnswer?.(event, answer, performance.now() - started);
      return;
    }
    const answer = await options.invoke(event);
    send(res, answer);
    options.onAnswer?.(event, answer, performance.now() - started);
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      options.onError?.(err);
      if (!res.headersSent) problem(res, 500, 'Internal Server Error', 'The local gateway failed; see the stack output.');
      else res.destroy();
    });
  };
  const server = createServer({ keepAliveTimeout: 5_000 }, onRequest);
  // An `Expect` other than 100-continue would get Node's bare 417; the delivery is handled
  // as if it had none, which HTTP allows (RFC 9110, 10.1.1) and keeps every answer documented.
  server.on('checkExpectation', onRequest);
  // A request the parser refuses is the sender's error: a 400, as API Gateway's front door
  // answers one it cannot read, with a problem body like every other refusal.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const detail =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request line and headers are over the gateway\'s size limit.'
        : 'The request could not be read as HTTP/1.1 (a malformed request line, method or header).';
    rawProblem(socket, 400, 'Bad Request', detail);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    rawProblem(socket, 404, 'Not Found', 'Webhooks are delivered with POST /webhooks/{route}.');
  });
  return server;
}

/**
 * Listens on 127.0.0.1:port.
 * @throws Error with code EADDRINUSE when the port is taken
 */
export function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(err);
    };
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}
