/**
 * The ingest Lambda as a middy handler over HTTP API payload format 2.0. The adapter is
 * thin: turn the event into a delivery, call the use case, turn the outcome into an answer.
 */
import middy from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { DuplicateDeliveryError, UnauthorizedError } from '../domain/errors.ts';
import { deliveryId } from '../domain/event-record.ts';
import { isServerError, problemJsonErrors } from '../edge/problem-json-errors.ts';
import { problemOf, problemResponse } from '../edge/problem-json.ts';
import { ingestDelivery, pipelineOf } from './ingest-delivery.ts';
import type { IncomingDelivery, IngestDeps, IngestOutcome } from './ingest-delivery.ts';
import { recordAnswer, recordDuplicate } from './ingest-metrics.ts';

export interface IngestHandlerDeps extends IngestDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** Turns an HTTP API v2 event into a delivery: raw bytes, lowercase header names. */
export function deliveryOf(event: APIGatewayProxyEventV2): IncomingDelivery {
  // No prototype: an absent header named `constructor` must read as undefined.
  const headers: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
  for (const [name, value] of Object.entries(event.headers)) headers[name.toLowerCase()] = value;
  const body = event.body ?? '';
  return {
    method: event.requestContext.http.method,
    routeName: event.pathParameters?.route ?? '',
    headers,
    rawBody: event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8'),
    bodyEncoding: event.isBase64Encoded ? 'base64' : 'utf8',
  };
}

type Response = APIGatewayProxyStructuredResultV2;
type Outcome<K extends IngestOutcome['kind']> = Extract<IngestOutcome, { kind: K }>;

export function createIngestHandler(deps: IngestHandlerDeps) {
  const { logger, metrics } = deps;
  // Every route's steps are built here, once per cold start, not by the first delivery.
  pipelineOf(deps);
  const metricRoute = (event: APIGatewayProxyEventV2): string => {
    const route = event.pathParameters?.route ?? '';
    return deps.routes.has(route) ? route : 'unknown';
  };
  return middy<APIGatewayProxyEventV2, Response>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(observeErrors(deps, metricRoute))
    .use(problemJsonErrors())
    .handler(async (event, context): Promise<Response> => {
      // Lambda's own count of the invocation's time left (a context without one: unbounded).
      const timeLeft = typeof (context as Partial<Context> | undefined)?.getRemainingTimeInMillis === 'function' ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {};
      const outcome = await ingestDelivery(deps, { ...deliveryOf(event), ...timeLeft });
      if (outcome.kind === 'handshake') return answerHandshake(deps, outcome);
      logger.appendKeys({ route: outcome.route, key: outcome.key });
      if (outcome.markFailed === true) {
        // why: docs/architecture.md#breaker-bookkeeping
        logger.warn('answer not marked for the circuit breaker', { kind: outcome.kind });
      }
      return outcome.kind === 'accepted' ? answerAccepted(deps, outcome) : answerDuplicate(deps, outcome, event.rawPath);
    });
}

/** Counts and logs every refusal; runs after problemJsonErrors has built the answer. */
function observeErrors({ logger, metrics }: IngestHandlerDeps, metricRoute: (event: APIGatewayProxyEventV2) => string): middy.MiddlewareObj<APIGatewayProxyEventV2, Response> {
  return {
    onError: (request) => {
      const status = problemOf(request.error).status;
      recordAnswer(metrics, metricRoute(request.event), status);
      if (request.error instanceof UnauthorizedError) {
        // why: docs/architecture.md#log-lines (the sender gets a bare 401; the reason stays here)
        logger.warn('delivery refused', { status, reason: request.error.reason });
      } else if (isServerError(request.error)) {
        logger.error('delivery failed', { status, error: request.error });
      } else {
        logger.info('delivery refused', { status, problem: request.error?.name });
      }
    },
  };
}

function answerHandshake({ logger, metrics }: IngestHandlerDeps, outcome: Outcome<'handshake'>): Response {
  recordAnswer(metrics, outcome.route, 200);
  logger.info('slack url_verification answered');
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ challenge: outcome.challenge }) };
}

function answerAccepted({ logger, metrics }: IngestHandlerDeps, outcome: Outcome<'accepted'>): Response {
  // why: docs/architecture.md#a-place-follows-its-message (its worker places it)
  if (outcome.placeFailed === true) logger.warn('place in the entity line not taken; the executor places it');
  recordAnswer(metrics, outcome.route, outcome.answer.status);
  logger.info('delivery accepted', { status: outcome.answer.status, ...(outcome.retriedClaim === true ? { retriedClaim: true } : {}) });
  return { statusCode: outcome.answer.status, headers: { 'content-type': 'application/json' }, body: outcome.answer.body };
}

function answerDuplicate({ logger, metrics }: IngestHandlerDeps, outcome: Outcome<'duplicate'>, rawPath: string): Response {
  recordDuplicate(metrics, outcome);
  if (outcome.breaker !== undefined) {
    // why: docs/architecture.md#breaker-reaction
    const { notice } = outcome.breaker;
    logger.warn('circuit breaker tripped', {
      breaker: outcome.breaker.outcome,
      repeats: outcome.repeats,
      hits: outcome.hits,
      ...(notice === undefined ? {} : { notice }),
    });
  }
  // why: docs/architecture.md#log-lines (a duplicate's facts ride in its metric document: one line, not two)
  metrics.addMetadata('key', outcome.key);
  metrics.addMetadata('hits', String(outcome.hits));
  if (outcome.answerAs === 'refuse') {
    const problem = problemOf(new DuplicateDeliveryError(deliveryId(outcome.route, outcome.key)), rawPath);
    recordAnswer(metrics, outcome.route, problem.status);
    metrics.addMetadata('duplicate', 'refused');
    return problemResponse(problem);
  }
  recordAnswer(metrics, outcome.route, outcome.answer.status);
  const replay = outcome.answerAs === 'replay';
  metrics.addMetadata('duplicate', replay ? 'replayed' : 'accepted after our failure');
  if (outcome.resent) metrics.addMetadata('resent', 'true');
  if (outcome.replayAfterExpiry === true) metrics.addMetadata('replayAfterExpiryAgeMs', String(outcome.ageMs));
  return {
    statusCode: outcome.answer.status,
    headers: { 'content-type': 'application/json', ...(replay ? { 'idempotent-replayed': 'true' } : {}) },
    body: outcome.answer.body,
  };
}
