/**
 * Runs the three functions of a deployment through their real wiring (wireIngest,
 * wireExecutor, createReconciler, with the demo's payout action and ledger) on DynamoDB
 * Local and fauxqs, each over clients of its own that record every call it makes
 * (recorded-calls.ts), through scenarios that reach every call each function can make.
 *
 * The functions share one deployment: an events table, a ledger table and a queue pair of
 * this run's own (no function publishes to the alarm topic: alarms do). The signing secrets come from
 * the one stand-in, offlineSecretsManager. What a function does not make itself is made
 * through clients that record nothing: the event source's receives and deletes (Lambda's,
 * not our code's), and each scenario's preparation and reading back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { CreateBucketCommand, DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { actionRegistryOf, ledgersOf } from '../../lambdas/actions/action-modules.ts';
import { DEMO_ACTION, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedRoute } from '../../lambdas/config/resolve-config.ts';
import { ROUTE_STATE_MAX_AGE_MS } from '../../lambdas/config/route-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { DynamoDbLedger } from '../../lambdas/demo/dynamodb-ledger.ts';
import { payoutAction } from '../../lambdas/demo/payout.ts';
import { RECORD_STATUS } from '../../lambdas/domain/event-record.ts';
import { bodyObjectName, bodyObjectRenewAfterSeconds, longestTtlSeconds } from '../../lambdas/domain/body-object.ts';
import { fingerprint } from '../../lambdas/domain/fingerprint.ts';
import { createReconciler } from '../../lambdas/reconciler/create-reconciler.ts';
import type { ReconcileReport } from '../../lambdas/reconciler/reconcile.ts';
import { SecretsManagerSource } from '../../lambdas/secrets/secrets-manager-source.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { DynamoDbExecutionStore } from '../../lambdas/store/dynamodb-execution-store.ts';
import { DynamoDbRouteStateStore } from '../../lambdas/store/dynamodb-route-state-store.ts';
import { RECORD_SK, recordPk } from '../../lambdas/store/record-keys.ts';
import type { Deployment } from '../../lambdas/config/deployment.ts';
import { wireExecutor } from '../../lambdas/executor/wire-executor.ts';
import { wireIngest } from '../../lambdas/ingest/wire-ingest.ts';
import { createEventsTable, createLedgerTable, createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';
import { httpApiEvent, lambdaContext } from '../../local/http-api-event.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';
import { sampleBody, signSample } from '../../local/sample-delivery.ts';
import { pollOnce } from '../../local/sqs-event-source.ts';
import { waitFor } from '../support/executor-fixture.ts';
import { offlineSecretsManager, recordCalls } from './recorded-calls.ts';
import { ANSWER_MARGIN_MS } from '../../lambdas/ingest/ingest-delivery.ts';
import type { RecordedCall, ResourceNames } from './recorded-calls.ts';

/** The functions of a deployment, as their roles are named in the stack. */
export const FUNCTIONS = ['ingest', 'executor', 'reconciler'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

/** The role-names of the resources calls land on, shared with the template's side of the comparison. */
export const RESOURCE = {
  eventsTable: 'events table',
  ledgerTable: 'ledger table',
  workQueue: 'work queue',
  deadLetterQueue: 'dead-letter queue',
  bodyBucket: 'body bucket',
  secretOf: (route: string) => `secret of route ${route}`,
} as const;

export interface Exercise {
  /** Every call each function made, in order. */
  readonly calls: Readonly<Record<FunctionName, readonly RecordedCall[]>>;
  /** Each scenario, and whether it reached what it is there for. */
  readonly reached: Readonly<Record<string, boolean>>;
}

/** The reconciler runs an hour ahead, so every record of this run is in its window and long stuck. */
const RECONCILER_AHEAD_MS = 3_600_000;

/** A body above the routes' claimCheckAboveBytes (128 KiB by default): it goes to the bucket. */
const LARGE = { pad: 'x'.repeat(140 * 1024) } as const;

/** fauxqs's S3, on its SQS endpoint (path-style), as the tests' body bucket uses it. */
function localS3Client(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, forcePathStyle: true });
}

