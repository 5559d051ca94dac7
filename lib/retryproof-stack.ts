import { Annotations, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ConfigError, DEMO_ACTION, resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE, DEMO_LEDGER_TABLE_ENV } from '../lambdas/demo/demo-environment.ts';
import { LedgerTable } from './demo/ledger-table.ts';
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
    // A template without indentation: CloudFormation takes at most 1 MB of template from S3, and
    // indentation is a fifth of it (60 routes: 1,007,389 bytes indented, 820,725 not).
    super(scope, id, { ...props, suppressTemplateIndentation: props.suppressTemplateIndentation ?? true });
    // The whole configuration first, demo included: a route on `payout` without the demo, or
    // an action of the user's own named `payout` beside it, is refused here.
    const resolved = resolveConfig(props.config);
    const { demo, ...config } = props.config;
    for (const route of resolved.routes) {
      if (route.action === DEMO_ACTION && demo !== true && config.actions?.[DEMO_ACTION] === undefined) {
        throw new ConfigError(`route "${route.name}": action "${DEMO_ACTION}" is the demo's, deployed only with demo: true; set demo: true, or give the route an action of yours`);
      }
    }
    if (demo === true && resolved.regions !== undefined) {
      // Each Region would get a demo ledger of its own, and each Region's reconciler would then
      // compare the one table's records with a ledger that holds only its own Region's payouts.
      throw new ConfigError(
        `demo: true cannot be deployed with several Regions (${resolved.regions.replicas.join(', ')}): the demo ledger is a table of one Region; ` +
          'set demo: false and give every route your own action, whose ledger all Regions share',
      );
    }
    const ledger = demo === true ? new LedgerTable(this, 'Ledger') : undefined;
    const actions = { ...config.actions, ...(ledger === undefined ? {} : { [DEMO_ACTION]: DEMO_ACTION_SOURCE }) };
    const receiver = new WebhookReceiver(this, 'Default', { ...config, actions });
    this.receiver = receiver;
    if (ledger === undefined) return;
    receiver.describeLedgerTable(ledger.table.tableName);

    Annotations.of(ledger).addWarningV2(
      'retryproof:demo-deployed',
      'demo: true deploys the demo payout action and its ledger table; remove it from retryproof.config.ts, and give every route your own action, before real senders call this',
    );
    // The payout posts entries (PutItem); the reconciler reads its window on the byHour
    // index and reverses duplicates (UpdateItem): the demo ledger has nothing to undo.
    receiver.grantLedgerTable(ledger.table);
    for (const fn of [receiver.executorFunction, receiver.reconcilerFunction]) {
      fn.addEnvironment(DEMO_LEDGER_TABLE_ENV, ledger.table.tableName);
    }
  }
}
