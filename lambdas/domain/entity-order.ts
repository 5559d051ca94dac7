/**
 * Ordering per entity (issue 24), opt-in per route with `orderBy`: a template over the body's
 * fields (`{body:/data/object/customer}`), in the key template language, that names the entity
 * whose work must run one at a time, in the order the receiver accepted it.
 *
 * The line of one entity lives in the events table, beside the records (store/dynamodb-entity-order.ts):
 *   cursor   pk = ORDER#<route>#<entity hash>   sk = CURSOR          next: the place whose turn it is
 *   place    pk = ORDER#<route>#<entity hash>   sk = SEQ#<12 digits> key and receivedAt of the
 *                                                                    record that holds the place
 * A place is taken by the ingest right after its claim, before the 202, with one conditional put:
 * the order of those puts is the accepted order. A record runs only when the cursor stands at its
 * place; the cursor moves on only after its record's completion, so two runs of one entity never
 * overlap. See docs/ordering.md for the whole, and what waits how long.
 *
 * The entity is read from the body only, never a header: the executor finds it again in the bytes
 * it runs (their SHA-256 is the record's fingerprint), and the reconciler from the kept payload.
 */
import { createHash } from 'node:crypto';
import { MissingEntityError } from './errors.ts';
import { parseKeyTemplate, resolveJsonPointer } from './key-template.ts';
import type { KeyTemplatePart } from './key-template.ts';

/** How long an entity's value may be, as an idempotency key may. */
export const MAX_ENTITY_LENGTH = 255;

/** Reads a delivery's entity from its parsed body; throws MissingEntityError when a field is absent. */
export type EntitySource = (body: unknown) => string;

/**
 * Parses an `orderBy` template once, at cold start.
 * @throws Error when the template is malformed, or reads a header (the executor has no headers to read)
 */
export function entitySourceFor(template: string): EntitySource {
  const parts = parseKeyTemplate(template);
  const header = parts.find((p): p is Extract<KeyTemplatePart, { kind: 'header' }> => p.kind === 'header');
  if (header !== undefined) {
    throw new Error(`orderBy reads the body only ({body:/pointer}), not the ${header.name} header: the executor finds the entity again in the body it runs`);
  }
  return (body) => {
    const value = parts
      .map((part) => {
        if (part.kind !== 'body') return part.kind === 'literal' ? part.text : '';
        const field = resolveJsonPointer(body, part.pointer);
        if (typeof field === 'string' && field !== '') return field;
        if (typeof field === 'number' && Number.isFinite(field)) return String(field);
        throw new MissingEntityError(`The route runs its work in line by ${template}, and the body field ${part.pointer} is missing or not a string or number.`);
      })
      .join('');
    if (value.length > MAX_ENTITY_LENGTH) throw new MissingEntityError(`The ordering entity is ${value.length} characters long; at most ${MAX_ENTITY_LENGTH}.`);
    return value;
  };
}

/** The entity as the table names it: a hash, so no customer id is written in a key. */
export function entityHash(route: string, entity: string): string {
  return createHash('sha256').update(route).update('\0').update(entity).digest('hex').slice(0, 32);
}

/** Places are numbered from 1; the sort key pads them so that they sort as numbers. */
export const FIRST_PLACE = 1;
const PLACE_DIGITS = 12;

export function placeSortKey(place: number): string {
  return `SEQ#${String(place).padStart(PLACE_DIGITS, '0')}`;
}

export function placeOfSortKey(sk: string): number {
  return Number(sk.slice('SEQ#'.length));
}

export function linePartition(route: string, hash: string): string {
  return `ORDER#${route}#${hash}`;
}

export const CURSOR_SK = 'CURSOR';
