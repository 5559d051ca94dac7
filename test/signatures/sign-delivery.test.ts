import { describe, expect, it } from 'vitest';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { BODY, NOW, whsec } from './deliveries.ts';

describe('signDelivery', () => {
  it('adds exactly the signature headers of each scheme, named in lowercase', () => {
    expect(Object.keys(signDelivery({ scheme: 'standard-webhooks' }, whsec(1), BODY, { nowSeconds: NOW })).sort()).toEqual([
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    expect(Object.keys(signDelivery({ scheme: 'stripe' }, 's', BODY, { nowSeconds: NOW }))).toEqual(['stripe-signature']);
    expect(Object.keys(signDelivery({ scheme: 'github' }, 's', BODY, { nowSeconds: NOW }))).toEqual(['x-hub-signature-256']);
    expect(Object.keys(signDelivery({ scheme: 'shopify' }, 's', BODY, { nowSeconds: NOW }))).toEqual(['x-shopify-hmac-sha256']);
    expect(Object.keys(signDelivery({ scheme: 'slack' }, 's', BODY, { nowSeconds: NOW })).sort()).toEqual([
      'x-slack-request-timestamp',
      'x-slack-signature',
    ]);
    expect(Object.keys(signDelivery({ scheme: 'hmac-sha256', header: 'X-Sig' }, 's', BODY, { nowSeconds: NOW }))).toEqual(['x-sig']);
  });

  it('uses the given id as webhook-id, so retries of one message share a key', () => {
    const first = signDelivery({ scheme: 'standard-webhooks' }, whsec(1), BODY, { nowSeconds: NOW, id: 'msg_order_17' });
    const retry = signDelivery({ scheme: 'standard-webhooks' }, whsec(1), BODY, { nowSeconds: NOW + 5, id: 'msg_order_17' });
    expect(first['webhook-id']).toBe('msg_order_17');
    expect(retry['webhook-id']).toBe('msg_order_17');
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('mints a fresh msg_ id when none is given', () => {
    const a = signDelivery({ scheme: 'standard-webhooks' }, whsec(1), BODY, { nowSeconds: NOW });
    const b = signDelivery({ scheme: 'standard-webhooks' }, whsec(1), BODY, { nowSeconds: NOW });
    expect(a['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(a['webhook-id']).not.toBe(b['webhook-id']);
  });

  it('stamps the given clock on timestamped schemes', () => {
    expect(signDelivery({ scheme: 'slack' }, 's', BODY, { nowSeconds: NOW })['x-slack-request-timestamp']).toBe(String(NOW));
    expect(signDelivery({ scheme: 'stripe' }, 's', BODY, { nowSeconds: NOW })['stripe-signature']).toMatch(new RegExp(`^t=${NOW},v1=[0-9a-f]{64}$`));
  });
});
