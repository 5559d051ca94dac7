import { renewalDue } from '../domain/body-object.ts';
import type { WorkMessage } from '../domain/event-record.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { SendOptions, WorkQueue } from '../ports/work-queue.ts';

/**
 * The one place that keeps a large body alive for the messages that point to it: before a message
 * with a body pointer is sent (by the ingest, the executor, the reconciler, route control or a bulk
 * redrive alike), an object older than `renewAfterMs` is renewed, so it lives at least
 * MESSAGE_POINTER_COVER_SECONDS more (domain/body-object.ts): longer than the message, its
 * dead-letter copy and a person's redrive of that copy can wait. A record needs its body only
 * when a message for it is received, and every such message went through here.
 *
 * S3 wrote Last-Modified by its own clock: the object counts as older by the clock margin, so a
 * slow clock of ours never skips a renewal that was due. A sender that knows when the object was
 * last written (the ingest that just wrote it, the executor that just read it) says so
 * (SendOptions.bodyWrittenAtMs), and S3 is not asked.
 *
 * An object that is gone is not renewed and the message is sent all the same: the executor then
 * finds no body and hands the delivery to people with that reason (nothing runs without its body).
 */
export class FreshBodyWorkQueue implements WorkQueue {
  readonly #queue: WorkQueue;
  readonly #bodies: BodyObjects;
  readonly #renewAfterMs: number;
  readonly #clockMarginMs: number;
  readonly #now: () => number;

  constructor(queue: WorkQueue, bodies: BodyObjects, options: { readonly renewAfterMs: number; readonly clockMarginMs: number; readonly now?: () => number }) {
    this.#queue = queue;
    this.#bodies = bodies;
    this.#renewAfterMs = options.renewAfterMs;
    this.#clockMarginMs = options.clockMarginMs;
    this.#now = options.now ?? Date.now;
  }

  async send(message: WorkMessage, options?: SendOptions): Promise<void> {
    if (message.bodyObject !== undefined) await this.#keepAlive(message.bodyObject, options?.bodyWrittenAtMs);
    await this.#queue.send(message, options);
  }

  /** Renews the object when it is older than the threshold; does nothing for an object that is gone. */
  async #keepAlive(pointer: string, knownWrittenAtMs: number | undefined): Promise<void> {
    const written = knownWrittenAtMs ?? (await this.#bodies.lastWritten(pointer));
    if (written === undefined) return;
    if (renewalDue(written, this.#now(), this.#renewAfterMs, this.#clockMarginMs)) await this.#bodies.renew(pointer);
  }
}
