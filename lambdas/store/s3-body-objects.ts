/**
 * The bucket of large bodies on S3 (ports/body-objects.ts). Only SDK calls and the translation of
 * S3's answers live here; the rules are in domain/body-object.ts.
 *
 * The conditional write: PutObject with `If-None-Match: *` "uploads the object only if the object
 * key name does not already exist in the bucket specified. Otherwise, Amazon S3 returns a 412
 * Precondition Failed error. If a conflicting operation occurs during the upload S3 returns a 409
 * ConditionalRequestConflict response" (Amazon S3 API Reference, PutObject, If-None-Match; User
 * Guide, "How to prevent object overwrites with conditional writes"). The name carries the body's
 * SHA-256, so a 412 means the same bytes are there: stored. A 409 is another copy of the same
 * delivery writing at the same instant: the SDK's retry of it, or the sender's, meets a 412. The
 * SDK's own retry of a put that committed and lost its answer meets its own object: a 412, stored.
 *
 * The renewal copies the object onto itself (CopyObject with MetadataDirective REPLACE, which S3
 * requires of a copy onto the same key): a copy is a new object, so its lifecycle counts again
 * from now. A body of at most 4.48 MiB copies in one request (CopyObject takes up to 5 GB).
 *
 * fauxqs, the local S3, ignores If-None-Match and overwrites: with the same bytes, as the name
 * says, so nothing the local stack shows depends on it.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { BodiesClient } from '../config/deployment.ts';
import { bodyObjectPointer, parseBodyObjectPointer } from '../domain/body-object.ts';
import type { BodyObjects, StoredBody } from '../ports/body-objects.ts';
import type * as S3Sdk from './s3-sdk.ts';
import { s3SdkSpecifier } from './s3-sdk-file.ts';

/** The S3 SDK, loaded at the first large body: a small body's cold start never evaluates it. */
let sdkLoading: Promise<typeof S3Sdk> | undefined;
const sdk = (): Promise<typeof S3Sdk> => (sdkLoading ??= import(s3SdkSpecifier(import.meta.url)) as Promise<typeof S3Sdk>);

/** An S3 error's HTTP status, or undefined. */
function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404;
}

export class S3BodyObjects implements BodyObjects {
  readonly bucket: string;
  readonly #make: BodiesClient;
  #client: Promise<S3Client> | undefined;

  constructor(client: BodiesClient, bucket: string) {
    this.#make = client;
    this.bucket = bucket;
  }

  async #s3(): Promise<{ client: S3Client; m: typeof S3Sdk }> {
    const make = this.#make;
    const client = await (this.#client ??= typeof make === 'function' ? make() : Promise.resolve(make));
    return { client, m: await sdk() };
  }

  async store(name: string, bytes: Buffer): Promise<{ pointer: string; created: boolean }> {
    const pointer = bodyObjectPointer(this.bucket, name);
    try {
      const { client, m } = await this.#s3();
      await client.send(new m.PutObjectCommand({ Bucket: this.bucket, Key: name, Body: bytes, IfNoneMatch: '*', ContentLength: bytes.length }));
      return { pointer, created: true };
    } catch (error) {
      if (statusOf(error) === 412) return { pointer, created: false };
      throw error;
    }
  }

  async read(pointer: string): Promise<StoredBody | undefined> {
    const { bucket, name } = this.#parse(pointer);
    try {
      const { client, m } = await this.#s3();
      const got = await client.send(new m.GetObjectCommand({ Bucket: bucket, Key: name }));
      const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array());
      return { bytes, lastModifiedMs: got.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async lastWritten(pointer: string): Promise<number | undefined> {
    const { bucket, name } = this.#parse(pointer);
    try {
      const { client, m } = await this.#s3();
      const head = await client.send(new m.HeadObjectCommand({ Bucket: bucket, Key: name }));
      return head.LastModified?.getTime() ?? 0;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async renew(pointer: string): Promise<boolean> {
    const { bucket, name } = this.#parse(pointer);
    try {
      const { client, m } = await this.#s3();
      await client.send(new m.CopyObjectCommand({ Bucket: bucket, Key: name, CopySource: `${bucket}/${name}`, MetadataDirective: 'REPLACE' }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  #parse(pointer: string): { bucket: string; name: string } {
    const parsed = parseBodyObjectPointer(pointer);
    if (parsed === undefined) throw new Error(`not a body object pointer: ${pointer.slice(0, 120)}`);
    return parsed;
  }
}

/**
 * The deployed functions' S3 client. A pointer may name another Region's bucket (a record accepted
 * there, re-sent here by this Region's reconciler): the SDK follows S3's redirect to the bucket's
 * own Region (followRegionRedirects).
 */
export function bodiesClient(): () => Promise<S3Client> {
  return async () => new (await sdk()).S3Client({ followRegionRedirects: true });
}

/** The bucket of large bodies, when the deployment has one and an S3 client is given. */
export function bodyObjectsOf(s3: BodiesClient | undefined, bucket: string | undefined): S3BodyObjects | undefined {
  return s3 === undefined || bucket === undefined ? undefined : new S3BodyObjects(s3, bucket);
}
