import { MethodNotAllowedError, PayloadTooLargeError, UnknownRouteError } from '../../domain/errors.ts';
import type { IncomingDelivery } from '../ingest-delivery.ts';
import type { IngestRoute } from '../prepared-route.ts';

/**
 * The route of a delivery it takes, or a refusal (405, 404, 413) before anything is read or
 * written (architecture.md#answers-to-senders).
 */
export function refuse(routes: ReadonlyMap<string, IngestRoute>, delivery: IncomingDelivery): IngestRoute {
  if (delivery.method !== 'POST') throw new MethodNotAllowedError(delivery.method);
  const route = routes.get(delivery.routeName);
  if (route === undefined) throw new UnknownRouteError(delivery.routeName);
  const { maxBodyBytes } = route.config;
  if (delivery.rawBody.length > maxBodyBytes) throw new PayloadTooLargeError(delivery.rawBody.length, maxBodyBytes);
  return route;
}
