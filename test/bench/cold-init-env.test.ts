import { describe, expect, it } from 'vitest';
import { coldInitEnv, coldInitShippedConfig } from '../../bench/bundles.ts';
import { deploymentFromEnv } from '../../lambdas/config/deployment.ts';
import { ENV } from '../../lambdas/config/env.ts';

describe('the cold-init benchmark environment', () => {
  it('is one the functions accept at import, with the configuration bundled as the construct bundles it: every variable of the contract parses', () => {
    const env = coldInitEnv();
    for (const name of Object.values(ENV)) expect(env[name], name).toBeDefined();
    const deployment = deploymentFromEnv(env, coldInitShippedConfig());
    expect(deployment.queueUrl).toMatch(/^http:\/\/127\.0\.0\.1:9\//);
    expect(deployment.routeQueueUrls).toEqual({});
    expect(deployment.config.routes.map((r) => r.name)).toEqual(['orders']);
  });
});
