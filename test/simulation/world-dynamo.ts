/**
 * DynamoDB as each function's SDK client meets it: one client per function (each Lambda has its
 * own, with its own retry quota), faults drawn from the seed while the schedule runs. The
 * simulation's own reads (observers, invariants) use `w.dynamo`, which has none. And the
 * eventually consistent control's replication between the Regions' tables.
 */
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { faultyDynamoDb } from './faulty-dynamodb.ts';
import { ISOLATED } from './run-shape.ts';
import { WRITE_COMMANDS } from './sim-constants.ts';
import type { World } from './world.ts';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DeserializeHandler, DeserializeHandlerArguments, HandlerExecutionContext, MetadataBearer } from '@smithy/types';

/** The key of a write made by an actor for one port call. */
export function ownWriteOf(actor: number, pk: string, call: number | undefined): string {
  return `${actor}\u0000${pk}\u0000${String(call)}`;
}

export function faultyClient(w: World): DynamoDBClient {
  const client = new DynamoDBClient({ endpoint: w.env.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  faultyDynamoDb(client, {
    sched: w.sched,
    random: w.faultRandom,
    // An isolated Region's calls fail (its writes and strongly consistent reads cannot reach
    // the other Regions), or commit without an answer, while the isolation lasts.
    plan: () => (w.dynamoPlan !== undefined && w.isolated !== undefined && w.regionOfActor() === w.isolated ? ISOLATED : w.dynamoPlan),
    advanceTo: w.setNow,
    now: () => w.nowMs,
    nextTimerMs: () => w.timers.nextDueMs(),
    onCommitThenError: (_command, input) => {
      const id = w.sched.current()?.id;
      const key = input.Key as { pk?: { S?: string } } | undefined;
      const item = input.Item as { pk?: { S?: string }; writeId?: { S?: string }; claimId?: { S?: string } } | undefined;
      const values = input.ExpressionAttributeValues as Record<string, { S?: string } | undefined> | undefined;
      const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
      const pk = key?.pk?.S ?? item?.pk?.S;
      // A claim's nonce is its claimId (record-transitions.ts claimKey: `#aN = if_not_exists(#aN, :aN)`), a transition's its writeId.
      const claimName = Object.entries(names ?? {}).find(([, name]) => name === 'claimId')?.[0];
      const claimId = claimName === undefined ? item?.claimId?.S : values?.[`:${claimName.slice(1)}`]?.S;
      if (id !== undefined && pk !== undefined) w.committedUnanswered.set(ownWriteOf(id, pk, w.callScope.getStore()), values?.[':writeId']?.S ?? item?.writeId?.S ?? claimId);
    },
    // The slow-lease operation's delay, for its actor's lease write alone (the only write
    // that sets :leaseUntil, record-transitions.ts acquireLease).
    forcedSlowMs: (body) => {
      const id = w.sched.current()?.id;
      const delay = id === undefined || !body.includes('":leaseUntil"') ? undefined : w.slowAnswerFor.get(id);
      if (delay !== undefined && id !== undefined) {
        w.slowAnswerFor.delete(id);
        w.trace?.(`  slow-lease: the lease write of #${id} answered ${delay} ms late`);
      }
      return delay;
    },
    stats: w.dynamoStats,
    trace: w.trace,
  });
  if (w.eventual) replicateWrites(w, client);
  w.faultClients.push(client);
  return client;
}

/** The four functions' clients, in the order their faults draw from one stream. */
export function buildClients(w: World): void {
  w.clientOf = { ingest: faultyClient(w), executor: faultyClient(w), reconciler: faultyClient(w), operator: faultyClient(w) };
}

// The eventually consistent control's replication: a write that reached a Region's table is
// copied to the others `replicationLagMs` later; of two writes to one item, the later one wins
// everywhere (MREC's last writer wins), whatever each Region's condition saw.
export function replicateWrites(w: World, client: DynamoDBClient): void {
  client.middlewareStack.add(
    <Output extends MetadataBearer>(next: DeserializeHandler<object, Output>, context: HandlerExecutionContext) =>
      async (args: DeserializeHandlerArguments<object>) => {
        const out = await next(args);
        const input = args.input as { TableName?: string; Key?: Record<string, AttributeValue>; Item?: Record<string, AttributeValue> };
        const item = input.Key ?? input.Item;
        if (input.TableName !== undefined && item?.pk?.S !== undefined && item.sk?.S !== undefined && WRITE_COMMANDS.has(context.commandName ?? '')) {
          noteWrite(w, input.TableName, item.pk.S, item.sk.S);
        }
        return out;
      },
    { step: 'deserialize', name: 'simulationReplication', priority: 'low' },
  );
}

export function noteWrite(w: World, table: string, pk: string, sk: string): void {
  const write = { at: w.nowMs, seq: ++w.writeSeq };
  w.lastWrite.set(`${table}\u0000${pk}\u0000${sk}`, write);
  w.replication.push({ table, pk, sk, ...write });
}
/** Copies every write due by now (all of them with `all`) to the other Regions' tables. */
export async function replicateDue(w: World, all = false): Promise<void> {
  while (w.replication.length > 0) {
    const next = w.replication[0] as (typeof w.replication)[number];
    if (!all && next.at + w.shape.replicationLagMs > w.nowMs) return;
    w.replication.shift();
    const key = { pk: { S: next.pk }, sk: { S: next.sk } };
    const source = (await w.dynamo.send(new GetItemCommand({ TableName: next.table, Key: key, ConsistentRead: true }))).Item;
    for (const table of w.regionTables) {
      if (table === next.table) continue;
      const id = `${table}\u0000${next.pk}\u0000${next.sk}`;
      const held = w.lastWrite.get(id);
      if (held !== undefined && (held.at > next.at || (held.at === next.at && held.seq > next.seq))) continue;
      w.lastWrite.set(id, { at: next.at, seq: next.seq });
      if (source === undefined) await w.dynamo.send(new DeleteItemCommand({ TableName: table, Key: key }));
      else await w.dynamo.send(new PutItemCommand({ TableName: table, Item: source }));
      w.stats.replicatedWrites++;
    }
  }
}
