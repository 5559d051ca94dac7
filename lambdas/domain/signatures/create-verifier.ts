/**
 * One verifier per route, chosen by the route's signature scheme.
 *
 * Why every scheme is hand-written on node:crypto instead of the reference libraries
 * (`npx node scripts/measure-verifier-bundles.ts 31`; Node 24.21, esbuild minified ESM,
 * medians of 31 fresh processes, 2 KB body, two secrets with the second one matching;
 * an empty module imports in 1.2-1.3 ms and loops at 3.5 us, the floor of both columns):
 *
 *   entry                         bytes   gzip  import ms  1st verify ms  verify us
 *   standardwebhooks verify       12771   4912  3.0-3.3    11-14          112-128
 *   own standard-webhooks.ts       2097   1030  1.7-2.0    0.8-0.9         35-39
 *   @octokit/webhooks-methods      1010    503  1.7-2.1    0.3-0.35        27-28
 *   own github.ts                  1180    653  1.6-1.65   0.5             25-26
 *   own create-verifier.ts (all)   4891   1722  1.9-2.0    0.85-0.9        36-37
 *
 * - standardwebhooks hashes in pure JS (fast-sha256): 6x the bundle, a first verify of
 *   11-14 ms on the cold-start path, 3x the steady cost. It takes one secret per instance
 *   and throws on every refusal, so a rotation is a try/catch per secret and the reason
 *   (missing, malformed, bad, stale) is only in the message text. It reads Date.now() with
 *   a fixed 300 s window, and decodes the body to a string first, which refuses genuine
 *   bodies that are not valid UTF-8 (test/signatures/reference-interop.test.ts).
 * - @octokit/webhooks-methods costs the same as ours, but its verify is async, takes the
 *   body as a string (a UTF-8 round trip of the raw bytes) and throws on an empty body.
 *   It covers one scheme of six; the other five are hand-written anyway.
 * Both libraries stay devDependencies: the interop specs hold this code to them.
 */
import type { SignatureConfig } from '../../config/route-config.ts';
import { createGithubVerifier } from './github.ts';
import { createHmacSha256Verifier } from './hmac-sha256.ts';
import { createShopifyVerifier } from './shopify.ts';
import type { SignatureVerifier } from './signature-verifier.ts';
import { createSlackVerifier } from './slack.ts';
import { createStandardWebhooksVerifier } from './standard-webhooks.ts';
import { createStripeVerifier } from './stripe.ts';

/**
 * Builds the verifier for a route's signature configuration. Build it once per route at
 * cold start; it holds no secrets, they are passed to each `verify` call.
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
