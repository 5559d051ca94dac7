/** The local stack's line for a 401 says which header or check failed; the sender still gets a bare 401. */
import { describe, expect, it } from 'vitest';
import { deliveryLine, unauthorizedDetail } from '../../local/log-lines.ts';

describe('unauthorizedDetail', () => {
  it('names the headers the route\'s scheme needs when one is missing', () => {
    expect(unauthorizedDetail('missing-signature', { scheme: 'standard-webhooks' })).toBe(
      'missing-signature: standard-webhooks needs the headers webhook-id, webhook-timestamp, webhook-signature',
    );
    expect(unauthorizedDetail('missing-signature', { scheme: 'stripe' })).toBe('missing-signature: stripe needs the header stripe-signature');
    expect(unauthorizedDetail('missing-signature', { scheme: 'github' })).toBe('missing-signature: github needs the header x-hub-signature-256');
    expect(unauthorizedDetail('missing-signature', { scheme: 'shopify' })).toBe('missing-signature: shopify needs the header x-shopify-hmac-sha256');
    expect(unauthorizedDetail('missing-signature', { scheme: 'slack' })).toBe(
      'missing-signature: slack needs the headers x-slack-request-timestamp, x-slack-signature',
    );
    expect(unauthorizedDetail('missing-signature', { scheme: 'hmac-sha256', header: 'X-Signature' })).toBe('missing-signature: hmac-sha256 needs the header x-signature');
  });

  it('says which check failed: the format, the digest, or the clock', () => {
    expect(unauthorizedDetail('malformed-signature', { scheme: 'hmac-sha256', header: 'x-sig', prefix: 'sha256=' })).toBe(
      'malformed-signature: x-sig not in the hmac-sha256 format (sha256=<hex digest>)',
    );
    expect(unauthorizedDetail('bad-signature', { scheme: 'standard-webhooks' })).toBe(
      "bad-signature: webhook-signature does not match the body under the route's secret",
    );
    expect(unauthorizedDetail('stale-timestamp', { scheme: 'standard-webhooks', toleranceSeconds: 60 })).toBe(
      'stale-timestamp: webhook-timestamp is more than 60 s from this clock',
    );
    expect(unauthorizedDetail('stale-timestamp', { scheme: 'stripe' })).toBe('stale-timestamp: stripe-signature t= is more than 300 s from this clock');
  });

  it('passes an unknown reason or route through as it is', () => {
    expect(unauthorizedDetail('secret-unavailable', { scheme: 'github' })).toBe('secret-unavailable');
    expect(unauthorizedDetail('bad-signature', undefined)).toBe('bad-signature');
  });

  it('puts the detail on the delivery line, after the title', () => {
    const line = deliveryLine({ route: 'demo', id: undefined, status: 401, replayed: false, ms: 2.4, title: 'Unauthorized', detail: 'bad-signature: x' }, Date.UTC(2026, 0, 1, 12));
    expect(line).toBe('12:00:00.000 in   demo/-  401 Unauthorized (bad-signature: x)  2 ms');
  });
});
