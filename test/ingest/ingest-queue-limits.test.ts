import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { QUEUE_RESERVE_BYTES, SQS_MAX_MESSAGE_BYTES } from '../../lambdas/domain/queue-limits.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { ingestFixture, SCHEME_ROUTES, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import type { IngestFixture } from '../support/ingest-fixture.ts';

const ROUTE = 'standard-webhooks';
/** The largest body a route may accept (HARD_MAX_BODY_BYTES): above what its work message can carry once escaped. */
const MAX_BODY_BYTES = 160 * 1024;

describe('the ingest handler and what SQS can carry', () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    const routes = SCHEME_ROUTES.map((r) => (r.name === ROUTE ? { ...r, maxBodyBytes: MAX_BODY_BYTES } : r));
    fx = await ingestFixture({ routes });
  });

  const stored = async (key: string): Promise<Record<string, unknown> | undefined> =>
    (await documentClient(fx.ddb).send(new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } })))
      .Item;

  it('answers 413 with problem+json, and writes nothing, to a body within maxBodyBytes whose work message is over 256 KiB once escaped', async () => {
    // Prepare: 131,060 backslashes inside a JSON string; each one doubles in the work message.
    const key = uniqueKey(ROUTE);
    const delivery = signedDelivery(ROUTE, key, { payload: { note: '\\'.repeat(65_530) } });
    const bytes = Buffer.byteLength(delivery.body);
    const before = await fx.messagesInQueue();
    // Act
    const answer = await fx.invoke(delivery);
    // Assess
    expect(delivery.body.split('\\').length - 1).toBe(131_060);
    expect(bytes).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(answer.statusCode).toBe(413);
    expect(answer.headers?.['content-type']).toBe('application/problem+json');
    const problem = JSON.parse(answer.body ?? '{}') as Record<string, unknown>;
    expect(problem).toMatchObject({ status: 413, title: 'Payload too large' });
    // The limit leaves room for the largest dead-letter copy the executor can make of it (queue-limits.ts).
    expect(problem.detail).toMatch(new RegExp(`-byte queue message once escaped; the queue carries at most ${SQS_MAX_MESSAGE_BYTES - QUEUE_RESERVE_BYTES}\\.`));
    expect(await stored(key)).toBeUndefined();
    expect(await fx.messagesInQueue()).toBe(before);
  });

  it('accepts a body of the same size that stays within SQS once escaped', async () => {
    const key = uniqueKey(ROUTE);
    const answer = await fx.invoke(signedDelivery(ROUTE, key, { payload: { note: 'x'.repeat(131_060) } }));
    expect(answer.statusCode).toBe(202);
    expect(await stored(key)).toMatchObject({ status: 'RECEIVED' });
  });

  it('answers 413 naming the character, and writes nothing, to a body holding U+FFFF, which SQS refuses', async () => {
    const key = uniqueKey(ROUTE);
    const before = await fx.messagesInQueue();
    const answer = await fx.invoke(signedDelivery(ROUTE, key, { payload: { note: 'a\uFFFFb' } }));
    expect(answer.statusCode).toBe(413);
    expect(answer.headers?.['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body ?? '{}')).toMatchObject({ status: 413, detail: expect.stringContaining('U+FFFF') as unknown });
    expect(await stored(key)).toBeUndefined();
    expect(await fx.messagesInQueue()).toBe(before);
  });
});
