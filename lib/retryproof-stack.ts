import { Annotations, Stack, Validations } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEMO_ACTION, resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE, DEMO_LEDGER_TABLE_ENV } from '../lambdas/demo/demo-environment.ts';
import { LedgerTable } from './demo/ledger-table.ts';
import { defaultPolicyOf, nagResource } from './nag.ts';
import { WebhookReceiver } from './webhook-receiver.ts';

/** Props of {@link RetryproofStack}. */
export interface RetryproofStackProps extends StackProps {
  /** The configuration as written in retryproof.config.ts. */
  readonly config: RetryproofConfig;
}

/**
 * The app's stack: one {@link WebhookReceiver} over retryproof.config.ts, plus, only when
 * the configuration asks for it with `demo: true`, the demo: the `payout` action and its
 * ledger table. The receiver's id is `Default`, which CDK leaves out of logical ids, so
 * its resources keep the ids they had before the receiver was a construct of its own.
 */
export class RetryproofStack extends Stack {
  readonly receiver: WebhookReceiver;

  constructor(scope: Construct, id: string, props: RetryproofStackProps) {
    super(scope, id, props);
    // The whole configuration first, demo included: a route on `payout` without the demo, or
    // an action of the user's own named `payout` beside it, is refused here.
    resolveConfig(props.config);
    const { demo, ...config } = props.config;
    const ledger = demo === true ? new LedgerTable(this, 'Ledger') : undefined;
    const actions = { ...config.actions, ...(ledger === undefined ? {} : { [DEMO_ACTION]: DEMO_ACTION_SOURCE }) };
    const receiver = new WebhookReceiver(this, 'Default', { ...config, actions });
    this.receiver = receiver;
    if (ledger === undefined) return;

    Annotations.of(ledger).addWarningV2(
      'retryproof:demo-deployed',
      'demo: true deploys the demo payout action and its ledger table; remove it from retryproof.config.ts, and give every route your own action, before real senders call this',
    );
    // The payout posts entries (PutItem); the reconciler reads its window on the byHour
    // index (Query) and reverses duplicates (UpdateItem).
    ledger.table.grant(receiver.executorFunction, 'dynamodb:PutItem');
    ledger.table.grant(receiver.reconcilerFunction, 'dynamodb:Query', 'dynamodb:UpdateItem');
    for (const fn of [receiver.executorFunction, receiver.reconcilerFunction]) {
      fn.addEnvironment(DEMO_LEDGER_TABLE_ENV, ledger.table.tableName);
      Validations.of(defaultPolicyOf(fn.serviceRole)).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(this, ledger.table.tableArn)}/index/*]`,
        reason: "payout and reconciliation Query the ledger's byHour index; index/* names only this table's indexes",
      });
    }
  }
}
