/**
 * The local stack's buckets of large bodies on fauxqs's S3, across a restart on the same folder:
 * ensureBucket creates a bucket once and finds it afterwards (fauxqs answers a CreateBucket on an
 * existing bucket with 200, where AWS outside us-east-1 answers BucketAlreadyOwnedByYou), and
 * fauxqs keeps buckets and objects in its data folder as it keeps queues and messages. An
 * embedded fauxqs of this test's own, started twice on one folder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBucket, localS3Client } from '../../local/aws-clients.ts';
import { startLocalSqs } from '../../local/local-aws.ts';

describe('ensureBucket and fauxqs\'s S3 across a restart on the same folder', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'retryproof-buckets-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the bucket once, finds it on the next start, and the object put before is still there', async () => {
    // Prepare: a first start that creates the bucket and stores a body.
    const body = Buffer.from('{"kept":"across a restart"}');
    const first = await startLocalSqs({ dataDir });
    const s3 = localS3Client(first.endpoint);
    let created: { created: boolean };
    try {
      created = await ensureBucket(s3, 'retryproof-bodies');
      // A second call on the running server finds it too.
      expect(await ensureBucket(s3, 'retryproof-bodies')).toEqual({ created: false });
      await s3.send(new PutObjectCommand({ Bucket: 'retryproof-bodies', Key: 'bodies/r/k/f', Body: body }));
    } finally {
      s3.destroy();
      await first.stop();
    }
    // Act: a second start on the same folder.
    const second = await startLocalSqs({ dataDir });
    const again = localS3Client(second.endpoint);
    try {
      const found = await ensureBucket(again, 'retryproof-bodies');
      const got = await again.send(new GetObjectCommand({ Bucket: 'retryproof-bodies', Key: 'bodies/r/k/f' }));
      // Assess
      expect(created).toEqual({ created: true });
      expect(found).toEqual({ created: false });
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
      // fauxqs answers a repeated CreateBucket with success, not BucketAlreadyOwnedByYou.
      await expect(again.send(new CreateBucketCommand({ Bucket: 'retryproof-bodies' }))).resolves.toBeDefined();
    } finally {
      again.destroy();
      await second.stop();
    }
  });
});
