import { RECORD_STATUS, acceptedAnswer } from '../../domain/event-record.ts';
import { fingerprint } from '../../domain/fingerprint.ts';
import { validateKey } from '../../domain/idempotency-key.ts';
import type { Step } from '../ingest-context.ts';

/**
 * The key, from signed content only, and the record the claim writes; the payload travels in the
 * work message, not in the record (architecture.md#keys-fingerprints-and-ttl, #the-events-table).
 */
export const deriveKey: Step = (ctx) => {
  const { route, delivery, now } = ctx;
  const { config } = route;
  if (route.requiresJson) ctx.json();
  const bodyFingerprint = fingerprint(delivery.rawBody);
  const key = validateKey(route.keySource({ headers: delivery.headers, json: ctx.json, fingerprint: () => bodyFingerprint }));
  ctx.key = key;
  ctx.accepted = acceptedAnswer(config.name, key);
  ctx.payload = {
    body: delivery.bodyEncoding === 'base64' ? delivery.rawBody.toString('base64') : delivery.rawBody.toString('utf8'),
    bodyEncoding: delivery.bodyEncoding,
    headers: keptHeaders(delivery.headers, config.keepHeaders),
  };
  ctx.record = {
    route: config.name,
    key,
    status: RECORD_STATUS.received,
    fingerprint: bodyFingerprint,
    bodyBytes: delivery.rawBody.length,
    receivedAt: now,
    expiresAt: Math.floor(now / 1000) + config.ttlSeconds,
    answer: ctx.accepted,
    hits: 1,
    attempts: 0,
    runs: 0,
    redrives: 0,
    lastEnqueuedAt: now,
  };
  return undefined;
};

function keptHeaders(headers: Readonly<Record<string, string | undefined>>, keep: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of keep) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
