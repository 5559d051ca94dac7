/**
 * Where each delivery's idempotency key comes from: the scheme's own id, or the route's
 * template. Keys are 1 to 255 printable ASCII characters; anything else is refused with 400.
 */
import type { SignatureSchemeName } from '../config/route-config.ts';
import { InvalidKeyError } from './errors.ts';
import { parseKeyTemplate, resolveJsonPointer } from './key-template.ts';
import type { KeyTemplatePart } from './key-template.ts';

export const MAX_KEY_LENGTH = 255;
const PRINTABLE = /^[\x20-\x7e]+$/;

/** What a key source may read. `json()` parses lazily and throws MalformedBodyError. */
export interface KeyInput {
  readonly headers: Readonly<Record<string, string | undefined>>;
  json(): unknown;
}

/** Derives the raw key of a delivery (not yet scoped by route). */
export type KeySource = (input: KeyInput) => string;

function header(input: KeyInput, name: string): string | undefined {
  const value = input.headers[name];
  return value === undefined || value === '' ? undefined : value;
}

function bodyField(input: KeyInput, pointer: string): string | undefined {
  const value = resolveJsonPointer(input.json(), pointer);
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function required(value: string | undefined, where: string): string {
  if (value === undefined) throw new InvalidKeyError(`The idempotency key was not found: ${where} is missing.`);
  return value;
}

/** The default key source of each scheme (DESIGN.md, "Keys, fingerprints, TTL"). */
const SCHEME_KEY_SOURCES: Readonly<Record<SignatureSchemeName, KeySource>> = {
  'standard-webhooks': (input) => required(header(input, 'webhook-id'), 'the webhook-id header'),
  stripe: (input) => required(bodyField(input, '/id'), 'the body field "id"'),
  // A hook id plus a delivery GUID: redeliveries keep the GUID, other hooks have other ids.
  github: (input) =>
    `${required(header(input, 'x-github-hook-id'), 'the X-GitHub-Hook-ID header')}:${required(
      header(input, 'x-github-delivery'),
      'the X-GitHub-Delivery header',
    )}`,
  shopify: (input) => required(header(input, 'x-shopify-webhook-id'), 'the X-Shopify-Webhook-Id header'),
  slack: (input) => required(bodyField(input, '/event_id'), 'the body field "event_id"'),
  'hmac-sha256': (input) =>
    required(header(input, 'idempotency-key') ?? header(input, 'x-idempotency-key'), 'the Idempotency-Key header'),
};

function templateSource(parts: readonly KeyTemplatePart[]): KeySource {
  return (input) =>
    parts
      .map((part) => {
        if (part.kind === 'literal') return part.text;
        if (part.kind === 'header') return required(header(input, part.name), `the ${part.name} header`);
        return required(bodyField(input, part.pointer), `the body field ${part.pointer}`);
      })
      .join('');
}

/** Builds a route's key source once, at cold start. */
export function keySourceFor(scheme: SignatureSchemeName, template: string | undefined): KeySource {
  return template === undefined ? SCHEME_KEY_SOURCES[scheme] : templateSource(parseKeyTemplate(template));
}

/** True when a route's key source reads the body, so the body must be JSON. */
export function keySourceReadsBody(scheme: SignatureSchemeName, template: string | undefined): boolean {
  if (template !== undefined) return parseKeyTemplate(template).some((p) => p.kind === 'body');
  return scheme === 'stripe' || scheme === 'slack';
}

/**
 * Checks a derived key: 1 to 255 printable ASCII characters.
 * @throws InvalidKeyError
 */
export function validateKey(key: string): string {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new InvalidKeyError(`The idempotency key must be 1 to ${MAX_KEY_LENGTH} characters; it has ${key.length}.`);
  }
  if (!PRINTABLE.test(key)) {
    throw new InvalidKeyError('The idempotency key must hold printable ASCII characters only.');
  }
  return key;
}
