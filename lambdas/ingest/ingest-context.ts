/**
 * One delivery's state as its route's steps fill it in, and the shape of a step, after middy's
 * `runMiddlewares`: a step returns an outcome to stop, or undefined to go on.
 */
import type { EventRecord, Payload, StoredAnswer } from '../domain/event-record.ts';
import { MalformedBodyError } from '../domain/errors.ts';
import type { ClaimResult, IngestEventStore } from '../ports/event-store.ts';
import type { SecretSource } from '../ports/secret-source.ts';
import type { WorkQueue } from '../ports/work-queue.ts';
import type { BreakerResult } from './circuit-breaker.ts';
import type { IncomingDelivery, IngestOutcome } from './ingest-delivery.ts';
import type { PreparedRoute } from './prepared-route.ts';

/** The receiver's ports as the steps read them, every default applied once (prepareIngest). */
export interface Receiver {
  readonly store: IngestEventStore;
  readonly queue: WorkQueue;
  readonly secrets: SecretSource;
  readonly now: () => number;
  readonly resendAfterMs: number;
  readonly answerMarginMs: number;
}

/** One delivery. The steps run in the order stepsFor gives, and each reads only what an earlier one set. */
export interface IngestContext {
  readonly receiver: Receiver;
  readonly route: PreparedRoute;
  readonly delivery: IncomingDelivery;
  /** Read once, as the handler started: the arrival every clock comparison uses. */
  readonly now: number;
  /** The body as JSON, parsed on first use only; a 400 when it is not JSON. */
  readonly json: () => unknown;
  /** Set by steps/derive-key.ts, with the answer, the record and the payload below. */
  key: string;
  accepted: StoredAnswer;
  record: EventRecord;
  /** What the work message carries (steps/stage-body.ts puts a large body's pointer in its place). */
  payload: Payload;
  /** Set by steps/read-entity.ts, on a route ordered per entity only (only its place steps read it). */
  entity: string;
  /** Set by steps/stage-body.ts when this delivery wrote its body's object itself. */
  bodyWrittenAtMs?: number;
  /** Set by steps/claim.ts. */
  claim: ClaimResult;
  placeFailed: boolean;
  marked: boolean;
}

/** A delivery whose claim found the key taken and live: `old` is the record as it stood. */
export interface DuplicateContext extends IngestContext {
  readonly claim: Extract<ClaimResult, { kind: 'exists' }>;
  readonly old: EventRecord;
  /** Our earlier answer was a 5xx, our own failure: never replayed. */
  readonly answeredFailure: boolean;
  /** Set by steps/count-repeats.ts. */
  repeats: number | undefined;
  counted: boolean;
  resent: boolean;
  breaker?: BreakerResult;
}

export type Step<C extends IngestContext = IngestContext> = (ctx: C) => Promise<IngestOutcome | undefined> | IngestOutcome | undefined;

/** A delivery's context before its first step: what every route knows of it. */
export function contextOf(receiver: Receiver, route: PreparedRoute, delivery: IncomingDelivery): IngestContext {
  let parsed: { value: unknown } | undefined;
  const json = (): unknown => {
    if (parsed === undefined) {
      try {
        parsed = { value: JSON.parse(delivery.rawBody.toString('utf8')) as unknown };
      } catch (err) {
        throw new MalformedBodyError('The body is not valid JSON.', { cause: err });
      }
    }
    return parsed.value;
  };
  // The rest is set by the steps, in the order stepsFor guarantees.
  return { receiver, route, delivery, now: receiver.now(), json, placeFailed: false, marked: true } as IngestContext;
}

/** The same context, for the duplicate's steps. */
export function duplicateOf(ctx: IngestContext, claim: DuplicateContext['claim']): DuplicateContext {
  const old = claim.record;
  return Object.assign(ctx, { claim, old, answeredFailure: old.answer.status >= 500, repeats: undefined, counted: true, resent: false });
}

/** Runs the steps in order until one returns an outcome; undefined when none did. */
export async function runSteps<C extends IngestContext>(steps: readonly Step<C>[], ctx: C): Promise<IngestOutcome | undefined> {
  for (const step of steps) {
    const outcome = await step(ctx);
    if (outcome !== undefined) return outcome;
  }
  return undefined;
}

/** Runs a list whose last step always answers. */
export async function answered<C extends IngestContext>(steps: readonly Step<C>[], ctx: C): Promise<IngestOutcome> {
  const outcome = await runSteps(steps, ctx);
  if (outcome === undefined) throw new Error(`no step answered delivery ${ctx.route.config.name}/${ctx.key}`);
  return outcome;
}
