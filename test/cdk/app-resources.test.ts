/**
 * The app is the construct plus the demo, and deploys the same stack as before the
 * construct existed: the same resources under the same logical ids, so an update changes
 * them in place and replaces nothing (a replaced table would lose every idempotency record).
 * The fixture lists `Type LogicalId` of every resource and output of the app's template at
 * 6e2293a, the last commit before the WebhookReceiver construct.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { config } from '../../retryproof.config.ts';
import { synthesize } from './stack-fixture.ts';

describe('the app built from retryproof.config.ts', () => {
  it('has the resources and outputs it had before the construct, under the same logical ids', () => {
    const before = readFileSync(new URL('./fixtures/app-resources-6e2293a.txt', import.meta.url), 'utf8').trim().split('\n');
    const template = synthesize(config).template.toJSON() as { Resources: Record<string, { Type: string }>; Outputs?: Record<string, unknown> };
    const now = [
      ...Object.entries(template.Resources).map(([id, r]) => `${r.Type} ${id}`),
      ...Object.keys(template.Outputs ?? {}).map((id) => `Output ${id}`),
    ].sort();
    // Outputs added since then replace nothing: the CLI's receiver descriptor.
    const added = ['Output Receiver'];
    expect(now).toEqual([...before, ...added].sort());
  });
});
