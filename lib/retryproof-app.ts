import { App, Validations } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { assertActionsSupplied, resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { RetryproofStack } from './retryproof-stack.ts';

/** The stack's name in CloudFormation, and its construct id. */
export const STACK_NAME = 'Retryproof';

/** Options of {@link createRetryproofApp}. */
export interface CreateAppOptions {
  /**
   * The action names the executor has; a route naming another fails synth.
   * @default - the built-in actions (lambdas/actions/built-in-actions.ts)
   */
  readonly actions?: readonly string[];
}

/** What {@link createRetryproofApp} built. */
export interface RetryproofApp {
  readonly app: App;
  readonly stack: RetryproofStack;
}

/**
 * Builds the CDK app from a configuration: validates it (a bad one throws ConfigError
 * here, so it never deploys), creates the stack and registers cdk-nag's AwsSolutions
 * checks, so any finding that is not acknowledged fails synth. bin/app.ts calls this
 * with retryproof.config.ts; tests call it with their own configurations.
 * @throws ConfigError naming the route, the field and the value
 */
export function createRetryproofApp(
  config: RetryproofConfig,
  appProps: AppProps = {},
  options: CreateAppOptions = {},
): RetryproofApp {
  const resolved = resolveConfig(config);
  assertActionsSupplied(resolved, options.actions);
  const app = new App(appProps);
  const stack = new RetryproofStack(app, STACK_NAME, {
    description: 'retryproof: a webhook receiver that makes sender retries harmless',
    config,
    resolved,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
