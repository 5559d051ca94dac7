/**
 * The receiver's bucket of large bodies (domain/body-object.ts): the ingest stores a body before
 * its claim, the executor reads it back, and every sender of a message that points to one keeps
 * it alive first (queue/fresh-body-work-queue.ts).
 */

/** A body read back: its exact bytes, and when the object was last written (S3's clock). */
export interface StoredBody {
  readonly bytes: Buffer;
  readonly lastModifiedMs: number;
}

export interface BodyObjects {
  /** The bucket this receiver writes to: the pointer names it. */
  readonly bucket: string;
  /**
   * Writes the body under its name unless an object of that name exists (If-None-Match: the
   * name carries the body's SHA-256, so an existing object holds the same bytes).
   * @returns `created` false when one was there already
   * @throws on any other failure: the caller answers 503, and the sender's retry heals it
   */
  store(name: string, bytes: Buffer): Promise<{ readonly pointer: string; readonly created: boolean }>;
  /** Reads a body back; undefined when no object has that name (never stored, or expired). */
  read(pointer: string): Promise<StoredBody | undefined>;
  /** When the object was last written; undefined when there is none. */
  lastWritten(pointer: string): Promise<number | undefined>;
  /** Writes the object onto itself, so its lifecycle starts again from now; false when there is none. */
  renew(pointer: string): Promise<boolean>;
}
