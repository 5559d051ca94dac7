/**
 * What the edge fuzzer sends: a fast-check arbitrary of compact request recipes, and the
 * builder that turns a recipe into the bytes on the wire, signing it at that moment. A
 * recipe stays small however large its body (a 10 MiB body is `{ kind: 'huge' }`), so a
 * counterexample prints in a few lines and shrinks well.
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { RouteConfig, SignatureConfig } from '../../lambdas/config/route-config.ts';
import { HARD_MAX_BODY_BYTES } from '../../lambdas/config/route-config.ts';
import { workMessageOf } from '../../lambdas/domain/event-record.ts';
import { QUEUE_RESERVE_BYTES, SQS_MAX_MESSAGE_BYTES } from '../../lambdas/domain/queue-limits.ts';
import { signDelivery } from '../../lambdas/domain/signatures/sign-delivery.ts';
import { GATEWAY_MAX_BODY_BYTES } from '../../local/http-gateway.ts';
import type { RawHttpRequest } from './raw-http.ts';

/** A fuzzed route: its configuration, its two live secrets, and where its sender puts the key. */
export interface FuzzRoute extends RouteConfig {
  readonly secret: string;
  readonly previousSecret: string;
  /** Where the idempotency key travels. */
  readonly keyIn: 'webhook-id' | 'body-id' | 'body-event_id' | 'github' | 'x-shopify-webhook-id' | 'idempotency-key' | 'template';
}

const DEFAULT_ROUTE_MAX_BODY_BYTES = 131_072;

const base = { action: 'payout', actionTimeSeconds: 5 } as const;

/**
 * The fuzzer's own routes: one per signature scheme, each with another setting that
 * changes what the edge does (body limits, strict duplicates, the breaker, kept headers,
 * a key template). Route names are the only thing shared with the path generator.
 */
export const FUZZ_ROUTES: readonly FuzzRoute[] = [
  {
    ...base,
    name: 'sw-big',
    signature: { scheme: 'standard-webhooks' },
    // The largest body a route may take: only here can a body reach SQS's limit once escaped.
    maxBodyBytes: HARD_MAX_BODY_BYTES,
    keepHeaders: ['content-type', 'x-trace'],
    secretName: 'fuzz/sw-big',
    secret: `whsec_${Buffer.from('retryproof-fuzz-standard-secret!').toString('base64')}`,
    previousSecret: `whsec_${Buffer.from('retryproof-fuzz-previous-secret!').toString('base64')}`,
    keyIn: 'webhook-id',
  },
  {
    ...base,
    name: 'stripe',
    signature: { scheme: 'stripe' },
    secretName: 'fuzz/stripe',
    secret: 'whsec_fuzz_stripe_current',
    previousSecret: 'whsec_fuzz_stripe_previous',
    keyIn: 'body-id',
  },
  {
    ...base,
    name: 'gh-strict',
    signature: { scheme: 'github' },
    duplicateAnswer: 'strict-409',
    secretName: 'fuzz/gh-strict',
    secret: 'fuzz-github-current',
    previousSecret: 'fuzz-github-previous',
    keyIn: 'github',
  },
  {
    ...base,
    name: 'shop-small',
    signature: { scheme: 'shopify' },
    maxBodyBytes: 1024,
    // Trips after two copies of one key: the pause write happens on an ordinary replay.
    breakerThreshold: 2,
    secretName: 'fuzz/shop-small',
    secret: 'fuzz-shopify-current',
    previousSecret: 'fuzz-shopify-previous',
    keyIn: 'x-shopify-webhook-id',
  },
  {
    ...base,
    name: 'slack',
    signature: { scheme: 'slack', toleranceSeconds: 60 },
    breakerReaction: 'alert',
    secretName: 'fuzz/slack',
    secret: 'fuzz-slack-current',
    previousSecret: 'fuzz-slack-previous',
    keyIn: 'body-event_id',
  },
  {
    ...base,
    name: 'generic',
    signature: { scheme: 'hmac-sha256', header: 'x-signature', prefix: 'sha256=', encoding: 'hex' },
    // A kept header may not be named `constructor`, `__proto__` or `prototype` (the config
    // refuses them); sent anyway, such headers are fuzzed as extra headers below.
    keepHeaders: ['content-type', 'x-trace'],
    secretName: 'fuzz/generic',
    secret: 'fuzz-generic-current',
    previousSecret: 'fuzz-generic-previous',
    keyIn: 'idempotency-key',
  },
  {
    ...base,
    name: 'templated',
    signature: { scheme: 'hmac-sha256', header: 'x-sig', encoding: 'base64' },
    key: 'tenant-{body:/tenant}/{body:/order/id}',
    secretName: 'fuzz/templated',
    secret: 'fuzz-templated-current',
    previousSecret: 'fuzz-templated-previous',
    keyIn: 'template',
  },
];

