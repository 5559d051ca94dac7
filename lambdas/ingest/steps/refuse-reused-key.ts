import { deliveryId } from '../../domain/event-record.ts';
import { KeyReusedError } from '../../domain/errors.ts';
import type { DuplicateContext, Step } from '../ingest-context.ts';

/** The same key with another body: 422, and nothing is written over the first (architecture.md#keys-fingerprints-and-ttl). */
export const refuseReusedKey: Step<DuplicateContext> = ({ old, record, route, key }) => {
  if (old.fingerprint !== record.fingerprint) throw new KeyReusedError(deliveryId(route.config.name, key));
  return undefined;
};
