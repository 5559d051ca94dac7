/**
 * `retryproof`, the package: the {@link WebhookReceiver} construct and the configuration
 * types its props are made of (with `regions`, one receiver per replica Region, each in a
 * stack of that Region: see WebhookReceiver). Action and ledger modules import their types
 * from `retryproof/actions` instead, which carries no CDK. The app builder
 * (lib/retryproof-app.ts) stays out: it runs cdk-nag, which the package does not depend on.
 */
export { WebhookReceiver } from './webhook-receiver.ts';
export { LedgerTable } from './demo/ledger-table.ts';
export type { LedgerTableProps } from './demo/ledger-table.ts';
export type { WebhookReceiverProps } from './webhook-receiver.ts';
export type { RegionalPlacement } from './regional-placement.ts';
export type { ActionSource, RegionsConfig, RetryproofConfig, RouteConfig } from '../lambdas/config/route-config.ts';
export type { LocalServices, LocalSetup } from '../lambdas/config/config-file.ts';
