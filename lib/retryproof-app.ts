import { App, Validations } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { RetryproofStack } from './retryproof-stack.ts';

/** The stack's name in CloudFormation, and its construct id. */
export const STACK_NAME = 'Retryproof';

/** What {@link createRetryproofApp} built. */
export interface RetryproofApp {
  readonly app: App;
  readonly stack: RetryproofStack;
}

/**
 * Builds the CDK app from a configuration: the stack (the receiver, and the demo when
 * asked for), with cdk-nag's AwsSolutions checks on the whole app, so any finding that is
 * not acknowledged fails synth. A bad configuration throws ConfigError here, so it never
 * deploys. bin/app.ts calls this with retryproof.config.ts; tests call it with their own.
 * @throws ConfigError naming the route, the field and the value
 */
export function createRetryproofApp(config: RetryproofConfig, appProps: AppProps = {}): RetryproofApp {
  const app = new App(appProps);
  const stack = new RetryproofStack(app, STACK_NAME, {
    description: 'retryproof: a webhook receiver that makes sender retries harmless',
    config,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