/**
 * S3's conditional put, which fauxqs ignores (it overwrites: lambdas/store/s3-body-objects.ts): a
 * PutObject with `If-None-Match: *` on a name taken answers 412 Precondition Failed, as S3 does.
 * Added after the recording, so the put is recorded either way.
 */
function conditionalPuts(client: S3Client, plain: S3Client): S3Client {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Bucket?: string; Key?: string; IfNoneMatch?: string };
      if (context.commandName === 'PutObjectCommand' && input.IfNoneMatch === '*') {
        const taken = await plain.send(new HeadObjectCommand({ Bucket: input.Bucket, Key: input.Key })).then(
          () => true,
          () => false,
        );
        if (taken) throw Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), { name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
      }
      return next(args);
    },
    { step: 'initialize', name: 'fauxqsIfNoneMatch' },
  );
  return client;
}

function secretFor(route: ResolvedRoute): string {
  // Standard Webhooks secrets are base64 behind whsec_; every other scheme takes any string.
  return route.signature.scheme === 'standard-webhooks'
    ? `whsec_${randomBytes(24).toString('base64')}`
    : `whsec_${randomBytes(16).toString('hex')}`;
}

/**
 * Runs every scenario on a deployment of `config`, whose routes must include the demo route
 * `demo` (the payout honours `simulate` there only, and its breaker pauses) and at least one
 * other route on the payout action.
 */
