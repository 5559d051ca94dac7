/**
 * Where each delivery's idempotency key comes from: the scheme's own id, or the route's
 * template. Keys are 1 to 255 printable ASCII characters; anything else is refused with 400.
 *
 * A key must come from content the sender's signature covers. GitHub, Shopify and the
 * generic `hmac-sha256` scheme sign the body only, and their delivery-id headers are not
 * signed: a key read from `X-GitHub-Delivery` would let anyone who captured one genuine
 * delivery post it again under a fresh id, as a new key and one more payout per replay.
 * So their default key is the body's SHA-256, and a template may read only signed headers.
 */
import type { SignatureSchemeName } from './signatures/signature-config.ts';
import { InvalidKeyError } from './errors.ts';
import { parseKeyTemplate, resolveJsonPointer } from './key-template.ts';
import type { KeyTemplatePart } from './key-template.ts';
import { SLACK_HEADERS } from './signatures/slack.ts';
import { STANDARD_WEBHOOKS_HEADERS } from './signatures/standard-webhooks.ts';

export const MAX_KEY_LENGTH = 255;
const PRINTABLE = /^[\x20-\x7e]+$/;

/** What a key source may read. `json()` parses lazily and throws MalformedBodyError. */
export interface KeyInput {
  readonly headers: Readonly<Record<string, string | undefined>>;
  json(): unknown;
  /** The SHA-256 of the raw body, hex (fingerprint.ts). */
  fingerprint(): string;
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

/** The prefix of a key made of the body's SHA-256. */
export const BODY_KEY_PREFIX = 'sha256:';

/** The body's own hash as the key: a replayed body is the same key whatever headers come with it. */
const bodyHashKey: KeySource = (input) => `${BODY_KEY_PREFIX}${input.fingerprint()}`;

/**
 * The headers each scheme's signature covers. Only these may appear in a key template:
 * every other header can be changed by whoever replays a captured delivery.
 */
export const SIGNED_HEADERS: Readonly<Record<SignatureSchemeName, readonly string[]>> = {
  'standard-webhooks': [STANDARD_WEBHOOKS_HEADERS.id, STANDARD_WEBHOOKS_HEADERS.timestamp],
  stripe: [],
  github: [],
  shopify: [],
  slack: [SLACK_HEADERS.timestamp],
  'hmac-sha256': [],
};

/**
 * The sender's own delivery-id headers, kept with every record of the scheme (whatever the
 * route's keepHeaders), so an operator can match a record to the sender's delivery log
 * although the key is the body's hash. Only the first delivery's values are kept.
 */
export const DELIVERY_ID_HEADERS: Readonly<Record<SignatureSchemeName, readonly string[]>> = {
  'standard-webhooks': [],
  stripe: [],
  github: ['x-github-delivery', 'x-github-hook-id', 'x-github-event'],
  shopify: ['x-shopify-webhook-id', 'x-shopify-topic'],
  slack: [],
  'hmac-sha256': ['idempotency-key'],
};

/**
 * The default key source of each scheme. Each reads signed content only: Standard Webhooks
 * signs `webhook-id`, Stripe and Slack sign the body that holds their event id, and the
 * body-only schemes fall back to the body's hash (a genuine redelivery sends the same bytes).
 */
const SCHEME_KEY_SOURCES: Readonly<Record<SignatureSchemeName, KeySource>> = {
  'standard-webhooks': (input) => required(header(input, STANDARD_WEBHOOKS_HEADERS.id), 'the webhook-id header'),
  stripe: (input) => required(bodyField(input, '/id'), 'the body field "id"'),
  github: bodyHashKey,
  shopify: bodyHashKey,
  slack: (input) => required(bodyField(input, '/event_id'), 'the body field "event_id"'),
  'hmac-sha256': bodyHashKey,
};

/**
 * The template's placeholders that read headers the scheme does not sign, lowercase. A
 * route whose template reads any is refused at synth (resolve-config.ts).
 */
export function unsignedTemplateHeaders(scheme: SignatureSchemeName, template: string): string[] {
  const signed = new Set(SIGNED_HEADERS[scheme]);
  return parseKeyTemplate(template)
    .filter((p): p is Extract<KeyTemplatePart, { kind: 'header' }> => p.kind === 'header')
    .map((p) => p.name)
    .filter((name) => !signed.has(name));
}

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

/** True when the route's key is the body's SHA-256: a body-only scheme with no template. */
export function keyIsBodyHash(scheme: SignatureSchemeName, template: string | undefined): boolean {
  return template === undefined && SCHEME_KEY_SOURCES[scheme] === bodyHashKey;
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
