/**
 * One verifier per route, chosen by the route's signature scheme.
 *
 * Why every scheme is hand-written on node:crypto instead of the reference libraries
 * (`npx node scripts/measure-verifier-bundles.ts 31`; Node 24.21, esbuild minified ESM,
 * medians of 31 fresh processes, 2 KB body, two whsec_ secrets with the second one matching;
 * re-measured with v1a in the bundle, on a quieter machine than the first run, so compare
 * rows, not runs: an empty module now imports in 0.63 ms and loops at 0.8 us):
 *
 *   entry                         bytes   gzip  import ms  1st verify ms  verify us
 *   standardwebhooks verify       12771   4912  1.75       6.5            89
 *   own standard-webhooks.ts       3595   1624  0.91       0.56           17
 *   @octokit/webhooks-methods      1010    503  0.91       0.17           16
 *   own github.ts                  1180    654  0.80       0.26           16
 *   own create-verifier.ts (all)   6421   2295  1.04       0.55           16
 *
 * - v1a (ed25519) added 1.5 KB to the standard-webhooks bundle (0.6 KB gzip). v1's steady
 *   verify is now level with octokit's (it was 1.3x): parsed keys are kept per secret, so v1
 *   no longer rebuilds its HMAC key on every call. An ed25519 verify costs about 60 us and a key import about 20 us, once
 *   per secret (measured on Node 24 here). It is node:crypto's, because `standardwebhooks`
 *   1.1.1 has no v1a at all: it reads only `v1` entries and takes any secret as HMAC bytes.
 * - standardwebhooks hashes in pure JS (fast-sha256): 3.5x the bundle, a first verify of
 *   6.5 ms on the cold-start path, 5x the steady cost. It takes one secret per instance
 *   and throws on every refusal, so a rotation is a try/catch per secret and the reason
 *   (missing, malformed, bad, stale) is only in the message text. It reads Date.now() with
 *   a fixed 300 s window, and decodes the body to a string first, which refuses genuine
 *   bodies that are not valid UTF-8 (test/signatures/reference-interop.test.ts).
 * - @octokit/webhooks-methods costs the same as ours, but its verify is async, takes the
 *   body as a string (a UTF-8 round trip of the raw bytes) and throws on an empty body.
 *   It covers one scheme of six; the other five are hand-written anyway.
 * Both libraries stay devDependencies: the interop specs hold this code to them.
 */
import type { SignatureConfig } from './signature-config.ts';
import { createGithubVerifier } from './github.ts';
import { createHmacSha256Verifier } from './hmac-sha256.ts';
import { createShopifyVerifier } from './shopify.ts';
import type { SignatureVerifier } from './signature-verifier.ts';
import { createSlackVerifier } from './slack.ts';
import { createStandardWebhooksVerifier } from './standard-webhooks.ts';
import { createStripeVerifier } from './stripe.ts';

/**
 * Builds the verifier for a route's signature configuration. Build it once per route at
 * cold start; secrets are passed to each `verify` call (the Standard Webhooks verifier
 * keeps the keys it parsed from them, so a key object is built once per secret).
 */
export function createVerifier(config: SignatureConfig): SignatureVerifier {
  switch (config.scheme) {
    case 'standard-webhooks':
      return createStandardWebhooksVerifier(config);
    case 'stripe':
      return createStripeVerifier(config);
    case 'slack':
      return createSlackVerifier(config);
    case 'github':
      return createGithubVerifier();
    case 'shopify':
      return createShopifyVerifier();
    case 'hmac-sha256':
      return createHmacSha256Verifier(config);
    default: {
      // A scheme added to SIGNATURE_SCHEMES without a verifier fails to compile here.
      const unknown: never = config;
      throw new Error(`no verifier for signature scheme ${JSON.stringify((unknown as { scheme: unknown }).scheme)}`);
    }
  }
}
