/**
 * The key schema of retryproof's tables, in one place. The CDK constructs and the test
 * harness both build their tables from these constants, so the two cannot drift.
 *
 * Events table items (one table, on demand, PITR, TTL on `expiresAt`):
 *   record         pk = EVT#<route>#<key>   sk = RECORD
 *   execution log  pk = EVT#<route>#<key>   sk = LOG#<receivedAt>#<startedAt>#<attempt>#<kind>#<unique>
 *                  (attempts that did not complete, and repairs: the completing attempt is on the record)
 *   route state    pk = ROUTE#<route>       sk = STATE
 *   reconciler     pk = RECONCILER          sk = CURSOR   (the window the scheduled runs reconcile,
 *                                                        where the last one stopped, and its lease)
 * GSI `byTime` (sharded hour buckets, so a busy hour is not a hot partition; INCLUDE projection
 * of what never changes on the way to completion, and completedAt):
 *   gsi1pk = T#<yyyy-mm-ddThh>#<shard>     gsi1sk = <receivedAt ISO>#<route>#<key>
 * GSI `parked` (sparse), read whole by resume and by every reconciler run, whatever the age:
 *   gsi2pk = PARKED#<route>                gsi2sk = <receivedAt ISO>#<key>   (PARKED records)
 *   gsi2pk = RETRY#<route>                 gsi2sk = <receivedAt ISO>#<key>   (a FAILED record until its
 *                                            dead-letter copy leaves; a record whose re-send failed;
 *                                            a record a person's bulk redrive took back, until it runs)
 * GSI `failed` (sparse, sharded as byTime), read by a person's bulk redrive (`retryproof redrive`):
 *   gsi3pk = FAILED#<route>#<shard>        gsi3sk = <receivedAt ISO>#<key>   (FAILED records, until redriven)
 *
 * Demo ledger table (the `payout` action's accounting system):
 *   entry          entryId
 * GSI `byHour`: hourBucket = <yyyy-mm-ddThh>, postedSort = <ISO>#<entryId>
 */

export const EVENTS_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
  byTimeIndex: {
    name: 'byTime',
    partitionKey: 'gsi1pk',
    sortKey: 'gsi1sk',
    /**
     * Only attributes that no write on a delivery's way to completion changes, and
     * `completedAt`: the index copy is written by the claim and by the completion, never by
     * the lease or a duplicate's hit (a lease that changed a projected attribute would pay
     * one more index write per delivery). A window read tells completed records (the ledger
     * check needs nothing more of them) from the few open ones, which the reconciler reads
     * whole (BatchGetItem). Route, key and receivedAt are in the keys (pk and gsi1sk).
     */
    projection: ['fingerprint', 'expiresAt', 'completedAt'],
  },
  parkedIndex: { name: 'parked', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  /**
   * Sparse: only fail and failExhausted write its keys and only a redrive removes them, so the
   * hot path never writes it. Projects everything: a bulk redrive sends each record's kept payload.
   */
  failedIndex: { name: 'failed', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  /** Shards per hour bucket of the byTime index. */
  timeShards: 8,
} as const;

export const LEDGER_TABLE = {
  partitionKey: 'entryId',
  byHourIndex: { name: 'byHour', partitionKey: 'hourBucket', sortKey: 'postedSort' },
} as const;

/** A table definition in the shape of DynamoDB's CreateTable input, for local tables. */
export interface LocalTableDefinition {
  readonly AttributeDefinitions: { AttributeName: string; AttributeType: 'S' }[];
  readonly KeySchema: { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
  readonly GlobalSecondaryIndexes: {
    IndexName: string;
    KeySchema: { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
    Projection: { ProjectionType: 'ALL' } | { ProjectionType: 'INCLUDE'; NonKeyAttributes: string[] };
  }[];
}

/** CreateTable input for the events table, derived from EVENTS_TABLE. */
export function eventsTableDefinition(): LocalTableDefinition {
  const t = EVENTS_TABLE;
  return {
    AttributeDefinitions: [
      t.partitionKey,
      t.sortKey,
      t.byTimeIndex.partitionKey,
      t.byTimeIndex.sortKey,
      t.parkedIndex.partitionKey,
      t.parkedIndex.sortKey,
      t.failedIndex.partitionKey,
      t.failedIndex.sortKey,
    ].map(
      (AttributeName) => ({ AttributeName, AttributeType: 'S' as const }),
    ),
    KeySchema: [
      { AttributeName: t.partitionKey, KeyType: 'HASH' },
      { AttributeName: t.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: t.byTimeIndex.name,
        KeySchema: [
          { AttributeName: t.byTimeIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: t.byTimeIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...t.byTimeIndex.projection] },
      },
      {
        // Sparse (only PARKED records carry its keys), so ALL costs little; resume needs whole records.
        IndexName: t.parkedIndex.name,
        KeySchema: [
          { AttributeName: t.parkedIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: t.parkedIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        // Sparse (only FAILED records carry its keys); a bulk redrive sends what it reads.
        IndexName: t.failedIndex.name,
        KeySchema: [
          { AttributeName: t.failedIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: t.failedIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}

/** CreateTable input for the demo ledger table, derived from LEDGER_TABLE. */
export function ledgerTableDefinition(): LocalTableDefinition {
  const t = LEDGER_TABLE;
  return {
    AttributeDefinitions: [t.partitionKey, t.byHourIndex.partitionKey, t.byHourIndex.sortKey].map((AttributeName) => ({
      AttributeName,
      AttributeType: 'S' as const,
    })),
    KeySchema: [{ AttributeName: t.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [
      {
        IndexName: t.byHourIndex.name,
        KeySchema: [
          { AttributeName: t.byHourIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: t.byHourIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}