export async function exerciseFunctions(config: RetryproofConfig): Promise<Exercise> {
  const resolved = resolveConfig(config);
  const demo = resolved.routes.find((r) => r.name === 'demo');
  const other = resolved.routes.find((r) => r.name !== 'demo' && r.action === DEMO_ACTION);
  if (demo?.breakerReaction !== 'pause' || other === undefined) {
    throw new Error('the scenarios need the demo route with a pausing breaker, and another payout route');
  }
  const dynamoEndpoint = inject('dynamoEndpoint');
  const sqsEndpoint = inject('sqsEndpoint');

  // Prepare the deployment, through clients that record nothing.
  const ddb = localDynamoClient(dynamoEndpoint);
  const sqs = localSqsClient(sqsEndpoint);
  const suffix = randomUUID().slice(0, 8);
  const eventsTable = await createEventsTable(ddb, `iam-events-${suffix}`);
  const ledgerTable = await createLedgerTable(ddb, `iam-ledger-${suffix}`);
  // Visibility 1 s: a message handed back comes round again at once.
  const queue = await createQueuePair(sqs, sqsEndpoint, `iam-${suffix}`, {
    maxReceiveCount: resolved.queue.maxReceiveCount,
    visibilityTimeoutSeconds: 1,
  });
  const s3 = localS3Client(sqsEndpoint);
  const bodyBucket = `iam-bodies-${suffix}`;
  await s3.send(new CreateBucketCommand({ Bucket: bodyBucket }));
  const secrets = new Map(resolved.routes.map((r) => [r.secretName, secretFor(r)]));
  const names: ResourceNames = new Map([
    [eventsTable, RESOURCE.eventsTable],
    [ledgerTable, RESOURCE.ledgerTable],
    [queue.queueUrl, RESOURCE.workQueue],
    [queue.dlqUrl, RESOURCE.deadLetterQueue],
    [bodyBucket, RESOURCE.bodyBucket],
    ...resolved.routes.map((r) => [r.secretName, RESOURCE.secretOf(r.name)] as const),
  ]);

  // Each function's own clients, recording into its own log.
  const calls: Record<FunctionName, RecordedCall[]> = { ingest: [], executor: [], reconciler: [] };
  const made: { destroy(): void }[] = [ddb, sqs, s3];
  const recorded = <C extends Parameters<typeof recordCalls>[0]>(fn: FunctionName, client: C): C => {
    made.push(client);
    return recordCalls(client, calls[fn], names);
  };
  const dynamoOf = (fn: FunctionName) => recorded(fn, localDynamoClient(dynamoEndpoint));
  const sqsOf = (fn: FunctionName) => recorded(fn, localSqsClient(sqsEndpoint));
  const s3Of = (fn: FunctionName) => conditionalPuts(recorded(fn, localS3Client(sqsEndpoint)), s3);
  const deployment: Deployment = { config: resolved, eventsTable, queueUrl: queue.queueUrl, bodyBucket };

  // The ingest's clock, moved on as a sender waits before it repeats (tripDelivery below).
  let senderWaitedMs = 0;
  const ingest = wireIngest(
    deployment,
    { dynamo: dynamoOf('ingest'), sqs: sqsOf('ingest'), s3: s3Of('ingest') },
    {
      secrets: new SecretsManagerSource(new SecretsProvider({ awsSdkV3Client: recorded('ingest', offlineSecretsManager(secrets)) })),
      now: () => Date.now() + senderWaitedMs,
    },
  );
  // The action and the ledger as the app bundles them (lambdas/demo/payout-action.ts and
  // payout-ledger.ts), each over a client of its function: those modules make their own
  // DynamoDBClient, which no middleware could be added to.
  const executorClients = { dynamo: dynamoOf('executor'), sqs: sqsOf('executor'), s3: s3Of('executor') };
  const executorActions = actionRegistryOf({ [DEMO_ACTION]: { default: payoutAction(new DynamoDbLedger(dynamoOf('executor'), ledgerTable)) } });
  // The executor keeps a route's state ROUTE_STATE_MAX_AGE_MS: each pause below moves its clock past that.
  let stateClockMs = 0;
  const executor = wireExecutor(deployment, executorClients, { actions: executorActions, monotonicNow: () => stateClockMs });
  const reconcilerOf = (aheadMs: number) =>
    createReconciler({
      dynamo: dynamoOf('reconciler'),
      eventsTable,
      ledgers: ledgersOf({ [DEMO_ACTION]: { default: new DynamoDbLedger(dynamoOf('reconciler'), ledgerTable) } }),
      sqs: sqsOf('reconciler'),
      queueUrl: queue.queueUrl,
      s3: s3Of('reconciler'),
      bodyBucket,
      config: resolved,
      now: () => Date.now() + aheadMs,
    });
  const reconciler = reconcilerOf(RECONCILER_AHEAD_MS);
  // Past the age at which a body object is renewed: S3's Last-Modified cannot be moved back on
  // fauxqs, so the clock of the function that decides is moved on (its own `now`).
  const pastRenewalMs = bodyObjectRenewAfterSeconds(longestTtlSeconds(resolved.routes)) * 1000 + 86_400_000;

  // Acting on the deployment: deliveries, event-source rounds, and reading back.
  const bodyOf = (route: ResolvedRoute, key: string, payload: Record<string, unknown> = {}): string =>
    sampleBody(route, key, { amount: 1250, currency: 'EUR', ...payload });
  const deliver = async (route: ResolvedRoute, key: string, payload: Record<string, unknown> = {}): Promise<number | undefined> => {
    const body = bodyOf(route, key, payload);
    const signed = signSample(route, secrets.get(route.secretName) ?? '', key, body, Math.floor(Date.now() / 1000));
    const answer = await ingest(httpApiEvent({ route: route.name, body: signed.body, headers: signed.headers }), lambdaContext('retryproof-ingest'));
    return answer.statusCode;
  };
  const doc = documentClient(ddb);
  const item = async (route: ResolvedRoute, key: string): Promise<Record<string, unknown>> => {
    const out = await doc.send(new GetCommand({ TableName: eventsTable, Key: { pk: recordPk(route.name, key), sk: RECORD_SK }, ConsistentRead: true }));
    if (out.Item === undefined) throw new Error(`no record of ${route.name}/${key}`);
    return out.Item;
  };
  /** Event-source rounds (Lambda's receive and delete, unrecorded) until `done` holds. */
  const runExecutorUntil = (what: string, done: () => Promise<boolean>): Promise<true> =>
    waitFor(what, async () => {
      await pollOnce(executor, { sqs, queueUrl: queue.queueUrl, context: () => lambdaContext('retryproof-executor') });
      return (await done()) ? true : undefined;
    });
  const statusOf = async (route: ResolvedRoute, key: string): Promise<unknown> => (await item(route, key)).status;
  const newKey = (): string => `evt_${randomUUID().replace(/-/g, '')}`;
  const operations = (fn: FunctionName): string[] => calls[fn].map((c) => c.operation);
  const reached: Record<string, boolean> = {};

  // Ingest: a new delivery on each route (each route's secret), and a duplicate.
  for (const route of resolved.routes) {
    reached[`ingest accepts a new delivery on route ${route.name}`] = (await deliver(route, newKey())) === 202;
  }
  const duplicate = newKey();
  await deliver(other, duplicate);
  reached['ingest answers a duplicate from its record'] = (await deliver(other, duplicate)) === 202 && (await item(other, duplicate)).hits === 2;

  // The S3 claim check: a large body is stored before its claim, and the executor runs the bytes read back.
  const large = newKey();
  /** Whether the bucket holds the object of a delivery's body, under the name the ingest gives it. */
  const stored = (route: ResolvedRoute, key: string, payload: Record<string, unknown>): Promise<boolean> =>
    s3.send(new HeadObjectCommand({ Bucket: bodyBucket, Key: bodyObjectName(route.name, key, fingerprint(Buffer.from(bodyOf(route, key, payload)))) })).then(
      () => true,
      () => false,
    );
  reached['ingest stores a large body in the bucket before its claim'] =
    (await deliver(other, large, LARGE)) === 202 && operations('ingest').includes('s3:PutObject') && (await stored(other, large, LARGE));
  await runExecutorUntil('the large body run', async () => (await statusOf(other, large)) === RECORD_STATUS.completed);
  reached['executor runs a large body read back from the bucket'] = operations('executor').includes('s3:GetObject');
  // A claim that failed after its body was stored (as a Lambda timed out between the two): the
  // sender's retry finds the object there, and the send checks its age before pointing to it.
  const reclaimed = newKey();
  await deliver(other, reclaimed, LARGE);
  await doc.send(new DeleteCommand({ TableName: eventsTable, Key: { pk: recordPk(other.name, reclaimed), sk: RECORD_SK } }));
  const headsBefore = operations('ingest').filter((o) => o === 's3:HeadObject').length;
  reached['ingest checks a body object that was there already before its message points to it'] =
    (await deliver(other, reclaimed, LARGE)) === 202 && operations('ingest').filter((o) => o === 's3:HeadObject').length > headsBefore;
  await runExecutorUntil('the re-claimed large body run', async () => (await statusOf(other, reclaimed)) === RECORD_STATUS.completed);

  // Executor, locked: another worker holds the record's lease, so the message is hidden until it ends.
  const locked = newKey();
  await deliver(demo, locked);
  const lockedRecord = await item(demo, locked);
  await new DynamoDbExecutionStore(ddb, eventsTable).acquireLease({
    route: demo.name,
    key: locked,
    receivedAt: lockedRecord.receivedAt as number,
    nowMs: Date.now(),
    leaseMs: 120_000,
    token: 'another-worker',
    maxAttempts: demo.maxAttempts,
  });
  await runExecutorUntil('the locked message handed back', () => Promise.resolve(operations('executor').includes('sqs:ChangeMessageVisibility')));
  reached['executor hides a message whose record another worker holds'] = (await item(demo, locked)).leaseToken === 'another-worker';

  // Executor, permanent failure: the record fails and a dead-letter copy goes to the work queue.
  const permanent = newKey();
  await deliver(demo, permanent, { simulate: { permanentError: true } });
  await runExecutorUntil('the permanent failure', async () => (await statusOf(demo, permanent)) === RECORD_STATUS.failed);
  // The copy is then lost, as when a worker dies between the two writes: the record stays
  // in the retry partition, a stranded record for the reconciler.
  reached['executor fails a record and sends its dead-letter copy'] = await loseDeadLetterCopy(sqs, queue.queueUrl, permanent);

  // Executor, completed and retryable.
  const completed = newKey();
  await deliver(demo, completed);
  await runExecutorUntil('the completion', async () => (await statusOf(demo, completed)) === RECORD_STATUS.completed);
  reached['executor completes a record and posts to the ledger'] = true;
  const retried = newKey();
  await deliver(demo, retried, { simulate: { failAttempts: 1 } });
  await runExecutorUntil('the retryable failure', async () => typeof (await item(demo, retried)).lastError === 'string');
  reached['executor releases a record after a retryable failure'] = true;

  // Ingest, breaker: a key that comes back `threshold` times after its 2xx pauses the route
  // (the alarm on RoutePaused announces it); a second key crossing on the paused route reads who paused it.
  const tripDelivery = async (key: string): Promise<void> => {
    for (let i = 0; i < demo.breakerThreshold; i++) {
      // A repeat counts only when it arrives more than ANSWER_MARGIN_MS after the first delivery.
      senderWaitedMs += ANSWER_MARGIN_MS + 1;
      await deliver(demo, key);
    }
  };
  // Both keys' work is taken and run first: a worker's lease starts each key's count.
  const [first, second] = [newKey(), newKey()];
  await deliver(demo, first);
  await deliver(demo, second);
  await runExecutorUntil('the keys that will trip, run', async () =>
    (await statusOf(demo, first)) === RECORD_STATUS.completed && (await statusOf(demo, second)) === RECORD_STATUS.completed,
  );
  await tripDelivery(first);
  stateClockMs += ROUTE_STATE_MAX_AGE_MS;
  const routeState = new DynamoDbRouteStateStore(ddb, eventsTable);
  const pausedBy = await routeState.get(demo.name);
  reached['ingest trips the breaker: pauses the route'] = pausedBy.state === 'paused' && pausedBy.key === first;
  const before = operations('ingest').filter((o) => o === 'dynamodb:GetItem').length;
  await tripDelivery(second);
  reached['ingest trips the breaker on a route paused already: reads who paused it'] =
    typeof (await item(demo, second)).breakerTrippedAt === 'number' && operations('ingest').filter((o) => o === 'dynamodb:GetItem').length > before;

  // Executor, paused route: new work is parked, in a transaction that checks the pause.
  const [parkedA, parkedB] = [newKey(), newKey()];
  await deliver(demo, parkedA);
  await deliver(demo, parkedB);
  await runExecutorUntil('the paused route\'s work parked', async () =>
    (await statusOf(demo, parkedA)) === RECORD_STATUS.parked && (await statusOf(demo, parkedB)) === RECORD_STATUS.parked,
  );
  reached['executor parks the work of a paused route'] = true;

  // Reconciler: the route resumed (parked work to unpark), a duplicate effect of a completed
  // key (as a worker that died after its effect leaves), a stuck record, a stranded one.
  await routeState.resume(demo.name, Date.now());
  await new DynamoDbLedger(ddb, ledgerTable).post({ route: demo.name, idempotencyKey: completed, amount: 1250, currency: 'EUR', postedAt: Date.now() });
  // The stuck record: a copy arrived before any worker took it, so the record keeps the payload the reconciler re-sends.
  const stuck = newKey();
  await deliver(other, stuck);
  await deliver(other, stuck);
  reached['ingest keeps the payload for a copy that found the work not yet taken'] = typeof (await item(other, stuck)).body === 'string';
  // The same with a large body: the record keeps the pointer, and the re-send checks the object first.
  const stuckLarge = newKey();
  await deliver(other, stuckLarge, LARGE);
  await deliver(other, stuckLarge, LARGE);
  const report: ReconcileReport = await reconciler.run();
  reached['reconciler unparks the work of a resumed route'] =
    (await statusOf(demo, parkedA)) === RECORD_STATUS.received && (await statusOf(demo, parkedB)) === RECORD_STATUS.received;
  reached['reconciler re-enqueues stuck work'] = (await item(other, stuck)).resends === 1;
  const stranded = await item(demo, permanent);
  reached['reconciler re-sends a stranded record\'s dead-letter copy'] = stranded.resends === 1 && stranded.gsi2pk === undefined;
  reached['reconciler reverses a duplicate effect in the ledger'] = report.reversals.some((r) => r.key === completed);
  reached['reconciler checks the body object of work it re-sends'] =
    (await item(other, stuckLarge)).resends === 1 && operations('reconciler').includes('s3:HeadObject');

  // The last scenarios leave the queue and the records as nothing above needs them.
  // Executor, body object gone (expired, say): nothing runs, and the copy for people is sent
  // after a check of the object, which finds none.
  const gone = newKey();
  await deliver(other, gone, LARGE);
  await s3.send(new DeleteObjectCommand({ Bucket: bodyBucket, Key: bodyObjectName(other.name, gone, fingerprint(Buffer.from(bodyOf(other, gone, LARGE)))) }));
  await runExecutorUntil('the delivery without its body handed to people', () => Promise.resolve(operations('executor').includes('s3:HeadObject')));
  reached['executor hands a delivery whose body object is gone to people'] = (await statusOf(other, gone)) !== RECORD_STATUS.completed;

  // Reconciler, a paused route's parked work kept longer: its body object is renewed first, by a
  // run a day past the record's expiry (which keeping it longer averts).
  await routeState.pause(demo.name, { reason: 'least-privilege scenario', at: Date.now(), by: 'operator' });
  stateClockMs += ROUTE_STATE_MAX_AGE_MS;
  const parkedLarge = newKey();
  await deliver(demo, parkedLarge, LARGE);
  await runExecutorUntil('the large body parked', async () => (await statusOf(demo, parkedLarge)) === RECORD_STATUS.parked);
  const expiresAtMs = Number((await item(demo, parkedLarge)).expiresAt) * 1000;
  await reconcilerOf(expiresAtMs - Date.now() + 86_400_000).run();
  reached['reconciler renews the body object of parked work it keeps'] = operations('reconciler').includes('s3:CopyObject');

  // Executor, a body object past its renewal age: renewed (copied onto itself) before it runs.
  const aheadExecutor = wireExecutor(deployment, executorClients, { actions: executorActions, now: () => Date.now() + pastRenewalMs });
  await deliver(other, newKey(), LARGE);
  reached['executor renews an old body object before it runs'] = await waitFor('an old body object renewed', async () => {
    await pollOnce(aheadExecutor, { sqs, queueUrl: queue.queueUrl, context: () => lambdaContext('retryproof-executor') });
    return operations('executor').includes('s3:CopyObject') ? true : undefined;
  });

  for (const client of made) client.destroy();
  return { calls, reached };
}

/**
 * Takes a record's dead-letter copy off the work queue, leaving every other message as it
 * was. True once the copy was found and deleted.
 */
async function loseDeadLetterCopy(sqs: ReturnType<typeof localSqsClient>, queueUrl: string, key: string): Promise<boolean> {
  return waitFor(`the dead-letter copy of ${key}`, async () => {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    let found: true | undefined;
    for (const message of out.Messages ?? []) {
      const body = JSON.parse(message.Body ?? '{}') as { key?: string; deadLetterId?: string };
      if (body.key === key && body.deadLetterId !== undefined) {
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        found = true;
      } else {
        await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }));
      }
    }
    return found;
  });
}
