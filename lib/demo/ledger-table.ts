import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { LEDGER_TABLE } from '../../lambdas/store/table-schema.ts';

/** Props of {@link LedgerTable}. */
export interface LedgerTableProps {
  /**
   * What happens to the table when it leaves the stack. Even in the demo it is an
   * accounting record: the reconciler's evidence of what was paid out.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A ledger table laid out for the package's DynamoDbLedger (`retryproof/actions`): the demo's
 * (the accounting system the `payout` action posts to and the reconciler compares against), or
 * one of your own; on demand, PITR, retained, with its `byHour` GSI. Built from LEDGER_TABLE.
 * Grant the receiver's functions its use with `WebhookReceiver.grantLedgerTable`.
 */
export class LedgerTable extends Construct {
  readonly table: ITableV2;

  constructor(scope: Construct, id: string, props: LedgerTableProps = {}) {
    super(scope, id);
    const s = LEDGER_TABLE;
    const string = (name: string) => ({ name, type: AttributeType.STRING });
    this.table = new TableV2(this, 'Table', {
      partitionKey: string(s.partitionKey),
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      globalSecondaryIndexes: [
        {
          indexName: s.byHourIndex.name,
          partitionKey: string(s.byHourIndex.partitionKey),
          sortKey: string(s.byHourIndex.sortKey),
        },
      ],
    });
  }
}
