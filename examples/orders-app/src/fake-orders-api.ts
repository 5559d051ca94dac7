/**
 * A stand-in for the downstream orders API, for local runs and tests, behaving as a payment
 * provider's API does:
 *
 * - `POST /orders` with an `Idempotency-Key` header places an order. The same key again gets
 *   the same order back and places nothing (`Idempotent-Replayed: true`); the same key with
 *   another body is refused with 422.
 * - `POST /orders/<orderId>/cancel` cancels that order: 200 with `{"orderId", "status":
 *   "cancelled"}`, the same again for an order already cancelled, 404 for an order it never
 *   placed. This is what the orders ledger's `reverse` calls.
 *
 * It counts the orders each key placed and the ones still standing: the numbers the whole of
 * retryproof exists to keep at one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What a test makes the API do instead of answering a `POST /orders` normally: answer
 * `status` without placing anything (`placed: false`), or place the order and then answer
 * `status`, as an API whose answer is lost after it committed (`placed: true`).
 */
export interface FakeOrdersFault {
  readonly status: number;
  readonly placed: boolean;
}

export interface FakeOrdersApiOptions {
  /** @default 0 - a free port, on 127.0.0.1 */
  readonly port?: number;
  /**
   * Called once an order is placed, before it is answered: what a test uses to make the
   * caller die after the effect. The answer waits for it. @default - nothing
   */
  readonly afterEffect?: (key: string) => void | Promise<void>;
  /**
   * Asked before each `POST /orders`, with its key and the request's number under that key
   * (1 for the first): a fault to play, or undefined to answer normally. @default - none
   */
  readonly fault?: (key: string, request: number) => FakeOrdersFault | undefined;
  /** One line per order placed, replayed or cancelled. @default - silent */
  readonly log?: (line: string) => void;
}

/** One order the API placed. */
export interface FakeOrder {
  readonly orderId: string;
  /** The Idempotency-Key it was placed under. */
  readonly key: string;
  readonly body: unknown;
  readonly cancelled: boolean;
}

export interface FakeOrdersApi {
  /** The base URL: orders are POSTed to `${url}/orders`. */
  readonly url: string;
  /** Orders placed under the key, cancelled or not: 1 while the API remembers the key, whatever the number of requests. */
  effects(key: string): number;
  /** Orders placed under the key and not cancelled. */
  standing(key: string): number;
  /** `POST /orders` requests that carried the key. */
  requests(key: string): number;
  /** Every order placed, in order. */
  orders(): readonly FakeOrder[];
  /**
   * Forgets the key, as an API whose idempotency-key retention ran out: the next request
   * under it places a new order. The orders placed stay.
   */
  forget(key: string): void;
  close(): Promise<void>;
}

interface Placed {
  readonly orderId: string;
  readonly key: string;
  readonly body: unknown;
  readonly bodyHash: string;
  cancelled: boolean;
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

const CANCEL_PATH = /^\/orders\/([A-Za-z0-9_-]{1,64})\/cancel$/;

/** Starts the fake orders API on 127.0.0.1; resolves once it listens. */
export async function startFakeOrdersApi(options: FakeOrdersApiOptions = {}): Promise<FakeOrdersApi> {
  const all: Placed[] = [];
  /** The order each remembered key placed. */
  const byKey = new Map<string, Placed>();
  const byId = new Map<string, Placed>();
  const requestCounts = new Map<string, number>();
  const log = options.log ?? (() => undefined);

  const place = (key: string, body: unknown, bodyHash: string): Placed => {
    // Ids never repeat, not even across restarts of a local stack that keeps its ledger.
    const order: Placed = { orderId: `ord_${randomBytes(6).toString('hex')}`, key, body, bodyHash, cancelled: false };
    all.push(order);
    byKey.set(key, order);
    byId.set(order.orderId, order);
    log(`fake orders API: ${key} -> ${order.orderId} (placed)`);
    return order;
  };

  const cancel = (res: ServerResponse, orderId: string): void => {
    const order = byId.get(orderId);
    if (order === undefined) {
      answer(res, 404, { error: `no order ${orderId}` });
      return;
    }
    if (!order.cancelled) log(`fake orders API: ${order.key} -> ${orderId} (cancelled)`);
    order.cancelled = true;
    answer(res, 200, { orderId, status: 'cancelled' });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    const cancelling = req.method === 'POST' ? CANCEL_PATH.exec(req.url ?? '') : null;
    if (cancelling !== null) {
      cancel(res, cancelling[1] ?? '');
      return;
    }
    if (req.method !== 'POST' || req.url !== '/orders') {
      answer(res, 404, { error: 'not found: POST /orders and POST /orders/<orderId>/cancel only' });
      return;
    }
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key === '') {
      answer(res, 400, { error: 'the Idempotency-Key header is required' });
      return;
    }
    const request = (requestCounts.get(key) ?? 0) + 1;
    requestCounts.set(key, request);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      answer(res, 400, { error: 'the body must be JSON' });
      return;
    }
    const bodyHash = createHash('sha256').update(text).digest('hex');
    const fault = options.fault?.(key, request);
    if (fault !== undefined && !fault.placed) {
      answer(res, fault.status, { error: `fault on request ${request}, nothing placed` });
      return;
    }
    const earlier = byKey.get(key);
    if (earlier !== undefined) {
      if (earlier.bodyHash !== bodyHash) {
        answer(res, 422, { error: `Idempotency-Key ${key} was used with another body` });
        return;
      }
      log(`fake orders API: ${key} -> ${earlier.orderId} (replayed, no new order)`);
      if (fault !== undefined) answer(res, fault.status, { error: `fault on request ${request}, after the order` });
      else answer(res, 200, { orderId: earlier.orderId }, { 'idempotent-replayed': 'true' });
      return;
    }
    // Placed before anything is awaited: a second request under this key finds it.
    const order = place(key, body, bodyHash);
    await options.afterEffect?.(key);
    if (fault !== undefined) answer(res, fault.status, { error: `fault on request ${request}, after the order` });
    else answer(res, 201, { orderId: order.orderId });
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
  const ofKey = (key: string): Placed[] => all.filter((o) => o.key === key);

  return {
    url: `http://127.0.0.1:${port}`,
    effects: (key) => ofKey(key).length,
    standing: (key) => ofKey(key).filter((o) => !o.cancelled).length,
    requests: (key) => requestCounts.get(key) ?? 0,
    orders: () => all.map(({ orderId, key, body, cancelled }) => ({ orderId, key, body, cancelled })),
    forget: (key) => {
      byKey.delete(key);
    },
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
