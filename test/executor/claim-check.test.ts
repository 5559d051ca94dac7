/**
 * The S3 claim check at the executor, on DynamoDB Local and fauxqs (SQS and S3): a message that
 * points to a body runs on the exact bytes read back, keeps only the pointer on the record, and
 * never runs without its body.
 */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Action, ActionContext } from '../../lambdas/actions/action.ts';
import { bodyObjectRenewAfterSeconds, longestTtlSeconds, parseBodyObjectPointer } from '../../lambdas/domain/body-object.ts';
import type { BodyObjects } from '../../lambdas/ports/body-objects.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import { ROUTE, executorFixture } from '../support/executor-fixture.ts';
import { SCHEME_ROUTES } from '../support/ingest-fixture.ts';
import { testBodyBucket } from '../support/body-bucket.ts';

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** An action that keeps what each run got. */
function recording(): { action: Action; runs: ActionContext[] } {
  const runs: ActionContext[] = [];
  return {
    runs,
    action: (ctx) => {
      runs.push(ctx);
      return Promise.resolve({ ok: true });
    },
  };
}

/** The bucket's objects, counting each renewal. */
function countingRenewals(bodies: BodyObjects): BodyObjects & { renewals: number } {
  const counted = {
    bucket: bodies.bucket,
    renewals: 0,
    store: (name: string, bytes: Buffer) => bodies.store(name, bytes),
    read: (pointer: string) => bodies.read(pointer),
    lastWritten: (pointer: string) => bodies.lastWritten(pointer),
    renew: (pointer: string) => {
      counted.renewals++;
      return bodies.renew(pointer);
    },
  };
  return counted;
}

describe('the executor with a bucket of large bodies', () => {
  it('runs a 1 MiB delivery once, on the exact bytes that were sent', async () => {
    // Prepare
    const bucket = await testBodyBucket();
    const runs = recording();
    const fx = await executorFixture({ bodies: bucket.bodies, actions: { recorder: runs.action }, action: 'recorder' });
    const pad = 'é'.repeat(512 * 1024); // 2 bytes each in UTF-8: 1 MiB of body
    // Act
    const key = await fx.deliver({ pad });
    await fx.drain();
    // Assess
    expect(runs.runs).toHaveLength(1);
    const run = runs.runs[0]!;
    const sent = JSON.stringify({ pad });
    expect(Buffer.byteLength(sent)).toBeGreaterThan(1024 * 1024);
    expect(sha256(run.rawBody)).toBe(sha256(sent));
    expect(run.body).toEqual({ pad });
    expect((await fx.record(key))?.status).toBe('COMPLETED');
  });

  it('keeps only the pointer on the record when a run fails and the record must keep its payload', async () => {
    const bucket = await testBodyBucket();
    const failing: Action = () => Promise.reject(new Error('downstream said 503'));
    const fx = await executorFixture({ bodies: bucket.bodies, actions: { failing }, action: 'failing' });
    const key = await fx.deliver({ pad: 'y'.repeat(200 * 1024) });
    await fx.drain(30_000);
    const record = await fx.record(key);
    expect(record?.status).toBe('FAILED');
    expect(record?.body).toBe('');
    expect(parseBodyObjectPointer(String(record?.bodyObject))?.bucket).toBe(bucket.bucket);
    // The dead-letter copy carries the pointer too: a person's redrive runs on the same object.
    const copies = await fx.takeDeadLetters();
    expect(copies.map((c) => c.bodyObject)).toEqual([record?.bodyObject]);
  });

  it('runs nothing when the body object is gone, fails the record with that reason, and hands its copy to people', async () => {
    // Prepare: the object deleted under the record (what a too-short lifecycle would do)
    const bucket = await testBodyBucket();
    const runs = recording();
    const fx = await executorFixture({ bodies: bucket.bodies, actions: { recorder: runs.action }, action: 'recorder' });
    const key = await fx.deliver({ pad: 'z'.repeat(150 * 1024) });
    const [name] = await bucket.names();
    await bucket.s3.send(new DeleteObjectCommand({ Bucket: bucket.bucket, Key: name }));
    // Act
    await fx.drain(30_000);
    // Assess
    expect(runs.runs).toHaveLength(0);
    const copies = await fx.takeDeadLetters();
    expect(copies).toHaveLength(1);
    expect(String(copies[0]?.reason)).toContain('body object');
    // FAILED, not RECEIVED for its whole TTL: a person sees it, and its copy's last receive marked it.
    expect(await fx.record(key)).toMatchObject({ status: 'FAILED', lastError: copies[0]?.reason, deadLetterId: copies[0]?.deadLetterId, deadLettered: copies[0]?.deadLetterId });
  });

  it('renews an object older than the renewal threshold before it runs, and not a fresh one', async () => {
    // Prepare: a record kept alive past its TTL (as a redrive or a pause would keep it)
    const bucket = await testBodyBucket();
    const counted = countingRenewals(bucket.bodies);
    const runs = recording();
    const fx = await executorFixture({ bodies: counted, actions: { recorder: runs.action }, action: 'recorder' });
    const fresh = await fx.deliver({ pad: 'f'.repeat(140 * 1024) });
    await fx.drain();
    expect(counted.renewals).toBe(0);
    const old = await fx.deliver({ pad: 'o'.repeat(140 * 1024) });
    const renewAfterMs = bodyObjectRenewAfterSeconds(longestTtlSeconds(SCHEME_ROUTES.map((r) => ({ ttlSeconds: r.ttlSeconds ?? 35 * 86_400 })))) * 1000;
    await documentClient(fx.ingest.ddb).send(
      new UpdateCommand({
        TableName: fx.eventsTable,
        Key: { pk: recordPk(ROUTE, old), sk: RECORD_SK },
        UpdateExpression: 'SET expiresAt = :far',
        ExpressionAttributeValues: { ':far': Math.floor(Date.now() / 1000) + 400 * 86_400 },
      }),
    );
    // Act: the executor's clock (and SQS's stamps with it) moves past the threshold
    fx.clockOffsetMs = renewAfterMs + 60_000;
    await fx.drain();
    // Assess
    expect(counted.renewals).toBe(1);
    expect(runs.runs.map((r) => r.key)).toEqual([fresh, old]);
  });
});
