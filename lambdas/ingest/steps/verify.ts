import { DependencyError, UnauthorizedError } from '../../domain/errors.ts';
import { InvalidSigningSecretError } from '../../domain/signatures/signing-secret-error.ts';
import type { VerifyResult } from '../../domain/signatures/signature-verifier.ts';
import { dependency } from '../dependency.ts';
import type { IngestContext, Step } from '../ingest-context.ts';

/**
 * Verify before anything is written: a forged copy that arrives first must not poison the key
 * (architecture.md#answers-to-senders, "Verify before claim").
 */
export const verify: Step = async (ctx) => {
  const secrets = await dependency('Secrets Manager', () => ctx.receiver.secrets.secretsFor(ctx.route.config.secretName));
  const verdict = verdictOf(ctx, secrets);
  if (!verdict.ok) throw new UnauthorizedError(verdict.reason);
  return undefined;
};

/** The verifier's verdict; an unusable stored secret is our failure, a 5xx (architecture.md#answers-to-senders). */
function verdictOf({ route, delivery, now }: IngestContext, secrets: readonly string[]): VerifyResult {
  try {
    return route.verifier.verify({ headers: delivery.headers, rawBody: delivery.rawBody, nowSeconds: Math.floor(now / 1000) }, secrets);
  } catch (err) {
    if (err instanceof InvalidSigningSecretError) throw new DependencyError('signing secret', { cause: err });
    throw err;
  }
}
