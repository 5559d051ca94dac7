/** Signed Standard Webhooks deliveries, built before the clock starts so signing is never timed. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { signDelivery } from '../lambdas/domain/signatures/sign-delivery.ts';
import { httpApiEvent } from '../local/http-api-event.ts';
import { BENCH_ROUTE } from './receivers/receiver.ts';

/** The signing secret of the bench route: `whsec_` and 32 bytes in base64. */
export const BENCH_SECRET = `whsec_${Buffer.from('retryproof-bench-signing-secret!').toString('base64')}`;

/** A JSON payout event of about `bytes` bytes for `key`. */
export function payloadOf(key: string, bytes: number): string {
  const base = { type: 'payout.requested', id: key, data: { order_id: `ord_${key}`, amount: 1250, currency: 'EUR', note: '' } };
  const room = Math.max(0, bytes - JSON.stringify(base).length);
  return JSON.stringify({ ...base, data: { ...base.data, note: 'x'.repeat(room) } });
}

/** An HTTP API event for `POST /webhooks/orders`, signed as a Standard Webhooks sender signs it now. */
export function signedEvent(key: string, body: string): APIGatewayProxyEventV2 {
  const headers = signDelivery({ scheme: 'standard-webhooks' }, BENCH_SECRET, Buffer.from(body), {
    nowSeconds: Math.floor(Date.now() / 1000),
    id: key,
  });
  return httpApiEvent({ route: BENCH_ROUTE.name, body, headers });
}

/** A small seeded generator (mulberry32), so a run's duplicate pattern and jitter repeat. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