/** The signature headers of each scheme, lowercase: duplicates and garbage go there. */
const SIGNATURE_HEADERS: Readonly<Record<SignatureConfig['scheme'], readonly string[]>> = {
  'standard-webhooks': ['webhook-signature', 'webhook-timestamp', 'webhook-id'],
  stripe: ['stripe-signature'],
  github: ['x-hub-signature-256', 'x-github-delivery', 'x-github-hook-id'],
  shopify: ['x-shopify-hmac-sha256', 'x-shopify-webhook-id'],
  slack: ['x-slack-signature', 'x-slack-request-timestamp'],
  'hmac-sha256': ['x-signature', 'x-sig', 'idempotency-key', 'x-idempotency-key', 'x-tenant'],
};

/** Where the request goes. */
export type TargetRecipe =
  | {
      readonly kind: 'route';
      /** How the route's name is written in the path. */
      readonly style: 'plain' | 'percent-encoded' | 'uppercase' | 'trailing-slash' | 'double-slash' | 'absolute-form';
      readonly query: string;
    }
  | { readonly kind: 'raw'; readonly target: string };

/** How the signature is made. Only `valid`, `previous` and `rotation` are authentic everywhere. */
export type SignatureRecipe =
  | 'valid'
  | 'previous'
  | 'rotation'
  | 'stale'
  | 'future'
  | 'wrong-secret'
  | 'tampered'
  | 'missing'
  | { readonly garbage: string };

/** What the key is, where the route's sender puts it. */
export type KeyRecipe =
  | { readonly kind: 'pool'; readonly index: number }
  | { readonly kind: 'fresh'; readonly id: string }
  | { readonly kind: 'odd'; readonly text: string }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'absent' };

/** Characters a body is padded with, each escaping differently in JSON and in the work message. */
export const FILLERS = ['x', '\\', '"', '\u0001', 'é', '€', '😀', '\u2028', '\uFFFF'] as const;

export type BodyRecipe =
  /** A JSON document carrying the key where the scheme reads it, optionally padded to a size. */
  | {
      readonly kind: 'document';
      readonly data: unknown;
      readonly pad?: { readonly to: 'route-limit' | 'queue-limit'; readonly delta: number; readonly filler: (typeof FILLERS)[number] };
    }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  | { readonly kind: 'deep'; readonly depth: number }
  | { readonly kind: 'empty' }
  /** Around API Gateway's own 10 MiB limit: `delta` bytes over it (0 is exactly at it). */
  | { readonly kind: 'huge'; readonly delta: number };

/** An extra header: a name, a value, and how the name is cased on the wire. */
export interface HeaderRecipe {
  readonly name: string;
  readonly value: string;
}

/** One fuzz case. */
export interface EdgeCase {
  readonly method: string;
  /** Index into FUZZ_ROUTES: the route the delivery is signed for (and sent to, for a `route` target). */
  readonly route: number;
  readonly target: TargetRecipe;
  readonly contentType: string | undefined;
  readonly key: KeyRecipe;
  readonly signature: SignatureRecipe;
  readonly body: BodyRecipe;
  /** Extra headers, and copies of the route's own headers under another casing. */
  readonly extra: readonly HeaderRecipe[];
  readonly nameCase: 'lower' | 'upper' | 'title' | 'alternate';
  readonly chunked: boolean;
}

/** A built request, with what the property needs to judge its answer. */
export interface BuiltRequest {
  readonly raw: RawHttpRequest;
  readonly route: FuzzRoute;
  /** The delivery carries a signature the route must accept (when nothing else is wrong). */
  readonly authentic: boolean;
  /** SHA-256 of the body as sent, and as API Gateway's text decoding leaves it: a record holds one of them. */
  readonly fingerprints: readonly string[];
}

const KEY_POOL = ['k-0', 'k-1', 'k-2'] as const;

