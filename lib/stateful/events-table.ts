import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';

/** Props of {@link EventsTable}. */
export interface EventsTableProps {
  /**
   * What happens to the table when it leaves the stack. It holds the idempotency records,
   * so losing it reopens every key to the next copy of a delivery.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The one events table: idempotency records, their execution log and route state.
 * On demand, point-in-time recovery, TTL on `expiresAt`, the sharded `byTime` GSI the
 * reconciler reads its window from and the sparse `parked` GSI. Its key schema comes
 * from lambdas/store/table-schema.ts, the same constants the local test harness uses.
 */
export class EventsTable extends Construct {
  readonly table: ITableV2;

  constructor(scope: Construct, id: string, props: EventsTableProps = {}) {
    super(scope, id);
    const s = EVENTS_TABLE;
    const string = (name: string) => ({ name, type: AttributeType.STRING });
    this.table = new TableV2(this, 'Table', {
      partitionKey: string(s.partitionKey),
      sortKey: string(s.sortKey),
      billing: Billing.onDemand(),
      // Expiry is enforced in the write condition; TTL only clears the dead records later.
      timeToLiveAttribute: s.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // A KMS key owned by the account rather than by DynamoDB: its use shows in CloudTrail.
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      globalSecondaryIndexes: [
        {
          indexName: s.byTimeIndex.name,
          partitionKey: string(s.byTimeIndex.partitionKey),
          sortKey: string(s.byTimeIndex.sortKey),
          // No body in the index: every record write would otherwise be paid twice.
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...s.byTimeIndex.projection],
        },
        {
          indexName: s.parkedIndex.name,
          partitionKey: string(s.parkedIndex.partitionKey),
          sortKey: string(s.parkedIndex.sortKey),
          projectionType: ProjectionType.ALL,
        },
      ],
    });
  }
}
