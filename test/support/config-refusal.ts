import { expect } from 'vitest';
import { ConfigError, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';

/** The message of the ConfigError resolveConfig throws; fails the test when it accepts. */
export function refusal(config: unknown): string {
  try {
    resolveConfig(config as RetryproofConfig);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('resolveConfig accepted the configuration');
}