/** Odd header-borne keys: empty, too long, not printable ASCII, with separators. */
const ODD_KEYS = ['', ' ', 'a'.repeat(256), 'a'.repeat(255), 'tab\there', 'caf\u00e9', 'k,1', 'k;1', '{}', '%00', 'k\u0001'];

const METHODS = ['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'post', 'Post', 'FOO', 'CONNECT', 'PROPFIND', 'M-SEARCH', 'TRACE'];

const RAW_TARGETS = [
  '/',
  '/webhooks',
  '/webhooks/',
  '/webhooks/nope',
  '/webhooks/a/b',
  '/webhooks/%ZZ',
  '/webhooks/%2e%2e',
  '/webhooks/..%2fgeneric',
  '/webhooks/gen%00eric',
  '/webhooks/generic%2f',
  '/webhooks/%E2%82%AC',
  '/webhooks/\u00e9',
  '/webhooks/a b',
  '/webhooks/generic#frag',
  '/_local/reconcile',
  '/_local/ledger',
  '/_local/',
  '//a:b',
  '//[',
  '//x/webhooks/generic',
  '/webhooks/generic/../stripe',
  '*',
  'webhooks/generic',
  'http://[/webhooks/generic',
  `/webhooks/${'a'.repeat(5000)}`,
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/cloudevents+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'image/png',
  'multipart/form-data; boundary=x',
  '',
  ';;;',
];

/** Names a fuzzed extra header may have: the route's own, Object.prototype members, and random tokens. */
const SPECIAL_NAMES = ['content-type', 'x-trace', 'constructor', '__proto__', 'toString', 'cookie', 'user-agent', 'expect', 'authorization'];

function headerValue(): fc.Arbitrary<string> {
  return fc.oneof(
    // Mostly values the parser lets through, so most cases reach the handler.
    { weight: 10, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
    { weight: 3, arbitrary: fc.constantFrom('', ' ', 'v1,', 't=1,v1=zz', 'sha256=', 'v0=', '100-continue', 'caf\u00e9', 'a\u00ff\u0080') },
    // Header bytes the HTTP parser refuses (control characters) and sizes around its 16 KiB limit.
    { weight: 1, arbitrary: fc.constantFrom('a\u0001b', 'a\u007fb', 'a\u0000b', 'a\rb') },
    { weight: 1, arbitrary: fc.constantFrom(1_000, 8_000, 16_300, 17_000).map((n) => 'h'.repeat(n)) },
  );
}

function extraHeader(route: FuzzRoute): fc.Arbitrary<HeaderRecipe> {
  return fc
    .record({
      name: fc.oneof(
        fc.constantFrom(...SIGNATURE_HEADERS[route.signature.scheme], ...SPECIAL_NAMES),
        fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,24}$/),
      ),
      value: headerValue(),
    });
}

function targetRecipe(): fc.Arbitrary<TargetRecipe> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('route' as const),
        style: fc.oneof(
          { weight: 12, arbitrary: fc.constant('plain' as const) },
          { weight: 1, arbitrary: fc.constantFrom('percent-encoded', 'uppercase', 'trailing-slash', 'double-slash', 'absolute-form') },
        ),
        query: fc.oneof(
          { weight: 6, arbitrary: fc.constant('') },
          { weight: 1, arbitrary: fc.constantFrom('?a=1', '?a=1&a=2', '?__proto__=1&toString=2&constructor=3', '?%ZZ=1', '?=&&=') },
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom(...RAW_TARGETS),
        fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((s) => `/webhooks/${s.replaceAll(' ', '%20')}`),
        fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
      ).map((target) => ({ kind: 'raw' as const, target })),
    },
  );
}

function keyRecipe(): fc.Arbitrary<KeyRecipe> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('pool' as const), index: fc.integer({ min: 0, max: KEY_POOL.length - 1 }) }) },
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('fresh' as const), id: fc.uuid() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('odd' as const), text: fc.constantFrom(...ODD_KEYS) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('number' as const), value: fc.oneof(fc.integer(), fc.constantFrom(-0, 1e21, 0.5)) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'absent' as const }) },
  );
}

