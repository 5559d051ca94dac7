/**
 * A bucket of large bodies on the run's fauxqs, which serves S3 on the same endpoint as SQS
 * (path-style addressing). Each call makes its own bucket, so specs never see each other's objects.
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-credentials.ts';
import { S3BodyObjects } from '../../lambdas/store/s3-body-objects.ts';

export interface TestBodyBucket {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly bodies: S3BodyObjects;
  /** The names of every object in the bucket. */
  names(): Promise<string[]>;
}

export async function testBodyBucket(): Promise<TestBodyBucket> {
  const s3 = new S3Client({ endpoint: inject('sqsEndpoint'), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
  const bucket = `bodies-${randomUUID().slice(0, 8)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    s3,
    bucket,
    bodies: new S3BodyObjects(s3, bucket),
    async names() {
      const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (out.Contents ?? []).map((o) => o.Key ?? '');
    },
  };
}
