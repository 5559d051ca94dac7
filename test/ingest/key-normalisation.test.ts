/**
 * The key is read with the verifier's own normalisation (delivery-headers.ts, headerValue):
 * the verifier signs and checks the trimmed `webhook-id`, so the key is the trimmed id too.
 * Whitespace around a header value is not part of it (RFC 9110, section 5.5); a replay that
 * pads the id with spaces still verifies, and must be the same key, not a new effect.
 */
import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { keySourceFor } from '../../lambdas/domain/idempotency-key.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';

const ROUTE = 'standard-webhooks';

describe('the idempotency key and header whitespace', () => {
  it('reads "msg_1 " and " msg_1" as the key msg_1, as the verifier reads them', () => {
    const source = keySourceFor('standard-webhooks', undefined);
    const input = (id: string) => ({ headers: { 'webhook-id': id }, json: () => ({}), fingerprint: () => fingerprint(Buffer.from('{}')) });
    expect([source(input('msg_1 ')), source(input(' msg_1')), source(input('\tmsg_1'))]).toEqual(['msg_1', 'msg_1', 'msg_1']);
    expect(keySourceFor('standard-webhooks', 'eu_{header:webhook-id}')(input(' msg_1 '))).toBe('eu_msg_1');
  });

  it('answers the padded copies of one signed delivery as replays of one record, with one message', async () => {
    // Prepare: one delivery, signed over the trimmed id, as its sender signed it.
    const fx = await ingestFixture();
    const id = uniqueKey(ROUTE);
    const signed = signedDelivery(ROUTE, id);
    const padded = (value: string) => ({ ...signed, headers: { ...signed.headers, 'webhook-id': value } });
    // Act: the same delivery with a trailing space, then with a leading one.
    const first = await fx.invoke(padded(`${id} `));
    const second = await fx.invoke(padded(` ${id}`));
    // Assess: both verify; the second is a replay of the first's record, keyed by the trimmed id.
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(JSON.parse(first.body ?? '{}')).toEqual({ id: `${ROUTE}/${id}`, status: 'accepted' });
    expect(second.headers?.['idempotent-replayed']).toBe('true');
    expect(await fx.messagesInQueue()).toBe(1);
    const stored = await documentClient(fx.ddb).send(
      new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(ROUTE, id), sk: RECORD_SK }, ConsistentRead: true }),
    );
    expect(stored.Item?.hits).toBe(2);
  });
});
