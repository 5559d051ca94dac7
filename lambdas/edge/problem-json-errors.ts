/**
 * middy middleware: every error leaves as RFC 9457 problem+json. RetryproofErrors keep
 * their status (4xx reach the caller as they are; 503 tells the sender to retry);
 * anything else is logged and answered with a generic 500.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { RetryproofError } from '../domain/errors.ts';
import { problemOf, problemResponse } from './problem-json.ts';

export interface ProblemJsonErrorsOptions {
  /** Called once per error, before the answer is built; for logs and metrics. */
  readonly onProblem?: (error: unknown, status: number) => void;
}

export function problemJsonErrors(
  options: ProblemJsonErrorsOptions = {},
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const onError: middy.MiddlewareFn<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> = (request) => {
    // Another middleware already answered: keep its answer.
    if (request.response !== undefined && request.response !== null) return;
    const error = request.error;
    const problem = problemOf(error, request.event.rawPath);
    options.onProblem?.(error, problem.status);
    request.response = problemResponse(problem);
  };
  return { onError };
}

/** True for errors whose status is ours to blame (5xx). */
export function isServerError(error: unknown): boolean {
  return !(error instanceof RetryproofError) || error.status >= 500;
}
