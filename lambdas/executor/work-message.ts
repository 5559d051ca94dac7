/** Reading a work message: its fields, its body's bytes and fingerprint, and its plain wake-up. */
import { Buffer } from 'node:buffer';
import type { Payload, WorkMessage } from '../domain/event-record.ts';
import { fingerprint } from '../domain/fingerprint.ts';

/** Reads a work message; undefined when it is not one. */
export function parseWorkMessage(body: string): WorkMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const m = parsed as Partial<WorkMessage>;
  const ok =
    typeof m.route === 'string' &&
    typeof m.key === 'string' &&
    typeof m.fingerprint === 'string' &&
    typeof m.receivedAt === 'number' &&
    typeof m.body === 'string';
  return ok ? (m as WorkMessage) : undefined;
}

/** The action's body: the message carries the payload (the record keeps it only on some paths). */
export function actionBodyOf(payload: Payload): unknown {
  if (payload.bodyEncoding === 'base64') return payload.body;
  try {
    return JSON.parse(payload.body) as unknown;
  } catch {
    return payload.body;
  }
}

/** The bytes of an inline payload's body, as the ingest received them. */
export function bytesOf(payload: Payload): Buffer {
  return Buffer.from(payload.body, payload.bodyEncoding === 'base64' ? 'base64' : 'utf8');
}

/** SHA-256 of a payload's body, as the ingest fingerprinted the raw bytes it received. */
export function fingerprintOf(payload: Payload): string {
  return fingerprint(bytesOf(payload));
}

/** The plain wake-up of the record: a dead-letter copy's context stays on the record. */
export function wakeUpOf(work: WorkMessage): WorkMessage {
  const { deadLetterId: _id, reason: _reason, attempts: _attempts, lastError: _lastError, ...wakeUp } = work;
  return wakeUp;
}
