import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { ingestFixture, SCHEME_ROUTES } from '../support/ingest-fixture.ts';
import type { IngestFixture } from '../support/ingest-fixture.ts';

const ROUTE_NAMES = SCHEME_ROUTES.map((r) => r.name);
const SIGNATURE_HEADERS = [
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'stripe-signature',
  'x-hub-signature-256',
  'x-github-hook-id',
  'x-github-delivery',
  'x-shopify-hmac-sha256',
  'x-shopify-webhook-id',
  'x-slack-signature',
  'x-slack-request-timestamp',
  'x-signature',
  'idempotency-key',
  'content-type',
];

function assertWellFormedAnswer(answer: APIGatewayProxyStructuredResultV2): void {
  expect(answer.statusCode).toBeGreaterThanOrEqual(200);
  expect(answer.statusCode).toBeLessThan(500);
  if ((answer.statusCode ?? 0) >= 400) {
    expect(answer.headers?.['content-type']).toBe('application/problem+json');
    const problem = JSON.parse(answer.body ?? '') as { status: number; title: string; type: string };
    expect(problem.status).toBe(answer.statusCode);
    expect(problem.title.length).toBeGreaterThan(0);
  }
}

describe('the ingest handler on arbitrary input, with a healthy store and queue', () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await ingestFixture();
  });

  it('never throws or answers 5xx to random headers and bodies, and refuses with 4xx problem+json', async () => {
    const headerValue = fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('', 'v1,', 't=1,v1=zz', 'sha256=', 'v0='));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...ROUTE_NAMES), fc.string({ maxLength: 20 })),
        fc.dictionary(fc.oneof(fc.constantFrom(...SIGNATURE_HEADERS), fc.string({ maxLength: 20 })), headerValue, { maxKeys: 8 }),
        fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 3 })),
        async (route, headers, body) => {
          const answer = await fx.invoke({ route, body, headers });
          assertWellFormedAnswer(answer);
          expect(answer.statusCode).not.toBe(202);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('answers 202 or a 4xx to validly signed deliveries with random keys and bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTE_NAMES),
        fc.oneof(fc.string({ minLength: 0, maxLength: 300 }), fc.uuid()),
        fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 200 })),
        async (route, key, rawBody) => {
          const config = SCHEME_ROUTES.find((r) => r.name === route)!;
          // Put the random key wherever this scheme's sender puts its id.
          let body = rawBody;
          const keyHeaders: Record<string, string> = {};
          if (route === 'stripe' || route === 'slack') {
            try {
              const doc = JSON.parse(rawBody) as unknown;
              if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
                body = JSON.stringify({ ...doc, [route === 'stripe' ? 'id' : 'event_id']: key });
              }
            } catch {
              // Not JSON: the handler must answer 400.
            }
          } else if (route === 'github') {
            keyHeaders['x-github-hook-id'] = '1';
            keyHeaders['x-github-delivery'] = key;
          } else if (route === 'shopify') {
            keyHeaders['x-shopify-webhook-id'] = key;
          } else if (route === 'hmac-sha256') {
            keyHeaders['idempotency-key'] = key;
          }
          const signed = signDelivery(config.signature, config.secret, Buffer.from(body), {
            nowSeconds: Math.floor(Date.now() / 1000),
            id: key,
          });
          const answer = await fx.invoke({ route, body, headers: { ...keyHeaders, ...signed } });
          assertWellFormedAnswer(answer);
          expect([202, 400, 401, 422]).toContain(answer.statusCode);
        },
      ),
      { numRuns: 150 },
    );
  });
});