function signatureRecipe(): fc.Arbitrary<SignatureRecipe> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant('valid' as const) },
    { weight: 2, arbitrary: fc.constantFrom('previous' as const, 'rotation' as const) },
    { weight: 4, arbitrary: fc.constantFrom('stale' as const, 'future' as const, 'wrong-secret' as const, 'tampered' as const, 'missing' as const) },
    { weight: 1, arbitrary: fc.record({ garbage: fc.string({ unit: 'grapheme-ascii', maxLength: 90 }) }) },
  );
}

function bodyRecipe(): fc.Arbitrary<BodyRecipe> {
  const small = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  return fc.oneof(
    { weight: 10, arbitrary: fc.record({ kind: fc.constant('document' as const), data: small }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('document' as const),
        data: fc.constant(null),
        pad: fc.record({
          to: fc.constantFrom('route-limit' as const, 'queue-limit' as const),
          delta: fc.integer({ min: -3, max: 3 }),
          filler: fc.constantFrom(...FILLERS),
        }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.string({ unit: 'binary', maxLength: 200 }) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('bytes' as const),
        bytes: fc.oneof(
          fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 200 }),
          // Invalid UTF-8 inside an otherwise valid JSON document: a lone continuation byte,
          // a truncated sequence, an overlong NUL, a surrogate encoded as UTF-8, a BOM.
          fc.constantFrom([0x80], [0xe2, 0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xef, 0xbb, 0xbf]).map((bad) => [
            ...Buffer.from('{"id":"'),
            ...bad,
            ...Buffer.from('","event_id":"e"}'),
          ]),
        ),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('deep' as const), depth: fc.constantFrom(100, 5_000, 100_000) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
    // Rare: 10 MiB through the loopback and the handler costs tens of milliseconds.
    { weight: 1, arbitrary: fc.oneof({ weight: 9, arbitrary: fc.constant<BodyRecipe>({ kind: 'empty' }) }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('huge' as const), delta: fc.constantFrom(-1, 0, 1) }) }) },
  );
}

/** The arbitrary of fuzz cases. */
export function edgeCase(): fc.Arbitrary<EdgeCase> {
  return fc.integer({ min: 0, max: FUZZ_ROUTES.length - 1 }).chain((route) =>
    fc.record({
      method: fc.oneof({ weight: 12, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      route: fc.constant(route),
      target: targetRecipe(),
      contentType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) }, { weight: 1, arbitrary: fc.constant(undefined) }),
      key: keyRecipe(),
      signature: signatureRecipe(),
      body: bodyRecipe(),
      extra: fc.array(extraHeader(FUZZ_ROUTES[route] as FuzzRoute), { maxLength: 4 }),
      nameCase: fc.constantFrom('lower' as const, 'upper' as const, 'title' as const, 'alternate' as const),
      chunked: fc.boolean(),
    }),
  );
}

function caseName(name: string, style: EdgeCase['nameCase'], index: number): string {
  if (style === 'upper') return name.toUpperCase();
  if (style === 'title') return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`);
  if (style === 'alternate' && index % 2 === 1) return name.toUpperCase();
  return name;
}

function keyText(key: KeyRecipe): string | undefined {
  switch (key.kind) {
    case 'pool':
      return KEY_POOL[key.index];
    case 'fresh':
      return `evt_${key.id}`;
    case 'odd':
      return key.text;
    case 'number':
      return String(key.value);
    case 'absent':
      return undefined;
  }
}

/** The body fields that carry the key for schemes that read it from the body. */
function keyFields(route: FuzzRoute, key: KeyRecipe): Record<string, unknown> {
  const value = key.kind === 'number' ? key.value : keyText(key);
  if (value === undefined) return {};
  if (route.keyIn === 'body-id') return { id: value };
  if (route.keyIn === 'body-event_id') return { event_id: value };
  if (route.keyIn === 'template') return { tenant: 'acme', order: { id: value } };
  return {};
}

/** UTF-8 bytes `text` takes inside a JSON string literal, and once that literal is escaped again into the work message. */
function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}

/**
 * A document padded so the body is exactly `maxBodyBytes + delta` bytes, or so its work
 * message is `delta` bytes from what SQS carries. The work message's other fields (route,
 * key, kept headers) are estimated from the recipe, so the queue boundary is hit within a
 * few bytes, which is what "around the limit" needs.
 */
function paddedDocument(route: FuzzRoute, key: KeyRecipe, pad: NonNullable<Extract<BodyRecipe, { kind: 'document' }>['pad']>, keptHeaders: Record<string, string>): string {
  const fields = keyFields(route, key);
  const bare = JSON.stringify({ ...fields, note: '' });
  const unit = JSON.stringify(pad.filler).slice(1, -1);
  const unitRaw = Buffer.byteLength(unit);
  let units: number;
  if (pad.to === 'route-limit') {
    units = Math.floor((( route.maxBodyBytes ?? DEFAULT_ROUTE_MAX_BODY_BYTES) + pad.delta - Buffer.byteLength(bare)) / unitRaw);
  } else {
    const message = JSON.stringify(
      workMessageOf({
        route: route.name,
        key: keyText(key) ?? '',
        status: 'RECEIVED',
        fingerprint: '0'.repeat(64),
        receivedAt: 1_700_000_000_000,
        expiresAt: 0,
        answer: { status: 202, body: '' },
        hits: 1,
        attempts: 0,
        runs: 0,
        redrives: 0,
      }, { body: '', bodyEncoding: 'utf8', headers: keptHeaders }),
    );
    const room = SQS_MAX_MESSAGE_BYTES - QUEUE_RESERVE_BYTES + pad.delta - Buffer.byteLength(message) - escapedBytes(bare);
    units = Math.floor(room / escapedBytes(unit));
  }
  const text = JSON.stringify({ ...fields, note: '' }).replace('"note":""', `"note":"${unit.repeat(Math.max(0, units))}"`);
  if (pad.to !== 'route-limit') return text;
  // Top up with single bytes so the size is exact, whatever the filler's width.
  const missing = (route.maxBodyBytes ?? DEFAULT_ROUTE_MAX_BODY_BYTES) + pad.delta - Buffer.byteLength(text);
  return missing > 0 ? text.replace('"note":"', `"note":"${'x'.repeat(missing)}`) : text;
}

