/**
 * The receiver's buckets of large bodies, simulated as S3 behaves and the bucket is deployed:
 *  - a conditional put (If-None-Match: *) refuses a name that exists with 412, which the adapter
 *    takes for stored (store/s3-body-objects.ts); a put may fail before it commits, or commit and
 *    lose its answer, and the SDK's retry then meets its own object: a 412;
 *  - reads and the renewal's copy may fail (a 500, a timeout): the caller's own failure path;
 *  - the lifecycle rule deletes an object once bodyObjectLifeDays have passed since it was last
 *    written (a put or a renewal), rounded up to the next midnight UTC, and S3 may be late by up
 *    to a day, never early ("Lifecycle configuration elements", Amazon S3 User Guide);
 *  - S3's clock (Last-Modified) is true time.
 * Every pointer a message or a record carries was stored before its claim, so an object missing
 * when a worker reads it or a sender checks it is one the lifecycle took too soon: the
 * simulation's check of the claim check (`onMissing`).
 */
import { bodyObjectPointer, parseBodyObjectPointer } from '../../lambdas/domain/body-object.ts';
import type { BodyObjects, StoredBody } from '../../lambdas/ports/body-objects.ts';

const DAY_MS = 86_400_000;

/** S3's answers, as often as the seed draws them. */
export interface BodyFaultPlan {
  /** A write or read fails before anything happens. */
  readonly fails: number;
  /** A write commits and its answer is lost (the SDK's retry then meets its own object). */
  readonly lostAnswer: number;
}

interface StoredObject {
  readonly bytes: Buffer;
  lastWrittenMs: number;
  /** How late the lifecycle deletes it, past its due midnight: drawn once per write. */
  lagMs: number;
}

export interface SimBodyObjectsOptions {
  /** True time: S3's clock. */
  readonly now: () => number;
  readonly random: () => number;
  readonly faults: BodyFaultPlan;
  /** The bucket's lifecycle, in days (bodyObjectLifeDays of the routes' longest TTL, as the construct sets it). */
  readonly lifeDays: number;
  /** The routes' longest TTL, ms: a worker's read of an object older than this is counted (bodyReadsPastTtl). */
  readonly longestTtlMs: number;
  /** A pointer that names an object the lifecycle already deleted was read or checked. */
  readonly onMissing: (pointer: string, what: string, detail: string) => void;
  readonly stats: {
    bodyObjectsStored: number;
    bodyReads: number;
    bodyRenewals: number;
    bodyFaults: number;
    /** Workers' reads of an object last written longer ago than the longest TTL: where a lifecycle short of the pointer cover shows. */
    bodyReadsPastTtl: number;
    /** The oldest object a worker read (or found expired), days since its last write (a maximum). */
    oldestBodyReadDays: number;
  };
}

/** The instant the lifecycle deletes an object last written at `writtenMs`: the midnight UTC after writtenMs + life. */
export function lifecycleDueMs(writtenMs: number, lifeDays: number): number {
  return Math.ceil((writtenMs + lifeDays * DAY_MS) / DAY_MS) * DAY_MS;
}

/** Every Region's bucket in one store, each Region's port naming its own bucket in its pointers. */
export class SimBuckets {
  readonly #objects = new Map<string, StoredObject>();
  /** Objects the lifecycle deleted (nothing stored again since), by pointer: a later read names the deletion too. */
  readonly #expired = new Map<string, { readonly lastWrittenMs: number; readonly dueMs: number }>();
  readonly #options: SimBodyObjectsOptions;

  constructor(options: SimBodyObjectsOptions) {
    this.#options = options;
  }

  /** The port of one Region's bucket. */
  bucket(name: string): BodyObjects {
    return new SimBodyObjects(this, name);
  }

  /** The object a pointer names, or undefined once the lifecycle deleted it (reported). */
  live(pointer: string, what: string): StoredObject | undefined {
    const object = this.#objects.get(pointer);
    const expired = this.#expired.get(pointer);
    if (object === undefined) {
      this.#options.onMissing(pointer, what, expired === undefined ? 'never stored' : this.#expiredWords(expired));
      return undefined;
    }
    const dueMs = lifecycleDueMs(object.lastWrittenMs, this.#options.lifeDays);
    if (this.#options.now() >= dueMs + object.lagMs) {
      const deleted = { lastWrittenMs: object.lastWrittenMs, dueMs };
      this.#objects.delete(pointer);
      this.#expired.set(pointer, deleted);
      this.#options.onMissing(pointer, what, this.#expiredWords(deleted));
      return undefined;
    }
    return object;
  }

  /** When the lifecycle deleted an object and how old it would be now, in days after its last write. */
  #expiredWords(deleted: { readonly lastWrittenMs: number; readonly dueMs: number }): string {
    const day = (ms: number): string => ((ms - deleted.lastWrittenMs) / DAY_MS).toFixed(1);
    return `expired by the lifecycle on day ${day(deleted.dueMs)} after its last write, looked for on day ${day(this.#options.now())}`;
  }

