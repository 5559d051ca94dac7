/**
 * RFC 9457 problem details: the body of every refusal. 5xx answers say nothing of
 * the cause; the logs have it.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { RetryproofError } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance?: string;
}

/** The problem for any thrown value; an unknown error becomes a bare 500. */
export function problemOf(error: unknown, instance?: string): ProblemDetails {
  if (error instanceof RetryproofError) {
    return { type: error.type, title: error.title, status: error.status, detail: error.message, ...(instance === undefined ? {} : { instance }) };
  }
  return {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    detail: 'The delivery could not be processed; retry it.',
    ...(instance === undefined ? {} : { instance }),
  };
}

export function problemResponse(problem: ProblemDetails): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: problem.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store' },
    body: JSON.stringify(problem),
  };
}
