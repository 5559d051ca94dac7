/**
 * Where each delivery's idempotency key comes from: the scheme's own id, or the route's
 * template. Keys are 1 to 255 printable ASCII characters; anything else is refused with 400.
 *
 * A key must come from content the sender's signature covers. GitHub, Shopify and the
 * generic `hmac-sha256` scheme sign the body only, and their delivery-id headers are not
 * signed: a key read from `X-GitHub-Delivery` would let anyone who captured one genuine
 * delivery post it again under a fresh id, as a new key and one more payout per replay.
 * So their default key is the body's SHA-256, and a template may read only signed headers.
 *
 * A key must also be the same on every retry of one event. Standard Webhooks, Stripe and Slack
 * sign a timestamp, and a sender signs every retry afresh, with the time of that attempt: a
 * key read from a timestamp (or from a signature over one) is a new key on every retry, and
 * every retry a new effect. So a template may read no such header, whatever else it reads.
 */
import type { SignatureSchemeName } from './signatures/signature-config.ts';
import { InvalidKeyError } from './errors.ts';
import { parseKeyTemplate, resolveJsonPointer } from './key-template.ts';
import type { KeyTemplatePart } from './key-template.ts';
import { headerValue } from './signatures/delivery-headers.ts';
import { SLACK_HEADERS } from './signatures/slack.ts';
import { STANDARD_WEBHOOKS_HEADERS } from './signatures/standard-webhooks.ts';
import { STRIPE_SIGNATURE_HEADER } from './signatures/stripe.ts';

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

/** A key header, read with the verifiers' own normalisation: the key is the id the signature covers. */
function header(input: KeyInput, name: string): string | undefined {
  return headerValue(input.headers, name);
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
 * The headers a key template may read on each scheme: those its signature covers (every other
 * header can be changed by whoever replays a captured delivery) and that stay the same on
 * every retry of one event. The signed timestamps are left out: see RESIGNED_PER_RETRY.
 */
export const SIGNED_HEADERS: Readonly<Record<SignatureSchemeName, readonly string[]>> = {
  'standard-webhooks': [STANDARD_WEBHOOKS_HEADERS.id],
  stripe: [],
  github: [],
  shopify: [],
  slack: [],
  'hmac-sha256': [],
};

/**
 * Headers a sender writes afresh on every retry of one event, and which sender: the signed
 * timestamps and the signatures over them (signatures/standard-webhooks.ts, stripe.ts, slack.ts:
 * each signs `timestamp` into its content, and each retry is signed at its own time). A key
 * template reading any of them would make every retry a new key, so one that does is refused
 * at synth (config/config-schema.ts), on every scheme.
 */
export const RESIGNED_PER_RETRY: Readonly<Record<string, string>> = {
  [STANDARD_WEBHOOKS_HEADERS.timestamp]: 'Standard Webhooks',
  [STANDARD_WEBHOOKS_HEADERS.signature]: 'Standard Webhooks',
  [STRIPE_SIGNATURE_HEADER]: 'Stripe, its t= part',
  [SLACK_HEADERS.timestamp]: 'Slack',
  [SLACK_HEADERS.signature]: 'Slack',
};

/** The template's placeholders that read a header re-signed on every retry (RESIGNED_PER_RETRY), lowercase. */
export function perRetryTemplateHeaders(template: string): string[] {
  return parseKeyTemplate(template)
    .filter((p): p is Extract<KeyTemplatePart, { kind: 'header' }> => p.kind === 'header')
    .map((p) => p.name)
    .filter((name) => Object.hasOwn(RESIGNED_PER_RETRY, name));
}

/**
 * True for the schemes whose signature covers no timestamp (GitHub, Shopify, hmac-sha256: see
 * signatures/github.ts, shopify.ts, hmac-sha256.ts). A delivery captured on them verifies
 * for as long as its secret does, so the tolerance window never refuses a replay: their
 * routes keep a replay memory that outlives the record (store/replay-memory.ts).
 */
export function needsReplayMemory(scheme: SignatureSchemeName): boolean {
  return scheme === 'github' || scheme === 'shopify' || scheme === 'hmac-sha256';
}

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
