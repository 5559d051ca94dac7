import { App, Validations } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { RetryproofStack } from './retryproof-stack.ts';

/** The stack's name in CloudFormation, and its construct id. */
export const STACK_NAME = 'Retryproof';

/** The stack of one Region in a deployment of several: `Retryproof-us-east-1`. */
export function regionalStackName(region: string): string {
  return `${STACK_NAME}-${region}`;
}

/** What {@link createRetryproofApp} built. */
export interface RetryproofApp {
  readonly app: App;
  /** The stack; with several Regions, the first replica's, which defines the global table. */
  readonly stack: RetryproofStack;
  /** Every stack, one per replica Region in the order of `regions.replicas`; with one Region, just `stack`. */
  readonly stacks: readonly RetryproofStack[];
}

const DESCRIPTION = 'retryproof: a webhook receiver that makes sender retries harmless';

/**
 * Builds the CDK app from a configuration: the stack (the receiver, and the demo when
 * asked for), with cdk-nag's AwsSolutions checks on the whole app, so any finding that is
 * not acknowledged fails synth. A bad configuration throws ConfigError here, so it never
 * deploys. bin/app.ts calls this with retryproof.config.ts; tests call it with their own.
 *
 * With `regions`, one stack per replica Region instead (`Retryproof-<region>`), all with the
 * name prefix `Retryproof` unless `namePrefix` is set: the first replica's defines the MRSC
 * global table and the route secrets, and every other stack depends on it, so
 * `cdk deploy --all` deploys it first.
 * @throws ConfigError naming the route, the field and the value
 */
export function createRetryproofApp(config: RetryproofConfig, appProps: AppProps = {}): RetryproofApp {
  const app = new App(appProps);
  const regions = resolveConfig(config).regions;
  let stacks: RetryproofStack[];
  if (regions === undefined) {
    stacks = [new RetryproofStack(app, STACK_NAME, { description: DESCRIPTION, config })];
  } else {
    const shared = { ...config, namePrefix: config.namePrefix ?? STACK_NAME };
    // An account left to the CLI's credentials (CDK_DEFAULT_ACCOUNT), unset offline: the
    // Region is what the global table and each receiver need to know at synth.
    const account = process.env.CDK_DEFAULT_ACCOUNT;
    stacks = regions.replicas.map(
      (region) =>
        new RetryproofStack(app, regionalStackName(region), {
          description: `${DESCRIPTION} (${region}, one of ${regions.replicas.join(', ')})`,
          env: { region, ...(account === undefined ? {} : { account }) },
          config: shared,
        }),
    );
    const [owner, ...others] = stacks as [RetryproofStack, ...RetryproofStack[]];
    for (const stack of others) stack.addStackDependency(owner, 'the first replica Region defines the global events table and the route secrets');
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack: stacks[0] as RetryproofStack, stacks };
}
