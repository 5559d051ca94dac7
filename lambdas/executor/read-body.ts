import { renewalDue } from '../domain/body-object.ts';
import type { Payload } from '../domain/event-record.ts';
import { fingerprint } from '../domain/fingerprint.ts';
import type { Executor } from './executor-deps.ts';
import type { MessageBody } from './message-context.ts';
import { bytesOf } from './work-message.ts';

/** A body the message carries inline. */
export function inlineBody(kept: Payload): MessageBody {
  const bytes = bytesOf(kept);
  return { kept, payload: kept, bytes, fingerprint: fingerprint(bytes), sendHint: {} };
}

/**
 * The body a message carries, read back from the bucket when it points to one (the S3 claim
 * check). An object due for renewal is renewed at once, so every message this receive sends
 * points to an object with the whole pointer cover ahead
 * (docs/architecture.md#large-bodies-and-ordering-per-entity). Undefined when the object is
 * gone; S3's own failures throw, and the message goes back.
 */
export async function readBody(executor: Executor, kept: Payload): Promise<MessageBody | undefined> {
  const pointer = kept.bodyObject;
  if (pointer === undefined) return inlineBody(kept);
  if (executor.bodies === undefined) throw new Error('a work message points to a body object, and this executor has no bucket of bodies');
  const stored = await executor.bodies.read(pointer);
  if (stored === undefined) return undefined;
  let writtenAtMs = stored.lastModifiedMs;
  const now = executor.now();
  if (renewalDue(writtenAtMs, now, executor.renewAfterMs, executor.takeoverMarginMs)) {
    if (!(await executor.bodies.renew(pointer))) return undefined;
    writtenAtMs = now;
  }
  const body = kept.bodyEncoding === 'base64' ? stored.bytes.toString('base64') : stored.bytes.toString('utf8');
  const payload = { body, bodyEncoding: kept.bodyEncoding, headers: kept.headers };
  return { kept, payload, bytes: stored.bytes, fingerprint: fingerprint(stored.bytes), sendHint: { bodyWrittenAtMs: writtenAtMs } };
}
