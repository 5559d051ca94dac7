/**
 * Standard Webhooks v1a (ed25519) at the edge: the route holds the sender's `whpk_` public
 * key (and, mid-rotation, its `whsec_` v1 secret), the sender signs with its `whsk_` key.
 */
import { describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../lambdas/config/route-config.ts';
import { signStandardWebhooks } from '../../lambdas/domain/signatures/standard-webhooks.ts';
import { generateStandardWebhooksKeyPair } from '../../lambdas/domain/signatures/standard-webhooks-keys.ts';
import { StaticSecretSource } from '../../local/static-secret-source.ts';
import { ingestFixture, STANDARD_SECRET } from '../support/ingest-fixture.ts';
import type { Delivery } from '../support/ingest-fixture.ts';

const ROUTE: RouteConfig = {
  name: 'v1a',
  signature: { scheme: 'standard-webhooks' },
  secretName: 'test/v1a',
  action: 'payout',
  actionTimeSeconds: 5,
};

/** A delivery whose webhook-signature carries one entry per signing key, space-separated. */
function signed(id: string, signingKeys: readonly string[], body = JSON.stringify({ amount: 10 })): Delivery {
  const now = Math.floor(Date.now() / 1000);
  return {
    route: ROUTE.name,
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(now),
      'webhook-signature': signingKeys.map((k) => signStandardWebhooks(k, id, now, Buffer.from(body))).join(' '),
    },
  };
}

describe('a Standard Webhooks route holding a v1a public key', () => {
  const sender = generateStandardWebhooksKeyPair();
  const stranger = generateStandardWebhooksKeyPair();
  const fixture = (receiverSecret: string) =>
    ingestFixture({ routes: [ROUTE], secrets: new StaticSecretSource({ [ROUTE.secretName]: receiverSecret }) });

  it('accepts a delivery signed with the sender’s whsk_ key, and answers 401 to a forged or wrong-key signature', async () => {
    // Prepare
    const fx = await fixture(sender.publicKey);
    const id = `msg_${Date.now()}`;
    const genuine = signed(id, [sender.signingKey]);
    // Act
    const wrongKey = await fx.invoke(signed(`${id}-w`, [stranger.signingKey]));
    const forged = await fx.invoke({ ...genuine, body: genuine.body.replace('10', '99') });
    const accepted = await fx.invoke(genuine);
    // Assess
    expect(wrongKey.statusCode).toBe(401);
    expect(forged.statusCode).toBe(401);
    expect(accepted.statusCode).toBe(202);
    expect(JSON.parse(accepted.body ?? '{}')).toEqual({ id: `v1a/${id}`, status: 'accepted' });
  });

  it('accepts a header with both a v1 and a v1a entry on either secret alone, and during a rotation between them', async () => {
    // Prepare: three receivers: v1 only, v1a only, and mid-rotation holding both.
    const v1Only = await fixture(STANDARD_SECRET);
    const v1aOnly = await fixture(sender.publicKey);
    const rotating = await fixture(JSON.stringify({ current: sender.publicKey, previous: STANDARD_SECRET }));
    const both = (id: string) => signed(id, [STANDARD_SECRET, sender.signingKey]);
    // Act
    const answers = [
      await v1Only.invoke(both(`msg_v1_${Date.now()}`)),
      await v1aOnly.invoke(both(`msg_v1a_${Date.now()}`)),
      await rotating.invoke(signed(`msg_rot_v1_${Date.now()}`, [STANDARD_SECRET])),
      await rotating.invoke(signed(`msg_rot_v1a_${Date.now()}`, [sender.signingKey])),
    ];
    // Assess
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202]);
  });
});
