/** The construct's props, apart from it so that its steps (lib/receiver/) read them without importing the construct. */
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ActionSource, RetryproofConfig } from '../../lambdas/config/route-config.ts';

/** Props of {@link WebhookReceiver}: the routes, the actions they run, and the rest of the configuration. */
export interface WebhookReceiverProps extends Omit<RetryproofConfig, 'demo' | 'actions'> {
  /**
   * The actions the routes name, each your own module: `entry` is the path (absolute, or
   * relative to the current directory) of a module whose default export is the action,
   * `async (ctx) => result`; `ledger`, optionally, of a module whose default export is the
   * action's ledger (`post`, `listWindow`, `reverse`), which the reconciler reads to find
   * and reverse a key that took effect twice. Both are bundled into the functions at synth.
   * A route that names an action missing here fails synth.
   */
  readonly actions: Readonly<Record<string, ActionSource>>;
  /**
   * The customer-managed KMS key of route secrets you import (`importSecret: true`): the
   * ingest gets kms:Decrypt on it. Secrets the receiver creates use the AWS managed key.
   * @default - imported secrets use the AWS managed key, which needs no grant
   */
  readonly secretsKey?: IKey;
}
