import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as errors from '../../lambdas/domain/errors.ts';
import { problemOf } from '../../lambdas/edge/problem-json.ts';

interface OpenApi {
  openapi: string;
  paths: Record<string, { post: { responses: Record<string, { content?: Record<string, { example?: { type?: string } }>; headers?: object }> } }>;
}

const spec = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as OpenApi;
const responses = spec.paths['/webhooks/{route}']?.post.responses ?? {};

/** One instance of every error the edge can answer with. */
const ERRORS: errors.RetryproofError[] = [
  new errors.InvalidKeyError('x'),
  new errors.MalformedBodyError('x'),
  new errors.UnauthorizedError('bad-signature'),
  new errors.UnknownRouteError('x'),
  new errors.MethodNotAllowedError('PUT'),
  new errors.PayloadTooLargeError(2, 1),
  new errors.KeyReusedError('x'),
  new errors.DuplicateDeliveryError('x'),
  new errors.DependencyError('SQS'),
];

describe('the OpenAPI description of POST /webhooks/{route}', () => {
  it('is OpenAPI 3.1', () => {
    expect(spec.openapi).toBe('3.1.0');
  });

  it('documents every status the handler can answer, with the problem type it really uses', () => {
    for (const error of ERRORS) {
      const documented = responses[String(error.status)];
      expect(documented, `status ${error.status}`).toBeDefined();
      const example = documented?.content?.['application/problem+json']?.example;
      if (error.status !== 400) expect(example?.type).toBe(error.type);
    }
    expect(responses['500']?.content?.['application/problem+json']?.example?.type).toBe(problemOf(new Error('x')).type);
    expect(Object.keys(responses).sort()).toEqual(['200', '202', '400', '401', '404', '405', '409', '413', '422', '500', '503']);
  });

  it('documents the Idempotent-Replayed header on the 202', () => {
    expect(responses['202']?.headers).toHaveProperty('Idempotent-Replayed');
  });
});
