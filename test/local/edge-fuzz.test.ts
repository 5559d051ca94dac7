import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import fc from 'fast-check';
import { DOCUMENTED_STATUSES, edgeProperty, formatStatuses, newTally, startEdgeFuzz } from '../fuzz/edge-fuzz.ts';
import type { EdgeFuzz } from '../fuzz/edge-fuzz.ts';
import { FUZZ_ROUTES } from '../fuzz/edge-cases.ts';
import type { EdgeCase } from '../fuzz/edge-cases.ts';

/** Sized for well under 30 s on two busy cores; `npm run fuzz -- --runs N` runs more. */
const RUNS = 300;

const GENERIC = FUZZ_ROUTES.findIndex((r) => r.name === 'generic');

/** A signed JSON delivery to the generic route; each regression below changes one thing. */
const plain: EdgeCase = {
  method: 'POST',
  route: GENERIC,
  target: { kind: 'route', style: 'plain', query: '' },
  contentType: 'application/json',
  key: { kind: 'fresh', id: '00000000-0000-4000-8000-000000000001' },
  signature: 'valid',
  body: { kind: 'document', data: { amount: 1 } },
  extra: [],
  nameCase: 'lower',
  chunked: false,
};

describe('the local gateway and the ingest handler on fuzzed requests', () => {
  let fuzz: EdgeFuzz;
  beforeAll(async () => {
    fuzz = await startEdgeFuzz({ dynamoEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') });
  });
  afterAll(async () => {
    await fuzz.close();
  });

  it('answers every request with a documented status below 500 and its body, logs no error, and writes nothing for a refusal', async () => {
    // Prepare
    const tally = newTally();
    // Act
    const details = await fc.check(edgeProperty(fuzz, tally), { numRuns: RUNS });
    // Assess: the property held, and the generators reached the edge's main answers.
    expect(details.failed ? `${String((details.errorInstance as Error | undefined)?.message)}\nreplay: npm run fuzz -- --seed ${details.seed} --path ${details.counterexamplePath ?? ''}` : 'held').toBe('held');
    expect(tally.runs).toBe(RUNS);
    const seen = [...tally.statuses.keys()];
    for (const status of [202, 400, 401, 404, 413]) expect(seen, formatStatuses(tally.statuses)).toContain(status);
    for (const status of seen) expect(DOCUMENTED_STATUSES).toContain(status);
  });

  it.each<[string, Partial<EdgeCase>, number]>([
    ['a path starting with "//" that URL would read as a host and port', { target: { kind: 'raw', target: '//a:b' } }, 404],
    ['a path that names a host before /webhooks/', { target: { kind: 'raw', target: '//x/webhooks/generic' } }, 404],
    ['a method the HTTP parser does not know', { method: 'FOO' }, 400],
    ['CONNECT', { method: 'CONNECT', target: { kind: 'raw', target: '127.0.0.1:80' } }, 404],
    ['a header byte the HTTP parser refuses', { extra: [{ name: 'x-odd', value: 'a\u0001b' }] }, 400],
    ['headers over the parser\'s 16 KiB', { extra: [{ name: 'x-big', value: 'h'.repeat(17_000) }] }, 400],
    ['an Expect other than 100-continue', { extra: [{ name: 'expect', value: 'nothing' }] }, 202],
    ['a body one byte over API Gateway\'s 10 MiB', { body: { kind: 'huge', delta: 1 } }, 413],
    ['query parameters named like Object.prototype members', { target: { kind: 'route', style: 'plain', query: '?toString=1&__proto__=2' } }, 202],
  ])('answers %s with a %i problem+json (or a 202), never a bare or missing answer', async (_name, change, expected) => {
    // Act
    const outcome = await fuzz.check({ ...plain, key: { kind: 'fresh', id: crypto.randomUUID() }, ...change });
    // Assess
    expect(outcome.violations).toEqual([]);
    expect(outcome.status).toBe(expected);
  });

  it('accepts a delivery to a route that keeps a header named "constructor" when the delivery has none', async () => {
    // Before the fix the absent header read as Object.prototype.constructor, and every such delivery got 503.
    const outcome = await fuzz.check({ ...plain, key: { kind: 'fresh', id: crypto.randomUUID() }, body: { kind: 'document', data: 'constructor' } });
    expect(outcome.violations).toEqual([]);
    expect(outcome.status).toBe(202);
  });
});
