import type { ResolvedRoute } from '../config/resolve-config.ts';
import { keySourceFor, keySourceReadsBody, needsReplayMemory } from '../domain/idempotency-key.ts';
import type { KeySource } from '../domain/idempotency-key.ts';
import { entitySourceFor } from '../domain/entity-order.ts';
import type { EntitySource } from '../domain/entity-order.ts';
import { createVerifier } from '../domain/signatures/create-verifier.ts';
import type { SignatureVerifier } from '../domain/signatures/signature-verifier.ts';

/** A route with its verifier and key source built once, at cold start. */
export interface PreparedRoute {
  readonly config: ResolvedRoute;
  readonly verifier: SignatureVerifier;
  readonly keySource: KeySource;
  /** The body must parse as JSON: the scheme's payloads are JSON, or the key is read from the body. */
  readonly requiresJson: boolean;
  /**
   * The scheme signs no timestamp, so a captured body verifies at any age: the route keeps a
   * replay memory that outlives the record (store/replay-memory.ts).
   */
  readonly replayMemory: boolean;
  /** A route ordered per entity (`orderBy`): reads the entity from the parsed body. */
  readonly entitySource?: EntitySource;
}

/** Schemes whose senders always send JSON. Slack's Events API is JSON; its slash commands are not supported. */
const JSON_SCHEMES = new Set(['standard-webhooks', 'stripe', 'github', 'shopify', 'slack']);

export function prepareRoutes(routes: readonly ResolvedRoute[]): ReadonlyMap<string, PreparedRoute> {
  return new Map(
    routes.map((route) => [
      route.name,
      {
        config: route,
        verifier: createVerifier(route.signature),
        keySource: keySourceFor(route.signature.scheme, route.key),
        requiresJson: JSON_SCHEMES.has(route.signature.scheme) || keySourceReadsBody(route.signature.scheme, route.key) || route.orderBy !== undefined,
        replayMemory: needsReplayMemory(route.signature.scheme),
        ...(route.orderBy === undefined ? {} : { entitySource: entitySourceFor(route.orderBy) }),
      },
    ]),
  );
}