  fault(operation: string): void {
    if (this.#options.random() < this.#options.faults.fails) {
      this.#options.stats.bodyFaults++;
      throw Object.assign(new Error(`simulated S3 failure of ${operation}: We encountered an internal error. Please try again.`), { name: 'InternalError', $metadata: { httpStatusCode: 500 } });
    }
  }

  /**
   * A write that committed and lost its answer: the SDK retries it, and its retry meets its own
   * object (`retried`: a put then answers 412), or its retries run out and the caller gets the error.
   */
  lostAnswer(operation: string): 'answered' | 'retried' {
    if (this.#options.random() >= this.#options.faults.lostAnswer) return 'answered';
    this.#options.stats.bodyFaults++;
    if (this.#options.random() < 0.5) return 'retried';
    throw Object.assign(new Error(`simulated S3 timeout after ${operation} committed`), { name: 'TimeoutError' });
  }

  put(pointer: string, bytes: Buffer): boolean {
    const object = this.#objects.get(pointer);
    // Gone by the lifecycle is gone: the name is free again.
    if (object !== undefined && this.#options.now() < lifecycleDueMs(object.lastWrittenMs, this.#options.lifeDays) + object.lagMs) return false;
    this.#objects.set(pointer, { bytes: Buffer.from(bytes), lastWrittenMs: this.#options.now(), lagMs: this.#lag() });
    this.#expired.delete(pointer);
    this.#options.stats.bodyObjectsStored++;
    return true;
  }

  rewrite(object: StoredObject): void {
    object.lastWrittenMs = this.#options.now();
    object.lagMs = this.#lag();
    this.#options.stats.bodyRenewals++;
  }

  /** A worker's read, and the age of the object it names (since its last write), while the store still holds it. */
  countRead(pointer: string): void {
    const stats = this.#options.stats;
    stats.bodyReads++;
    const object = this.#objects.get(pointer);
    if (object === undefined) return;
    const ageMs = this.#options.now() - object.lastWrittenMs;
    if (ageMs > this.#options.longestTtlMs) stats.bodyReadsPastTtl++;
    stats.oldestBodyReadDays = Math.max(stats.oldestBodyReadDays, ageMs / DAY_MS);
  }

  #lag(): number {
    return Math.floor(this.#options.random() * DAY_MS);
  }
}

class SimBodyObjects implements BodyObjects {
  readonly bucket: string;
  readonly #buckets: SimBuckets;

  constructor(buckets: SimBuckets, bucket: string) {
    this.#buckets = buckets;
    this.bucket = bucket;
  }

  store(name: string, bytes: Buffer): Promise<{ pointer: string; created: boolean }> {
    const pointer = bodyObjectPointer(this.bucket, name);
    this.#buckets.fault('PutObject');
    const created = this.#buckets.put(pointer, bytes);
    // The SDK's retry of a put that committed meets its own object: 412, taken for stored.
    const answer = this.#buckets.lostAnswer('PutObject');
    return Promise.resolve({ pointer, created: created && answer === 'answered' });
  }

  read(pointer: string): Promise<StoredBody | undefined> {
    this.#check(pointer);
    this.#buckets.fault('GetObject');
    this.#buckets.countRead(pointer);
    const object = this.#buckets.live(pointer, 'read by a worker');
    return Promise.resolve(object === undefined ? undefined : { bytes: Buffer.from(object.bytes), lastModifiedMs: object.lastWrittenMs });
  }

  lastWritten(pointer: string): Promise<number | undefined> {
    this.#check(pointer);
    this.#buckets.fault('HeadObject');
    return Promise.resolve(this.#buckets.live(pointer, 'checked before a send')?.lastWrittenMs);
  }

  renew(pointer: string): Promise<boolean> {
    this.#check(pointer);
    this.#buckets.fault('CopyObject');
    const object = this.#buckets.live(pointer, 'renewed');
    if (object === undefined) return Promise.resolve(false);
    this.#buckets.rewrite(object);
    this.#buckets.lostAnswer('CopyObject');
    return Promise.resolve(true);
  }

  #check(pointer: string): void {
    if (parseBodyObjectPointer(pointer) === undefined) throw new Error(`not a body object pointer: ${pointer}`);
  }
}
