/**
 * `retryproof`, the package: the {@link WebhookReceiver} construct, the app builder
 * {@link createRetryproofApp} (one stack, or one per Region with `regions`), and the
 * configuration types their props are made of. Action and ledger modules import their types
 * from `retryproof/actions` instead, which carries no CDK.
 */
export { WebhookReceiver } from './webhook-receiver.ts';
export type { WebhookReceiverProps } from './webhook-receiver.ts';
export { STACK_NAME, createRetryproofApp, regionalStackName } from './retryproof-app.ts';
export type { RetryproofApp } from './retryproof-app.ts';
export type { RegionalPlacement } from './regional-placement.ts';
export type { ActionSource, RegionsConfig, RetryproofConfig, RouteConfig } from '../lambdas/config/route-config.ts';
export type { LocalServices, LocalSetup } from '../lambdas/config/config-file.ts';
