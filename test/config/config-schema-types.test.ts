/**
 * RetryproofConfig stays a hand-written interface (its docs, readonly members and named
 * types are what users read); the schema that checks it must accept exactly that shape.
 * These assertions are checked by `tsc` (npm run lint), not at run time.
 */
import type { InferInput } from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import type { RetryproofConfigSchema } from '../../lambdas/config/config-schema.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';

/** The same type with every readonly removed, at any depth: the schema infers mutable types. */
type Writable<T> = T extends readonly (infer U)[]
  ? Writable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: Writable<T[K]> }
    : T;

type SchemaInput = Writable<InferInput<typeof RetryproofConfigSchema>>;
type Interface = Writable<RetryproofConfig>;

describe('RetryproofConfigSchema', () => {
  it('accepts exactly the RetryproofConfig interface, field for field', () => {
    expectTypeOf<SchemaInput>().toEqualTypeOf<Interface>();
  });

  it('agrees on each route and each signature scheme', () => {
    expectTypeOf<SchemaInput['routes'][number]>().toEqualTypeOf<Interface['routes'][number]>();
    expectTypeOf<SchemaInput['routes'][number]['signature']>().toEqualTypeOf<Interface['routes'][number]['signature']>();
    expectTypeOf<NonNullable<SchemaInput['actions']>>().toEqualTypeOf<NonNullable<Interface['actions']>>();
  });
});
