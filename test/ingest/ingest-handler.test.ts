import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { keyIsBodyHash } from '../../lambdas/domain/idempotency-key.ts';
import { ingestFixture, previousSecretOf, recordKeyOf, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import type { Delivery, IngestFixture } from '../support/ingest-fixture.ts';

const TIMESTAMPED = ['standard-webhooks', 'stripe', 'slack'];
/** Routes keyed on the body's hash: no key can be missing or reused with another body. */
const BODY_HASH_ROUTES = new Set(SCHEME_ROUTES.filter((r) => keyIsBodyHash(r.signature.scheme, r.key)).map((r) => r.name));

function json(body: string | undefined): Record<string, unknown> {
  return JSON.parse(body ?? 'null') as Record<string, unknown>;
}

/**
 * A signed delivery without its key. Standard Webhooks signs the webhook-id itself, so a
 * missing id is a signature failure (401); the missing-key case a signed sender can
 * produce there is an id that is no valid key (over 255 characters).
 */
function withoutKey(route: string, key: string): Delivery {
  return route === 'standard-webhooks' ? signedDelivery(route, 'k'.repeat(256)) : signedDelivery(route, key, { omitKey: true });
}

describe.each(SCHEME_ROUTES.map((r) => r.name))('the ingest handler on a %s route', (route) => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await ingestFixture();
  });

  it('answers 202 to a valid delivery and queues exactly one message', async () => {
    // Prepare
    const key = uniqueKey(route);
    const before = await fx.messagesInQueue();
    // Act
    const delivery = signedDelivery(route, key);
    const answer = await fx.invoke(delivery);
    // Assess
    expect(answer.statusCode).toBe(202);
    expect(json(answer.body)).toEqual({ id: `${route}/${recordKeyOf(delivery, key)}`, status: 'accepted' });
    expect(await fx.messagesInQueue()).toBe(before + 1);
  });

  it('replays the original answer to a duplicate, with Idempotent-Replayed, and queues nothing more', async () => {
    const delivery = signedDelivery(route, uniqueKey(route));
    const first = await fx.invoke(delivery);
    const before = await fx.messagesInQueue();
    const second = await fx.invoke(delivery);
    expect(second.statusCode).toBe(first.statusCode);
    expect(second.body).toBe(first.body);
    expect(second.headers?.['idempotent-replayed']).toBe('true');
    expect(first.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await fx.messagesInQueue()).toBe(before);
  });


  it('answers 401 to a tampered body', async () => {
    const delivery = signedDelivery(route, uniqueKey(route), { payload: { amount: 100 } });
    const answer = await fx.invoke({ ...delivery, body: delivery.body.replace('100', '900') });
    expect(answer.statusCode).toBe(401);
    expect(json(answer.body)).toMatchObject({ status: 401, detail: 'The request signature could not be verified.' });
  });

  it('answers 401 to a delivery signed with a wrong secret', async () => {
    const wrong = route === 'standard-webhooks' ? `whsec_${Buffer.from('a-wrong-secret-of-32-bytes-long!').toString('base64')}` : 'wrong';
    const answer = await fx.invoke(signedDelivery(route, uniqueKey(route), { secret: wrong }));
    expect(answer.statusCode).toBe(401);
  });


  it('answers 404 to an unknown route', async () => {
    const answer = await fx.invoke({ ...signedDelivery(route, uniqueKey(route)), route: `${route}-nope` });
    expect(answer.statusCode).toBe(404);
    expect(answer.headers?.['content-type']).toBe('application/problem+json');
  });

  it('answers 413 to a body over the route limit', async () => {
    const answer = await fx.invoke(signedDelivery(route, uniqueKey(route), { payload: { pad: 'x'.repeat(130 * 1024) } }));
    expect(answer.statusCode).toBe(413);
    expect(json(answer.body).detail).toMatch(/at most 131072/);
  });

  it('accepts a delivery signed with the previous secret during a rotation', async () => {
    const answer = await fx.invoke(signedDelivery(route, uniqueKey(route), { secret: previousSecretOf(route) }));
    expect(answer.statusCode).toBe(202);
  });
});

describe.each(SCHEME_ROUTES.filter((r) => !BODY_HASH_ROUTES.has(r.name)).map((r) => r.name))(
  'the ingest handler on a %s route, whose key the sender names',
  (route) => {
    let fx: IngestFixture;
    beforeAll(async () => {
      fx = await ingestFixture();
    });

  it('answers 422 when the key is reused with another body, and keeps the first record', async () => {
    const key = uniqueKey(route);
    const first = signedDelivery(route, key, { payload: { amount: 100 } });
    await fx.invoke(first);
    const answer = await fx.invoke(signedDelivery(route, key, { payload: { amount: 999 } }));
    expect(answer.statusCode).toBe(422);
    expect(answer.headers?.['content-type']).toBe('application/problem+json');
    const stored = await documentClient(fx.ddb).send(
      new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(route, key), sk: RECORD_SK } }),
    );
    // The first body's fingerprint stands (the record keeps no body: its work message carries it).
    expect(stored.Item?.fingerprint).toBe(createHash('sha256').update(first.body).digest('hex'));
    expect(stored.Item?.hits).toBe(1);
  });

  it('answers 400 when the delivery carries no valid key, and writes nothing', async () => {
    const before = await fx.messagesInQueue();
    const answer = await fx.invoke(withoutKey(route, uniqueKey(route)));
    expect(answer.statusCode).toBe(400);
    expect(json(answer.body)).toMatchObject({ status: 400, type: expect.stringContaining('idempotency-key') as unknown });
    expect(await fx.messagesInQueue()).toBe(before);
  });
  },
);

describe.each(TIMESTAMPED)('the ingest handler on a %s route, whose scheme signs a timestamp', (route) => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await ingestFixture();
  });

  it('answers 401 to a stale or a future timestamp, and 202 inside the tolerance', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stale = await fx.invoke(signedDelivery(route, uniqueKey(route), { nowSeconds: now - 301 }));
    const future = await fx.invoke(signedDelivery(route, uniqueKey(route), { nowSeconds: now + 301 }));
    const inside = await fx.invoke(signedDelivery(route, uniqueKey(route), { nowSeconds: now - 200 }));
    expect([stale.statusCode, future.statusCode, inside.statusCode]).toEqual([401, 401, 202]);
  });

});
