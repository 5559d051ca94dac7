import type { ResolvedRoute } from '../config/resolve-config.ts';
import { keySourceFor, keySourceReadsBody, needsReplayMemory } from '../domain/idempotency-key.ts';
import type { KeySource } from '../domain/idempotency-key.ts';
import { entitySourceFor } from '../domain/entity-order.ts';
import type { EntitySource } from '../domain/entity-order.ts';
import { createVerifier } from '../domain/signatures/create-verifier.ts';
import type { SignatureVerifier } from '../domain/signatures/signature-verifier.ts';
import { ANSWER_MARGIN_MS } from './answer-margin.ts';
import type { DuplicateContext, IngestContext, Receiver, Step } from './ingest-context.ts';
import type { IngestDeps } from './ingest-delivery.ts';
import { answerAccepted } from './steps/answer-accepted.ts';
import { answerDuplicate } from './steps/answer-duplicate.ts';
import { answerSlackHandshake } from './steps/answer-slack-handshake.ts';
import { checkReplayBeforeKeep } from './steps/check-replay-before-keep.ts';
import { checkReplayMemory } from './steps/check-replay-memory.ts';
import { claim } from './steps/claim.ts';
import { countRepeats } from './steps/count-repeats.ts';
import { deriveKey } from './steps/derive-key.ts';
import { keepPayload } from './steps/keep-payload.ts';
import { markDuplicate } from './steps/mark-duplicate.ts';
import { placeIfAbsent } from './steps/place-if-absent.ts';
import { readEntity } from './steps/read-entity.ts';
import { refuseLargeBody } from './steps/refuse-large-body.ts';
import { refuseReusedKey } from './steps/refuse-reused-key.ts';
import { resend } from './steps/resend.ts';
import { sendWork } from './steps/send-work.ts';
import { stageBody } from './steps/stage-body.ts';
import { takePlace } from './steps/take-place.ts';
import { tripOnThreshold } from './steps/trip-on-threshold.ts';
import { verify } from './steps/verify.ts';

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

/** A route's steps: up to the claim, then those of a created record or those of a duplicate. */
export interface RouteSteps {
  readonly arrival: readonly Step[];
  readonly created: readonly Step[];
  readonly duplicate: readonly Step<DuplicateContext>[];
}

/** A prepared route with its steps for one receiver. */
export interface IngestRoute extends PreparedRoute {
  readonly steps: RouteSteps;
}

/** Every route of a receiver with its steps, and the receiver's ports, its defaults applied. */
export interface IngestPipeline {
  readonly receiver: Receiver;
  readonly routes: ReadonlyMap<string, IngestRoute>;
}

/** IngestDeps.resendAfterMs when none is given. */
export const DEFAULT_RESEND_AFTER_MS = 60_000;

/** Builds every route's steps once, and applies the receiver's defaults once. */
export function prepareIngest(deps: IngestDeps): IngestPipeline {
  const { store, queue, secrets, now } = deps;
  const receiver = { store, queue, secrets, now, resendAfterMs: deps.resendAfterMs ?? DEFAULT_RESEND_AFTER_MS, answerMarginMs: deps.answerMarginMs ?? ANSWER_MARGIN_MS };
  return { receiver, routes: new Map([...deps.routes].map(([name, route]) => [name, { ...route, steps: stepsFor(route, deps) }])) };
}

/**
 * The order of the ingest's reads and writes, for one route of one receiver. A feature the route
 * or the receiver lacks is a step left out, never an `if` on the way of every delivery.
 */
export function stepsFor(route: PreparedRoute, { bodies, order, breaker }: Pick<IngestDeps, 'bodies' | 'order' | 'breaker'>): RouteSteps {
  const lines = route.entitySource !== undefined ? order : undefined;
  return {
    arrival: steps(
      verify,
      route.config.signature.scheme === 'slack' && answerSlackHandshake,
      deriveKey,
      route.entitySource !== undefined && readEntity(route.entitySource),
      bodies === undefined ? refuseLargeBody : stageBody(bodies),
      claim,
    ),
    created: steps(
      route.replayMemory && checkReplayMemory,
      sendWork,
      lines !== undefined && takePlace(lines),
      answerAccepted,
    ),
    duplicate: steps(
      refuseReusedKey,
      route.replayMemory && checkReplayBeforeKeep,
      keepPayload,
      lines !== undefined && placeIfAbsent(lines),
      countRepeats,
      resend,
      breaker !== undefined && tripOnThreshold(breaker),
      markDuplicate,
      answerDuplicate,
    ),
  };
}

function steps<C extends IngestContext>(...list: readonly (Step<C> | false)[]): Step<C>[] {
  return list.filter((step) => step !== false);
}