function bodyBytes(c: EdgeCase, route: FuzzRoute, keptHeaders: Record<string, string>): Buffer {
  const body = c.body;
  switch (body.kind) {
    case 'document':
      if (body.pad !== undefined) return Buffer.from(paddedDocument(route, c.key, body.pad, keptHeaders));
      return Buffer.from(JSON.stringify({ ...keyFields(route, c.key), data: body.data }));
    case 'text':
      return Buffer.from(body.text);
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'deep':
      return Buffer.from(`{"id":"deep","event_id":"deep","order":{"id":"deep"},"d":${'['.repeat(body.depth)}${']'.repeat(body.depth)}}`);
    case 'empty':
      return Buffer.alloc(0);
    case 'huge':
      return Buffer.alloc(GATEWAY_MAX_BODY_BYTES + body.delta, 0x20);
  }
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The route's own key headers for this key (body-borne keys have none). */
function keyHeaders(route: FuzzRoute, key: KeyRecipe): [string, string][] {
  const text = keyText(key);
  switch (route.keyIn) {
    case 'webhook-id':
      // Standard Webhooks signs the id: without one the delivery is unsigned, so keep a fixed one.
      return [['webhook-id', text ?? 'msg_absent']];
    case 'github':
      return text === undefined ? [['x-github-hook-id', '42']] : [['x-github-hook-id', '42'], ['x-github-delivery', text]];
    case 'x-shopify-webhook-id':
      return text === undefined ? [] : [['x-shopify-webhook-id', text]];
    case 'idempotency-key':
      return text === undefined ? [] : [[key.kind === 'fresh' ? 'x-idempotency-key' : 'idempotency-key', text]];
    default:
      return [];
  }
}

function timestampSchemeTolerance(signature: SignatureConfig): number | undefined {
  if (signature.scheme === 'standard-webhooks' || signature.scheme === 'stripe' || signature.scheme === 'slack') {
    return signature.toleranceSeconds ?? 300;
  }
  return undefined;
}

/** The signature headers for `body`, made as the recipe says. */
function signatureHeaders(route: FuzzRoute, recipe: SignatureRecipe, body: Buffer, id: string | undefined, nowSeconds: number): { headers: [string, string][]; authentic: boolean } {
  const tolerance = timestampSchemeTolerance(route.signature);
  const sign = (secret: string, bytes: Buffer, at: number): Record<string, string> =>
    signDelivery(route.signature, secret, bytes, { nowSeconds: at, ...(id === undefined ? {} : { id }) });
  const own = SIGNATURE_HEADERS[route.signature.scheme];
  if (recipe === 'missing') return { headers: [], authentic: false };
  if (typeof recipe === 'object') {
    const name = route.signature.scheme === 'hmac-sha256' ? route.signature.header : (own[0] ?? 'x-signature');
    return { headers: [[name, recipe.garbage]], authentic: false };
  }
  let signed: Record<string, string>;
  let authentic = true;
  switch (recipe) {
    case 'valid':
      signed = sign(route.secret, body, nowSeconds);
      break;
    case 'previous':
      signed = sign(route.previousSecret, body, nowSeconds);
      break;
    case 'rotation': {
      // A sender mid-rotation: one signature it no longer has the secret for, one good one.
      signed = sign(route.secret, body, nowSeconds);
      if (route.signature.scheme === 'standard-webhooks') {
        signed['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${signed['webhook-signature'] ?? ''}`;
      } else if (route.signature.scheme === 'stripe') {
        signed['stripe-signature'] = `${signed['stripe-signature'] ?? ''},v1=${'0'.repeat(64)}`;
      }
      break;
    }
    case 'stale':
    case 'future': {
      const skew = (tolerance ?? 300) + 30;
      signed = sign(route.secret, body, recipe === 'stale' ? nowSeconds - skew : nowSeconds + skew);
      // Schemes without a signed timestamp cannot tell: their copy is authentic.
      authentic = tolerance === undefined;
      break;
    }
    case 'wrong-secret':
      signed = sign(route.signature.scheme === 'standard-webhooks' ? `whsec_${randomBytes(24).toString('base64')}` : 'not-the-secret', body, nowSeconds);
      authentic = false;
      break;
    case 'tampered':
      signed = sign(route.secret, Buffer.concat([body, Buffer.from(' ')]), nowSeconds);
      authentic = false;
      break;
  }
  // The id header is the key's, placed by keyHeaders: keep only what the scheme signs with.
  return { headers: Object.entries(signed).filter(([name]) => name !== 'webhook-id'), authentic };
}

/** The path and query the recipe asks for. */
function targetOf(c: EdgeCase, route: FuzzRoute, port: number): string {
  if (c.target.kind === 'raw') return c.target.target;
  const name = route.name;
  const q = c.target.query;
  switch (c.target.style) {
    case 'plain':
      return `/webhooks/${name}${q}`;
    case 'percent-encoded':
      return `/webhooks/${[...Buffer.from(name)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')}${q}`;
    case 'uppercase':
      return `/webhooks/${name.toUpperCase()}${q}`;
    case 'trailing-slash':
      return `/webhooks/${name}/${q}`;
    case 'double-slash':
      return `//webhooks/${name}${q}`;
    case 'absolute-form':
      return `http://127.0.0.1:${port}/webhooks/${name}${q}`;
  }
}

/**
 * Builds the bytes of a case, signed now. Node's HTTP parser trims header values, so
 * kept headers are estimated trimmed.
 */
export function buildRequest(c: EdgeCase, options: { port: number; nowSeconds: number }): BuiltRequest {
  const route = FUZZ_ROUTES[c.route];
  if (route === undefined) throw new Error(`no fuzz route #${c.route}`);
  const headers: [string, string][] = [];
  if (c.contentType !== undefined) headers.push(['content-type', c.contentType]);
  headers.push(...keyHeaders(route, c.key));
  const kept: Record<string, string> = {};
  for (const name of route.keepHeaders ?? []) {
    const values = [...headers, ...c.extra.map((h) => [h.name, h.value] as const)].filter(([n]) => n.toLowerCase() === name).map(([, v]) => v.trim());
    if (values.length > 0) kept[name] = values.join(',');
  }
  const body = bodyBytes(c, route, kept);
  const id = route.keyIn === 'webhook-id' ? keyHeaders(route, c.key)[0]?.[1] : undefined;
  const signature = signatureHeaders(route, c.signature, body, id, options.nowSeconds);
  headers.push(...signature.headers);
  headers.push(...c.extra.map((h) => [h.name, h.value] as [string, string]));
  return {
    raw: {
      method: c.method,
      target: targetOf(c, route, options.port),
      headers: headers.map(([name, value], index) => [caseName(name, c.nameCase, index), value] as const),
      body,
      chunked: c.chunked,
    },
    route,
    authentic: signature.authentic,
    fingerprints: [sha256(body), sha256(Buffer.from(body.toString('utf8')))],
  };
}
