/**
 * The ingest use case: each delivery runs its route's list of steps (prepared-route.ts,
 * stepsFor): refuse, verify, derive the key, stage the body, claim; then the steps of a created
 * record or of a duplicate. It knows nothing of API Gateway, middy or the SDK.
 */
import type { StoredAnswer } from '../domain/event-record.ts';
import type { EntityOrder } from '../ports/entity-order.ts';
import type { BodyObjects } from '../ports/body-objects.ts';
import type { IngestEventStore } from '../ports/event-store.ts';
import type { SecretSource } from '../ports/secret-source.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { BreakerDeps, BreakerResult } from './circuit-breaker.ts';
import { answered, contextOf, duplicateOf, runSteps } from './ingest-context.ts';
import { prepareIngest } from './prepared-route.ts';
import type { IngestPipeline, PreparedRoute } from './prepared-route.ts';
import { refuse } from './steps/refuse.ts';

export { ANSWER_MARGIN_MS, answerMarginMsFor } from './answer-margin.ts';

/** A delivery as the edge received it. Header names are lowercase. */
export interface IncomingDelivery {
  readonly method: string;
  readonly routeName: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: Buffer;
  /** How the body is kept: text as received, or base64 when API Gateway delivered binary. */
  readonly bodyEncoding: 'utf8' | 'base64';
  /** The invocation's time left, in ms (Lambda's context.getRemainingTimeInMillis). @default - unbounded */
  readonly timeLeftMs?: () => number;
}

export interface IngestDeps {
  readonly routes: ReadonlyMap<string, PreparedRoute>;
  readonly store: IngestEventStore;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  /**
   * The bucket of large bodies (the S3 claim check, domain/body-object.ts). @default - none: a
   * body above its route's claimCheckAboveBytes, or one SQS cannot carry, is refused
   */
  readonly bodies?: BodyObjects;
  /**
   * The lines of routes ordered per entity (`orderBy`): a new record takes its place before its
   * message goes out and its 202. @default - none: no places are taken here, and the executor
   * places each record when it first takes it
   */
  readonly order?: EntityOrder;
  readonly now: () => number;
  /**
   * A duplicate that finds the record RECEIVED this long after its last message re-sends
   * it: the first send may have been lost with a crashed function. It must be longer than
   * the queue's visibility timeout, the longest a live message of a RECEIVED record hides.
   * @default 60_000 (DEFAULT_RESEND_AFTER_MS, applied once, as the routes' steps are built)
   */
  readonly resendAfterMs?: number;
  /** The circuit breaker; without it, no route is ever paused. */
  readonly breaker?: BreakerDeps;
  /**
   * How long after the mark a copy must arrive to count as a repeat (ANSWER_MARGIN_MS). Only
   * the local stack, whose functions share one process and one clock, sets it lower.
   * @default ANSWER_MARGIN_MS (applied once, as the routes' steps are built)
   */
  readonly answerMarginMs?: number;
}

/** What happened, for the answer, the logs and the metrics. */
export type IngestOutcome =
  | {
      readonly kind: 'accepted';
      readonly route: string;
      readonly key: string;
      readonly answer: StoredAnswer;
      /** The claim committed, lost its answer and was retried by the SDK: still this delivery's own creation. */
      readonly retriedClaim?: boolean;
      /**
       * The breaker's bookkeeping failed (markAnswered, or excuseRacingCopy): the answer stands, but
       * the breaker starts counting one copy later (or counts one racing copy).
       */
      readonly markFailed?: boolean;
      /**
       * Its place in its entity's line could not be taken (DynamoDB failed): the work is accepted
       * all the same, and takes its place when a worker first takes it.
       */
      readonly placeFailed?: boolean;
    }
  /** Slack's url_verification: answered with its challenge, nothing stored or queued. */
  | { readonly kind: 'handshake'; readonly route: string; readonly challenge: string }
  | {
      readonly kind: 'duplicate';
      readonly route: string;
      readonly key: string;
      readonly answer: StoredAnswer;
      /**
       * How the sender is answered: `replay` the stored 2xx (with Idempotent-Replayed), `refuse`
       * with 409 on a strict route, or `accept` when our earlier answer was a 5xx: the sender has
       * no acceptance yet, so this copy gets the first one, a plain 202, on any route.
       */
      readonly answerAs: 'replay' | 'refuse' | 'accept';
      /** The status the previous answer had: 2xx means the ack was lost, 5xx our failure. */
      readonly previousStatus: number;
      readonly hits: number;
      /** Deliveries of the key that came after we had answered 2xx (lost acknowledgements, replays). */
      readonly repeats: number | undefined;
      readonly ageMs: number;
      readonly ttlSeconds: number;
      readonly resent: boolean;
      /** Set when this delivery tripped the circuit breaker. */
      readonly breaker?: BreakerResult;
      /**
       * A capture replayed after its record expired, on a route that signs no timestamp: the
       * replay memory remembered the body (store/replay-memory.ts). Nothing ran; ageMs is the
       * age of the first acceptance.
       */
      readonly replayAfterExpiry?: boolean;
      /** As on 'accepted'. */
      readonly markFailed?: boolean;
    };

const pipelines = new WeakMap<IngestDeps, IngestPipeline>();

/** The steps of every route for these deps, built once (prepareIngest): at cold start, or by the first delivery. */
export function pipelineOf(deps: IngestDeps): IngestPipeline {
  let pipeline = pipelines.get(deps);
  if (pipeline === undefined) {
    pipeline = prepareIngest(deps);
    pipelines.set(deps, pipeline);
  }
  return pipeline;
}

/**
 * Handles one delivery: its route's steps in order, until one answers. Throws a RetryproofError
 * for every refusal; the edge maps it to problem+json. A delivery that fails verification writes nothing.
 */
export async function ingestDelivery(deps: IngestDeps, delivery: IncomingDelivery): Promise<IngestOutcome> {
  const { receiver, routes } = pipelineOf(deps);
  const route = refuse(routes, delivery);
  const ctx = contextOf(receiver, route, delivery);
  const stopped = await runSteps(route.steps.arrival, ctx);
  if (stopped !== undefined) return stopped;
  const { claim } = ctx;
  if (claim.kind === 'created') return answered(route.steps.created, ctx);
  return answered(route.steps.duplicate, duplicateOf(ctx, claim));
}
