import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, MultiRegionConsistency, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';

/** The other Regions of an MRSC global table, seen from the Region that defines it. */
export interface EventsTableReplication {
  /** The Regions, other than the stack's, that hold a replica. */
  readonly replicas: readonly string[];
  /**
   * The Region that only votes in the quorum.
   * @default - none: three replicas
   */
  readonly witness?: string;
}

/** Props of {@link EventsTable}. */
export interface EventsTableProps {
  /**
   * What happens to the table when it leaves the stack. It holds the idempotency records,
   * so losing it reopens every key to the next copy of a delivery.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The table's physical name. A global table's other Regions find their replica by it.
   * @default - a name CloudFormation generates
   */
  readonly tableName?: string;
  /**
   * Makes the table a global table with multi-Region strong consistency (MRSC), defined in
   * the stack's Region, with a replica in each of `replicas` and the witness, if any.
   * @default - a table of the stack's Region only
   */
  readonly replication?: EventsTableReplication;
}

/**
 * The one events table: idempotency records, their execution log and route state.
 * On demand, point-in-time recovery, TTL on `expiresAt` (not on a global table: MRSC has
 * none), the sharded `byTime` GSI the reconciler reads its window from and the sparse
 * `parked` GSI. Its key schema comes from lambdas/store/table-schema.ts, the same
 * constants the local test harness uses.
 */
export class EventsTable extends Construct {
  readonly table: ITableV2;

  constructor(scope: Construct, id: string, props: EventsTableProps = {}) {
    super(scope, id);
    const s = EVENTS_TABLE;
    const string = (name: string) => ({ name, type: AttributeType.STRING });
    const replication = props.replication;
    this.table = new TableV2(this, 'Table', {
      ...(props.tableName === undefined ? {} : { tableName: props.tableName }),
      partitionKey: string(s.partitionKey),
      sortKey: string(s.sortKey),
      billing: Billing.onDemand(),
      // Expiry is enforced in the write condition; TTL only clears the dead records later. An
      // MRSC table cannot have TTL at all (DynamoDB Developer Guide, "How DynamoDB global tables
      // work", multi-Region strong consistency: TTL and local secondary indexes are not
      // supported), so there the reconciler deletes the expired records (docs/architecture.md,
      // "Several Regions").
      ...(replication === undefined ? { timeToLiveAttribute: s.ttlAttribute } : {}),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // A KMS key owned by the account rather than by DynamoDB: its use shows in CloudTrail.
      // On a global table each replica uses the AWS managed key of its own Region.
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      // MRSC, never MREC: an MREC replica evaluates a conditional write locally and settles
      // conflicts by last writer wins, so two Regions could both claim one key. TableV2 itself
      // checks the Region count and the Region set (its validateMrscConfiguration).
      ...(replication === undefined
        ? {}
        : {
            multiRegionConsistency: MultiRegionConsistency.STRONG,
            replicas: replication.replicas.map((region) => ({ region })),
            ...(replication.witness === undefined ? {} : { witnessRegion: replication.witness }),
          }),
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
        {
          // Sparse: written by a failure and a redrive only, never on the hot path.
          indexName: s.failedIndex.name,
          partitionKey: string(s.failedIndex.partitionKey),
          sortKey: string(s.failedIndex.sortKey),
          projectionType: ProjectionType.ALL,
        },
      ],
    });
  }
}
