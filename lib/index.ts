/**
 * `retryproof`, the package: the {@link WebhookReceiver} construct and the configuration
 * types its props are made of. Action and ledger modules import their types from
 * `retryproof/actions` instead, which carries no CDK.
 */
export { WebhookReceiver } from './webhook-receiver.ts';
export type { WebhookReceiverProps } from './webhook-receiver.ts';
export type { ActionSource, RetryproofConfig, RouteConfig } from '../lambdas/config/route-config.ts';
export type { LocalServices, LocalSetup } from '../lambdas/config/config-file.ts';
