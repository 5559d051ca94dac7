/**
 * Replays of a captured delivery. GitHub, Shopify and the generic hmac-sha256 scheme sign
 * the body only: their delivery-id headers are not signed, so an attacker who captured one
 * genuine delivery can post it again with a fresh id. The key is the body's hash, so every
 * such replay is a duplicate of the genuine delivery: one effect, whatever the headers say.
 * Slack's handshake and retries ride on the same path.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { createEventsTable, createLedgerTable, localDynamoClient } from '../../local/aws-clients.ts';
import { ledgerEntries } from '../../lambdas/ledger/ledger.ts';
import { keyHeadersFor } from '../../local/sample-delivery.ts';
import { executorFixture } from '../support/executor-fixture.ts';
import { recordKeyOf, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import type { Delivery } from '../support/ingest-fixture.ts';

async function ownFixture() {
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  const suffix = randomUUID().slice(0, 8);
  const eventsTable = await createEventsTable(dynamo, `events-r-${suffix}`);
  const ledgerTable = await createLedgerTable(dynamo, `ledger-r-${suffix}`);
  const fx = await executorFixture({ eventsTable, ledgerTable });
  const ledgerOf = async (route: string) =>
    (await ledgerEntries(fx.ledgerClient, Date.now() - 3_600_000, Date.now() + 3_600_000)).filter((e) => e.route === route);
  const records = async () => (await documentClient(dynamo).send(new ScanCommand({ TableName: eventsTable }))).Count ?? 0;
  return { fx, ledgerOf, records };
}

function json(body: string | undefined): Record<string, unknown> {
  return JSON.parse(body ?? 'null') as Record<string, unknown>;
}

describe.each(['github', 'shopify', 'hmac-sha256'] as const)('a captured %s delivery replayed under fresh ids', (route) => {
  it('is one key: the five replays are answered as replays, and the ledger holds one entry', async () => {
    // Prepare
    const { fx, ledgerOf } = await ownFixture();
    const genuine = signedDelivery(route, uniqueKey(route));
    const key = recordKeyOf(genuine, 'unused');
    // Act: the genuine delivery, then the same body and signature with a new id header each time.
    const first = await fx.ingest.invoke(genuine);
    const replays = [];
    for (let i = 0; i < 5; i++) {
      const replay: Delivery = { ...genuine, headers: { ...genuine.headers, ...keyHeadersFor(route, uniqueKey(route)) } };
      replays.push(await fx.ingest.invoke(replay));
    }
    await fx.drain();
    // Assess
    expect(first.statusCode).toBe(202);
    expect(json(first.body)).toEqual({ id: `${route}/${key}`, status: 'accepted' });
    for (const answer of replays) {
      expect(answer.statusCode).toBe(202);
      expect(answer.headers?.['idempotent-replayed']).toBe('true');
      expect(json(answer.body)).toEqual({ id: `${route}/${key}`, status: 'accepted' });
    }
    const entries = await ledgerOf(route);
    expect(entries.map((e) => e.idempotencyKey)).toEqual([key]);
  });
});

describe('a slack route', () => {
  const slack = SCHEME_ROUTES.find((r) => r.name === 'slack');
  if (slack === undefined) throw new Error('no slack test route');
  const signed = (body: string, nowSeconds: number, extra: Record<string, string> = {}): Delivery => ({
    route: 'slack',
    body,
    headers: { 'content-type': 'application/json', ...extra, ...signDelivery(slack.signature, slack.secret, Buffer.from(body), { nowSeconds }) },
  });

  it('answers a signed url_verification with its challenge, storing and queueing nothing', async () => {
    // Prepare
    const { fx, records } = await ownFixture();
    const body = JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    // Act
    const answer = await fx.ingest.invoke(signed(body, Math.floor(Date.now() / 1000)));
    const forged = await fx.ingest.invoke({ ...signed(body, Math.floor(Date.now() / 1000)), body: body.replace('3eZ', '4eZ') });
    // Assess
    expect(answer.statusCode).toBe(200);
    expect(json(answer.body)).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(forged.statusCode).toBe(401);
    expect(await records()).toBe(0);
    expect(await fx.ingest.messagesInQueue()).toBe(0);
  });

  it('runs an event once when Slack retries it with X-Slack-Retry-Num', async () => {
    // Prepare
    const { fx, ledgerOf } = await ownFixture();
    const eventId = `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
    const body = JSON.stringify({ type: 'event_callback', event_id: eventId, event: { type: 'app_mention' }, amount: 10 });
    const now = Math.floor(Date.now() / 1000);
    // Act: the event, then Slack's retry a few seconds later, freshly signed.
    const first = await fx.ingest.invoke(signed(body, now));
    const retry = await fx.ingest.invoke(signed(body, now + 5, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' }));
    await fx.drain();
    // Assess
    expect([first.statusCode, retry.statusCode]).toEqual([202, 202]);
    expect(retry.headers?.['idempotent-replayed']).toBe('true');
    expect((await ledgerOf('slack')).map((e) => e.idempotencyKey)).toEqual([eventId]);
  });
});
