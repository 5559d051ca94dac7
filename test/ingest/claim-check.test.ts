/**
 * The S3 claim check at the ingest, on DynamoDB Local and fauxqs (its SQS and its S3): a large
 * body is stored before the claim, and the record and the message carry its pointer.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CLAIM_CHECK_ABOVE_BYTES, MAX_BODY_BYTES, bodyObjectName } from '../../lambdas/domain/body-object.ts';
import type { BodyObjects } from '../../lambdas/ports/body-objects.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { SCHEME_ROUTES, ingestFixture, signedDelivery, uniqueKey } from '../support/ingest-fixture.ts';
import { testBodyBucket } from '../support/body-bucket.ts';

const ROUTE = 'standard-webhooks';

/** A signed delivery whose body is about `bytes` long. */
function deliveryOf(key: string, bytes: number, fill = 'x') {
  return signedDelivery(ROUTE, key, { payload: { pad: fill.repeat(bytes) } });
}

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function receiveOne(fx: Awaited<ReturnType<typeof ingestFixture>>): Promise<Record<string, unknown>> {
  const out = await fx.sqs.send(new ReceiveMessageCommand({ QueueUrl: fx.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
  const message = out.Messages?.[0];
  if (message?.Body === undefined) throw new Error('no message on the queue');
  return JSON.parse(message.Body) as Record<string, unknown>;
}

describe('the ingest with a bucket of large bodies', () => {
  it('stores a body over the threshold under its name before the claim, and sends only its pointer', async () => {
    // Prepare
    const bucket = await testBodyBucket();
    const fx = await ingestFixture({ bodies: bucket.bodies });
    const key = uniqueKey(ROUTE);
    const delivery = deliveryOf(key, 200 * 1024);
    // Act
    const answer = await fx.invoke(delivery);
    // Assess: the object holds the exact bytes, under the name of route, key and fingerprint
    expect(answer.statusCode).toBe(202);
    const name = bodyObjectName(ROUTE, key, sha256(delivery.body));
    expect(await bucket.names()).toEqual([name]);
    const object = await bucket.s3.send(new GetObjectCommand({ Bucket: bucket.bucket, Key: name }));
    expect(sha256(Buffer.from(await object.Body!.transformToByteArray()))).toBe(sha256(delivery.body));
    const message = await receiveOne(fx);
    expect(message).toMatchObject({ key, body: '', bodyObject: `s3://${bucket.bucket}/${name}` });
    // The claim keeps no body: the message is the carrier, as for a small one.
    const record = await documentClient(fx.ddb).send(new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } }));
    expect(record.Item?.body).toBeUndefined();
    expect(record.Item?.bodyBytes).toBe(Buffer.byteLength(delivery.body));
  });

  it('answers a duplicate of a large body with a replay, naming the same one object', async () => {
    const bucket = await testBodyBucket();
    const fx = await ingestFixture({ bodies: bucket.bodies });
    const delivery = deliveryOf(uniqueKey(ROUTE), 300 * 1024);
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    const duplicate = await fx.invoke(delivery);
    expect(duplicate.statusCode).toBe(202);
    expect(duplicate.headers?.['idempotent-replayed']).toBe('true');
    expect(await bucket.names()).toHaveLength(1);
    expect(await fx.messagesInQueue()).toBe(1);
  });

  it('keeps a body at the threshold inline, and sends every body to the bucket on a route whose threshold is 0', async () => {
    const bucket = await testBodyBucket();
    const fx = await ingestFixture({ bodies: bucket.bodies });
    // The body's JSON wrapping adds a few bytes: aim just under the threshold.
    const small = deliveryOf(uniqueKey(ROUTE), CLAIM_CHECK_ABOVE_BYTES - 200);
    expect(Buffer.byteLength(small.body)).toBeLessThanOrEqual(CLAIM_CHECK_ABOVE_BYTES);
    expect((await fx.invoke(small)).statusCode).toBe(202);
    expect(await bucket.names()).toEqual([]);
    expect((await receiveOne(fx)).bodyObject).toBeUndefined();

    const everyBody = await ingestFixture({
      bodies: bucket.bodies,
      routes: SCHEME_ROUTES.map((r) => (r.name === ROUTE ? { ...r, claimCheckAboveBytes: 0 } : r)),
    });
    const tiny = deliveryOf(uniqueKey(ROUTE), 10);
    expect((await everyBody.invoke(tiny)).statusCode).toBe(202);
    expect(await bucket.names()).toHaveLength(1);
  });

  it('sends a body SQS cannot carry (U+FFFE) to the bucket instead of refusing it', async () => {
    const bucket = await testBodyBucket();
    const fx = await ingestFixture({ bodies: bucket.bodies });
    const delivery = deliveryOf(uniqueKey(ROUTE), 3, '\uFFFE');
    expect((await fx.invoke(delivery)).statusCode).toBe(202);
    expect(await bucket.names()).toHaveLength(1);
  });

  it('answers 413 naming the limit for a body one byte over MAX_BODY_BYTES, and writes nothing', async () => {
    const bucket = await testBodyBucket();
    const fx = await ingestFixture({ bodies: bucket.bodies });
    const key = uniqueKey(ROUTE);
    const base = deliveryOf(key, 0);
    // Pad the JSON to exactly one byte over the limit.
    const over = deliveryOf(key, MAX_BODY_BYTES + 1 - Buffer.byteLength(base.body));
    expect(Buffer.byteLength(over.body)).toBe(MAX_BODY_BYTES + 1);
    const answer = await fx.invoke(over);
    expect(answer.statusCode).toBe(413);
    expect((JSON.parse(String(answer.body)) as { detail: string }).detail).toContain(String(MAX_BODY_BYTES));
    expect(await bucket.names()).toEqual([]);
    expect(await fx.messagesInQueue()).toBe(0);
  });

  it('answers 503 and claims nothing when the body cannot be stored; the sender\'s retry is accepted once S3 answers', async () => {
    // Prepare: a bucket that fails its first write, as S3 may (a 500, a timeout)
    const bucket = await testBodyBucket();
    let failNext = true;
    const flaky: BodyObjects = {
      bucket: bucket.bucket,
      store: (name, bytes) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(Object.assign(new Error('We encountered an internal error. Please try again.'), { name: 'InternalError' }));
        }
        return bucket.bodies.store(name, bytes);
      },
      read: (pointer) => bucket.bodies.read(pointer),
      lastWritten: (pointer) => bucket.bodies.lastWritten(pointer),
      renew: (pointer) => bucket.bodies.renew(pointer),
    };
    const fx = await ingestFixture({ bodies: flaky });
    const key = uniqueKey(ROUTE);
    const delivery = deliveryOf(key, 150 * 1024);
    // Act
    const first = await fx.invoke(delivery);
    const afterFirst = await documentClient(fx.ddb).send(new GetCommand({ TableName: fx.tableName, Key: { pk: recordPk(ROUTE, key), sk: RECORD_SK } }));
    const retry = await fx.invoke(delivery);
    // Assess
    expect(first.statusCode).toBe(503);
    expect(afterFirst.Item).toBeUndefined();
    expect(retry.statusCode).toBe(202);
    expect(retry.headers?.['idempotent-replayed']).toBeUndefined();
    expect(await fx.messagesInQueue()).toBe(1);
  });

  it('refuses a body over the threshold with 413 when the receiver has no bucket', async () => {
    const fx = await ingestFixture();
    const answer = await fx.invoke(deliveryOf(uniqueKey(ROUTE), 140 * 1024));
    expect(answer.statusCode).toBe(413);
    expect((JSON.parse(String(answer.body)) as { detail: string }).detail).toContain(String(CLAIM_CHECK_ABOVE_BYTES));
  });
});
