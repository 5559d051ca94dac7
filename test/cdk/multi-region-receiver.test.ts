/**
 * WebhookReceiver and createRetryproofApp with `regions`: what they refuse at synth that a
 * deploy would otherwise break on, and that without `regions` the app is one stack as before.
 */
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { config as mainConfig } from '../../retryproof.config.ts';
import { demoConfig } from './fixtures/demo-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, thrownBy, withOwnAction } from './stack-fixture.ts';

const REGIONS = { replicas: ['eu-west-1', 'eu-west-2', 'eu-west-3'] } as const;
const own = withOwnAction(mainConfig);
const several: RetryproofConfig = { ...own, regions: { replicas: [...REGIONS.replicas] } };
const context = { ...CDK_JSON_CONTEXT, ...NO_BUNDLING };

/** A receiver with `config` in a stack of `region` (undefined: a stack with no Region). */
function receiverIn(region: string | undefined, config: RetryproofConfig): Error {
  const app = new App({ context });
  const stack = new Stack(app, 'Receiver', region === undefined ? {} : { env: { region } });
  const { demo: _demo, actions, ...props } = config;
  return thrownBy(() => new WebhookReceiver(stack, 'Webhooks', { ...props, actions: actions ?? {} }));
}

describe('WebhookReceiver with regions', () => {
  it('refuses a stack with no Region of its own', () => {
    const err = receiverIn(undefined, { ...several, namePrefix: 'Orders' });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/stack Receiver has no Region of its own.*env\.region/);
  });

  it('refuses a stack in a Region that holds no replica, the witness included', () => {
    const withWitness: RetryproofConfig = { ...own, namePrefix: 'Orders', regions: { replicas: ['eu-west-1', 'eu-west-2'], witness: 'eu-west-3' } };
    expect(receiverIn('eu-west-3', withWitness).message).toMatch(/eu-west-3, which is not a replica Region.*a witness Region holds no replica/);
    expect(receiverIn('us-east-1', { ...several, namePrefix: 'Orders' }).message).toMatch(/us-east-1, which is not a replica Region \(eu-west-1, eu-west-2, eu-west-3\)/);
  });

  it('refuses a derived name prefix, which differs between the Regions and so would name the table differently', () => {
    const err = receiverIn('eu-west-2', several);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/set namePrefix/);
  });
});

describe('createRetryproofApp with regions', () => {
  it('builds one stack per replica, three replicas without a witness: the first with the table and its two replicas, the others depending on it', () => {
    const built = createRetryproofApp(several, { context });
    expect(built.stacks.map((s) => s.stackName)).toEqual(REGIONS.replicas.map((r) => `Retryproof-${r}`));
    expect(built.stack).toBe(built.stacks[0]);
    const table = built.stacks[0]?.receiver.placement;
    expect(table).toMatchObject({ owner: true, otherReplicas: ['eu-west-2', 'eu-west-3'], witness: undefined, tableName: 'Retryproof-events' });
    for (const stack of built.stacks.slice(1)) expect(stack.dependencies.map((s) => s.stackName)).toEqual(['Retryproof-eu-west-1']);
  });

  it('refuses the demo, whose ledger is a table of one Region', () => {
    const err = thrownBy(() => createRetryproofApp({ ...demoConfig, regions: { replicas: [...REGIONS.replicas] } }, { context }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/demo: true cannot be deployed with several Regions.*one Region/);
  });
});

describe('createRetryproofApp without regions', () => {
  it('builds the one Retryproof stack, with no Region output and its table in no replica set', () => {
    const built = createRetryproofApp(own, { context });
    expect(built.stacks.map((s) => s.stackName)).toEqual(['Retryproof']);
    expect(built.stack.receiver.placement).toBeUndefined();
    expect(built.stack.node.tryFindChild('Default')?.node.tryFindChild('Region')).toBeUndefined();
  });
});
