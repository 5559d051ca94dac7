/**
 * The multi-region example as a CDK app: createRetryproofApp over retryproof.config.ts builds
 * one stack per replica Region, and each Region's executor learns the orders API's URL from
 * the context value `ordersApiUrl`.
 */
import type { AppProps } from 'aws-cdk-lib';
// The app builder runs cdk-nag, which the package does not ship: a project of your own builds
// its stacks from WebhookReceiver (`from 'retryproof'`), as examples/orders-app does.
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofApp } from '../../lib/retryproof-app.ts';
import { config } from './retryproof.config.ts';
import { ORDERS_API_URL_ENV } from './src/forward-order.ts';

/** Builds the app; `-c ordersApiUrl=…` (or `appProps.context`) must name the orders API. */
export function buildMultiRegionApp(appProps: AppProps = {}): RetryproofApp {
  const built = createRetryproofApp(config, appProps);
  const ordersApiUrl: unknown = built.app.node.tryGetContext('ordersApiUrl');
  if (typeof ordersApiUrl !== 'string' || !URL.canParse(ordersApiUrl)) {
    throw new Error('the orders API URL is not set: add -c ordersApiUrl=https://your-orders-api to the cdk command');
  }
  for (const stack of built.stacks) stack.receiver.executorFunction.addEnvironment(ORDERS_API_URL_ENV, ordersApiUrl);
  return built;
}
