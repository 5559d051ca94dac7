/**
 * A stand-in for the downstream orders API, for local runs and tests: `POST /orders` with an
 * `Idempotency-Key` header places an order, as a payment provider's API does. The same key
 * again gets the same order back and places nothing (`Idempotent-Replayed: true`); the same
 * key with another body is refused with 422. It counts the orders each key placed, which is
 * the number the whole of retryproof exists to keep at one.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeOrdersApiOptions {
  /** @default 0 - a free port, on 127.0.0.1 */
  readonly port?: number;
  /**
   * Called once an order is placed, before it is answered: what a test uses to make the
   * caller die after the effect. The answer waits for it. @default - nothing
   */
  readonly afterEffect?: (key: string) => void | Promise<void>;
  /** One line per order placed or replayed. @default - silent */
  readonly log?: (line: string) => void;
}

export interface FakeOrdersApi {
  /** The base URL: orders are POSTed to `${url}/orders`. */
  readonly url: string;
  /** Orders placed under the key: 0 or 1, whatever the number of requests. */
  effects(key: string): number;
  /** Requests that carried the key. */
  requests(key: string): number;
  /** Every order placed, by key. */
  orders(): ReadonlyMap<string, { readonly orderId: string; readonly body: unknown }>;
  close(): Promise<void>;
}

interface Placed {
  readonly orderId: string;
  readonly body: unknown;
  readonly bodyHash: string;
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the fake orders API on 127.0.0.1; resolves once it listens. */
export async function startFakeOrdersApi(options: FakeOrdersApiOptions = {}): Promise<FakeOrdersApi> {
  const placed = new Map<string, Placed>();
  const requestCounts = new Map<string, number>();
  const log = options.log ?? (() => undefined);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/orders') {
      answer(res, 404, { error: 'not found: POST /orders only' });
      return;
    }
    const key = req.headers['idempotency-key'];
    const text = await readBody(req);
    if (typeof key !== 'string' || key === '') {
      answer(res, 400, { error: 'the Idempotency-Key header is required' });
      return;
    }
    requestCounts.set(key, (requestCounts.get(key) ?? 0) + 1);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      answer(res, 400, { error: 'the body must be JSON' });
      return;
    }
    const bodyHash = createHash('sha256').update(text).digest('hex');
    const earlier = placed.get(key);
    if (earlier !== undefined) {
      if (earlier.bodyHash !== bodyHash) {
        answer(res, 422, { error: `Idempotency-Key ${key} was used with another body` });
        return;
      }
      log(`fake orders API: ${key} -> ${earlier.orderId} (replayed, no new order)`);
      answer(res, 200, { orderId: earlier.orderId }, { 'idempotent-replayed': 'true' });
      return;
    }
    // Recorded before anything is awaited: a second request under this key finds it.
    const order: Placed = { orderId: `ord_${String(placed.size + 1).padStart(4, '0')}`, body, bodyHash };
    placed.set(key, order);
    log(`fake orders API: ${key} -> ${order.orderId} (placed)`);
    await options.afterEffect?.(key);
    answer(res, 201, { orderId: order.orderId });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) answer(res, 500, { error: (error as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    effects: (key) => (placed.has(key) ? 1 : 0),
    requests: (key) => requestCounts.get(key) ?? 0,
    orders: () => new Map([...placed].map(([key, p]) => [key, { orderId: p.orderId, body: p.body }])),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
        server.closeAllConnections();
      }),
  };
}
