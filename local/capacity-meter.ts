import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Capacity units one table consumed, split between the table itself and each of its indexes. */
export interface PhaseCapacity {
  /** Write units of the table's own items. */
  table: number;
  /** Write units of the index copies, by index name. */
  indexes: Record<string, number>;
  /** Read units (table and indexes together). */
  reads: number;
}

export interface CapacityMeter {
  /** Units consumed on the metered table, by phase; a phase is whatever label was set when the call went out. */
  readonly byPhase: Map<string, PhaseCapacity>;
  /** Labels the calls that go out from now on. */
  phase(label: string): void;
  /** Write units of a phase, table and indexes together. */
  writeUnits(label: string): number;
}

interface ConsumedCapacity {
  readonly TableName?: string;
  readonly CapacityUnits?: number;
  readonly ReadCapacityUnits?: number;
  readonly WriteCapacityUnits?: number;
  readonly Table?: { readonly CapacityUnits?: number; readonly ReadCapacityUnits?: number; readonly WriteCapacityUnits?: number };
  readonly GlobalSecondaryIndexes?: Record<string, { readonly CapacityUnits?: number; readonly ReadCapacityUnits?: number; readonly WriteCapacityUnits?: number }>;
}

/** The meter's middleware, by name: `client.middlewareStack.remove(CAPACITY_METER)` takes it off. */
export const CAPACITY_METER = 'retryproofCapacityMeter';

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

/**
 * Asks DynamoDB for the capacity every call consumes (`ReturnConsumedCapacity: INDEXES`,
 * set by a middleware on each request) and adds it up for one table, per phase. DynamoDB
 * Local reports it per table and per index, as DynamoDB does. A call refused by its
 * condition reports nothing here: the meter sees only calls that succeeded.
 */
export function meterCapacity(client: DynamoDBClient, tableName: string): CapacityMeter {
  const byPhase = new Map<string, PhaseCapacity>();
  let current = 'unlabelled';
  const add = (command: string, consumed: ConsumedCapacity): void => {
    if (consumed.TableName !== tableName) return;
    const phase = byPhase.get(current) ?? { table: 0, indexes: {}, reads: 0 };
    byPhase.set(current, phase);
    const units = (c: { CapacityUnits?: number } | undefined): number => c?.CapacityUnits ?? 0;
    if (!WRITES.has(command)) {
      phase.reads += units(consumed);
      return;
    }
    phase.table += units(consumed.Table);
    for (const [name, index] of Object.entries(consumed.GlobalSecondaryIndexes ?? {})) {
      phase.indexes[name] = (phase.indexes[name] ?? 0) + units(index);
    }
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
      const command = context.commandName ?? 'unknown';
      for (const c of Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) add(command, c);
      return out;
    },
    { step: 'initialize', name: CAPACITY_METER, priority: 'high' },
  );
  return {
    byPhase,
    phase: (label) => {
      current = label;
    },
    writeUnits: (label) => {
      const p = byPhase.get(label);
      return p === undefined ? 0 : p.table + Object.values(p.indexes).reduce((a, b) => a + b, 0);
    },
  };
}
