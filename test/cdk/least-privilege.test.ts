/**
 * Least privilege, derived from the code. Each function runs through its real wiring on
 * DynamoDB Local and fauxqs, over clients that record every call it makes
 * (test/iam/exercise-functions.ts); its role in the synthesized template must then allow
 * exactly those calls, on those resources, plus the calls the platform makes as the role
 * (PLATFORM below, each with why), and nothing else. A grant nobody calls fails, and so
 * does a call without a grant. That the scenarios reach every call the code can make is
 * checked against the SDK commands its modules import (test/iam/sdk-imports.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { DEMO_ACTION_SOURCE } from '../../lambdas/demo/demo-environment.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { isolationConfig } from './fixtures/isolation-config.ts';
import { exerciseFunctions, FUNCTIONS, RESOURCE } from '../iam/exercise-functions.ts';
import type { Exercise, FunctionName } from '../iam/exercise-functions.ts';
import type { RecordedCall } from '../iam/recorded-calls.ts';
import { sdkOperationsOf } from '../iam/sdk-imports.ts';
import { grantsOf, logicalIdOf, synthesize, withOwnAction } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

const ROLE: Readonly<Record<FunctionName, string>> = { ingest: 'IngestRole', executor: 'ExecutorRole', reconciler: 'ReconcilerRole' };
const FUNCTION_ROLES = Object.values(ROLE);
const ALARM_TOPIC = 'alarm topic';
const ALARM_TOPIC_KEY = 'alarm topic key';
const logsOf = (fn: FunctionName): string => `${fn} logs`;
/** A route's own work queue (issue 23), named as a grant line names it. */
const routeQueueOf = (route: string): string => `${RESOURCE.workQueue} of route ${route}`;

/** A grant as one line: `dynamodb:GetItem on events table`. */
type GrantLine = string;

/** Calls made as a function's role that are not calls of its code. */
const PLATFORM: Readonly<Record<FunctionName, readonly { readonly grants: readonly GrantLine[]; readonly why: string }[]>> = Object.fromEntries(
  FUNCTIONS.map((fn) => [
    fn,
    [
      // Only with `tracing: true` (off by default; retryproof-stack.test.ts checks both).
      ...(config.tracing === true
        ? [{ grants: ['xray:PutTraceSegments on *', 'xray:PutTelemetryRecords on *'], why: 'active tracing: the Lambda runtime sends the trace segments' }]
        : []),
      { grants: [`logs:CreateLogStream on ${logsOf(fn)}`, `logs:PutLogEvents on ${logsOf(fn)}`], why: "the Lambda runtime writes the function's log to its log group" },
      ...(fn === 'executor'
        ? [
            {
              grants: ['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes', 'GetQueueUrl'].map((a) => `sqs:${a} on ${RESOURCE.workQueue}`),
              why: "the SQS event source mapping polls the work queue as the executor's role (CDK's SqsEventSource grants these; one event source per work queue)",
            },
          ]
        : []),
    ],
  ]),
) as Record<FunctionName, { grants: GrantLine[]; why: string }[]>;

/**
 * What a role must allow that is no call at all: S3 answers a missing object 404 only to a caller
 * allowed s3:ListBucket on the bucket, and 403 to anyone else ("If you don't have the
 * s3:ListBucket permission, Amazon S3 returns an HTTP status code 403", Amazon S3 API Reference,
 * GetObject and HeadObject, Permissions). The executor and the reconciler read a 404 as a body
 * gone (lambdas/store/s3-body-objects.ts) and hand its delivery to people; a 403 would be S3's
 * failure, retried for good. The ingest asks only about an object S3 has just said is there.
 */
const BEYOND_CALLS: Readonly<Record<FunctionName, readonly GrantLine[]>> = {
  ingest: [],
  executor: [`s3:ListBucket on ${RESOURCE.bodyBucket}`],
  reconciler: [`s3:ListBucket on ${RESOURCE.bodyBucket}`],
};

/**
 * The operations a function's modules import but never send, each with why: the module is
 * shared, and this function calls only part of it.
 */
const FORGET_REPLAY = "DynamoDbEventStore's forgetReplay (the ingest's), for routes whose scheme signs no timestamp";
const IMPORTED_NOT_SENT: Readonly<Record<FunctionName, Readonly<Record<string, string>>>> = {
  // retryproof.config.ts has no such route (demo and stripe sign a timestamp), and its ingest is
  // granted no DeleteItem; webhook-receiver.test.ts checks the grant for a route that needs it.
  ingest: {
    'dynamodb:DeleteItem': `${FORGET_REPLAY}: this configuration has none`,
    'dynamodb:Query': "EntityOrder's reads of an entity's line: retryproof.config.ts orders no route (the receiver grants Query on the table to the three functions when one has orderBy; webhook-receiver.test.ts)",
    's3:GetObject': "S3BodyObjects' read, the executor's: the ingest stores and checks bodies, and never reads one back",
    // What a copy needs (GetObject and PutObject on bodies/*) the ingest's check and put need already.
    's3:CopyObject':
      "S3BodyObjects' renew: the ingest renews only an object older than the renewal age, and judges the age by the real clock " +
      '(lambdas/queue/fresh-body-work-queue.ts), which no scenario can move on as it moves the executor\'s and the reconciler\'s',
  },
  executor: {
    'dynamodb:Query': "the demo ledger module's listWindow, which only the reconciler calls, and EntityOrder's reads of a line: retryproof.config.ts orders no route",
    'dynamodb:DeleteItem': FORGET_REPLAY,
    's3:PutObject': "S3BodyObjects' store, the ingest's",
  },
  reconciler: {
    'dynamodb:DeleteItem': FORGET_REPLAY,
    's3:PutObject': "S3BodyObjects' store, the ingest's",
    's3:GetObject': "S3BodyObjects' read, the executor's: the reconciler checks (HeadObject) and renews (CopyObject) bodies, and never reads one back",
  },
};

/** Where each function's code starts: its Lambda entry, and the demo's modules the app bundles into it. */
const ENTRIES: Readonly<Record<FunctionName, readonly string[]>> = {
  ingest: ['lambdas/ingest/handler.ts'],
  executor: ['lambdas/executor/lambda.ts', DEMO_ACTION_SOURCE.entry],
  reconciler: ['lambdas/reconciler/lambda.ts', DEMO_ACTION_SOURCE.ledger ?? ''],
};

/** What a function's role must allow: what its calls need, what they imply, and the platform's. */
function requiredFor(fn: FunctionName, calls: readonly RecordedCall[]): Set<GrantLine> {
  const needed = new Set(calls.flatMap((c) => c.needs.map((n) => `${n.action} on ${n.resource}`)));
  for (const platform of PLATFORM[fn]) for (const g of platform.grants) needed.add(g);
  for (const g of BEYOND_CALLS[fn]) needed.add(g);
  return needed;
}

/** What a function's role allows, its resources named as the recorded calls name them. */
function grantedTo(built: SynthesizedApp, fn: FunctionName): Set<GrantLine> {
  const id = (path: string): string => logicalIdOf(built, path);
  const names = new Map<string, string>([
    [id('Events/Table'), RESOURCE.eventsTable],
    [id('Work/Queue'), RESOURCE.workQueue],
    ...[...built.stack.receiver.routeQueues.keys()].map((route) => [id(`Work/RouteQueue-${route}`), routeQueueOf(route)] as const),
    [id('Work/DeadLetterQueue'), RESOURCE.deadLetterQueue],
    [id('Bodies/Bucket'), RESOURCE.bodyBucket],
    [id('Alarms/Topic'), ALARM_TOPIC],
    [id('Alarms/Key'), ALARM_TOPIC_KEY],
    ...FUNCTIONS.map((f) => [id(`${f[0]!.toUpperCase()}${f.slice(1)}Logs`), logsOf(f)] as const),
    // A route secret is found by name (lib/stateful/route-secrets.ts): its ARN, the name and the suffix's -??????.
    ...[...built.stack.receiver.routeSecrets].map(([route, secret]) => [JSON.stringify(built.stack.resolve(`${secret.secretArn}-??????`)), RESOURCE.secretOf(route)] as const),
    ...(built.stack.node.tryFindChild('Ledger') === undefined ? [] : [[id('Ledger/Table'), RESOURCE.ledgerTable] as const]),
  ]);
  // A resource is a logical id, or one with a suffix such as /index/byTime.
  const nameOf = (resource: string): string => {
    const whole = names.get(resource);
    if (whole !== undefined) return whole;
    const [head = '', ...rest] = resource.split('/');
    return [names.get(head) ?? head, ...rest].join('/');
  };
  return new Set(grantsOf(built, ROLE[fn]).map((g) => `${g.action} on ${nameOf(g.resource)}`));
}

/** Grants nobody calls, and calls nothing grants: both empty when the role is exact. */
function compare(granted: ReadonlySet<GrantLine>, required: ReadonlySet<GrantLine>): { unused: GrantLine[]; ungranted: GrantLine[] } {
  return {
    unused: [...granted].filter((g) => !required.has(g)).sort(),
    ungranted: [...required].filter((r) => !granted.has(r)).sort(),
  };
}

let exercise: Exercise;

// Every function's scenarios against the local services: about 80 s on a quiet machine, more beside other work.
beforeAll(async () => {
  exercise = await exerciseFunctions(config);
}, 300_000);

describe('IAM of the retryproof functions', () => {
  let built: SynthesizedApp;
  const id = (path: string) => logicalIdOf(built, path);

  beforeAll(() => {
    built = synthesize(config);
  });

  it('reaches, in its scenarios, every path each function takes to a call', () => {
    const { reached } = exercise;
    expect(Object.keys(reached).length).toBeGreaterThanOrEqual(14);
    expect(Object.entries(reached).filter(([, ok]) => !ok).map(([scenario]) => scenario)).toEqual([]);
  });

  it.each(FUNCTIONS)('sends, in those scenarios, every AWS operation the %s code imports', (fn) => {
    const imported = sdkOperationsOf(ENTRIES[fn]);
    const sent = new Set(exercise.calls[fn].map((c) => c.operation));
    const notSent = IMPORTED_NOT_SENT[fn];
    expect({
      neverSent: [...imported].filter(([op]) => !sent.has(op) && !Object.hasOwn(notSent, op)).map(([op, files]) => `${op} (${files.join(', ')})`),
      sentButNotImported: [...sent].filter((op) => !imported.has(op)),
      staleExceptions: Object.keys(notSent).filter((op) => sent.has(op) || !imported.has(op)),
    }).toEqual({ neverSent: [], sentButNotImported: [], staleExceptions: [] });
  });

  it.each(FUNCTIONS)('allows the %s exactly the calls its code makes, and the platform\'s', (fn) => {
    expect(compare(grantedTo(built, fn), requiredFor(fn, exercise.calls[fn]))).toEqual({ unused: [], ungranted: [] });
  });

  it('allows no wildcard action (no * anywhere in an action), on any role in the stack', () => {
    const roles = Object.keys(built.template.findResources('AWS::IAM::Role'));
    // The three functions', the schedule's, and the route secrets' deploy-time function's (route-secrets.ts).
    expect(roles).toHaveLength(5);
    // One Region: the secret function creates and describes (to adopt), and replicates nothing.
    const secretCalls = grantsOf(built, 'Secrets/EnsureHandlerRole').map((g) => g.action).filter((a) => a.startsWith('secretsmanager:'));
    expect(new Set(secretCalls)).toEqual(new Set(['secretsmanager:CreateSecret', 'secretsmanager:DescribeSecret']));
    const actions = [...FUNCTION_ROLES, 'Reconcile/Role', 'Secrets/EnsureHandlerRole'].flatMap((role) => grantsOf(built, role).map((g) => g.action));
    expect(actions.length).toBeGreaterThan(20);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
  });

  it('attaches no managed policy to any function role', () => {
    for (const role of FUNCTION_ROLES) {
      const props = built.template.findResources('AWS::IAM::Role')[id(role)] as { Properties: Record<string, unknown> };
      expect(props.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('lets no function publish to the alarm topic (alarms do, the breaker\'s pause too) or touch the DLQ', () => {
    const topic = id('Alarms/Topic');
    const dlq = id('Work/DeadLetterQueue');
    for (const role of FUNCTION_ROLES) {
      const grants = grantsOf(built, role);
      expect(grants.filter((g) => g.resource === topic), role).toEqual([]);
      expect(grants.filter((g) => g.resource === dlq), role).toEqual([]);
    }
  });

  it('gives no function the DLQ\'s URL or the alarm topic\'s ARN', () => {
    const variables = (fn: string) =>
      (built.template.findResources('AWS::Lambda::Function')[id(fn)] as { Properties: { Environment: { Variables: Record<string, unknown> } } })
        .Properties.Environment.Variables;
    for (const fn of ['Ingest', 'Executor', 'Reconciler']) {
      expect(variables(fn), fn).not.toHaveProperty('RETRYPROOF_DLQ_URL');
      expect(variables(fn), fn).not.toHaveProperty('RETRYPROOF_ALARM_TOPIC_ARN');
    }
  });

  it('lets the schedule invoke the reconciler and nothing else', () => {
    const reconciler = id('Reconciler');
    expect(grantsOf(built, 'Reconcile/Role').map((g) => `${g.action} on ${g.resource}`).sort()).toEqual([
      `lambda:InvokeFunction on ${reconciler}`,
      `lambda:InvokeFunction on ${reconciler}:*`,
    ]);
  });
});

/**
 * What a function's role must allow once routes have queues of their own, from what it does
 * with every route on the shared queue: a route's own queue is a work queue like the shared one,
 * and its route's work goes there (lambdas/queue/routed-work-queue.ts), so each call a function
 * makes on the work queue it makes on each route's own queue too, and the event source polls each.
 * The scenarios run on the demo's routes; the ingest reads each added route's secret as it reads theirs.
 */
function requiredWithOwnQueues(fn: FunctionName, calls: readonly RecordedCall[], ownQueueRoutes: readonly string[], addedRoutes: readonly string[]): Set<GrantLine> {
  const onShared = requiredFor(fn, calls);
  const needed = new Set(onShared);
  for (const line of onShared) {
    const [action, resource] = line.split(' on ');
    if (resource === RESOURCE.workQueue) for (const route of ownQueueRoutes) needed.add(`${action ?? ''} on ${routeQueueOf(route)}`);
  }
  const secretCalls = [...onShared].filter((line) => line.startsWith('secretsmanager:GetSecretValue on '));
  if (secretCalls.length > 0) for (const route of addedRoutes) needed.add(`secretsmanager:GetSecretValue on ${RESOURCE.secretOf(route)}`);
  return needed;
}

describe('IAM of the retryproof functions with routes on queues of their own', () => {
  const resolved = resolveConfig(isolationConfig);
  const own = resolved.routes.filter((r) => r.ownQueue).map((r) => r.name);
  const added = resolved.routes.map((r) => r.name).filter((name) => !config.routes.some((r) => r.name === name));
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(isolationConfig);
  });

  it('has two routes on queues of their own, both added to the demo\'s', () => {
    expect(own).toEqual(['orders', 'shipments']);
    expect(added).toEqual(own);
  });

  it.each(FUNCTIONS)('allows the %s on each route queue exactly what it does on the shared one, and nothing else more', (fn) => {
    expect(compare(grantedTo(built, fn), requiredWithOwnQueues(fn, exercise.calls[fn], own, added))).toEqual({ unused: [], ungranted: [] });
  });

  it('lets no function touch the DLQ, which only the work queues\' redrive policies feed', () => {
    const dlq = logicalIdOf(built, 'Work/DeadLetterQueue');
    for (const role of FUNCTION_ROLES) expect(grantsOf(built, role).filter((g) => g.resource === dlq), role).toEqual([]);
  });
});

describe('IAM of the retryproof functions with the demo off', () => {
  const noDemo: RetryproofConfig = withOwnAction(config);
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize(noDemo);
  });

  it('has no ledger table, so no function can reach one', () => {
    expect(built.stack.node.tryFindChild('Ledger')).toBeUndefined();
    expect(Object.keys(built.template.findResources('AWS::DynamoDB::GlobalTable'))).toEqual([logicalIdOf(built, 'Events/Table')]);
  });

  it.each(FUNCTIONS)('allows the %s what it does with the demo, less the ledger: a team\'s own action gets its grants from the team', (fn) => {
    const offLedger = exercise.calls[fn].map((c) => ({ ...c, needs: c.needs.filter((n) => !n.resource.startsWith(RESOURCE.ledgerTable)) }));
    expect(compare(grantedTo(built, fn), requiredFor(fn, offLedger))).toEqual({ unused: [], ungranted: [] });
  });

  it('sets no ledger table variable on any function', () => {
    for (const fn of Object.values(built.template.findResources('AWS::Lambda::Function'))) {
      const variables = (fn as { Properties: { Environment?: { Variables: Record<string, unknown> } } }).Properties.Environment?.Variables ?? {};
      expect(variables).not.toHaveProperty('RETRYPROOF_LEDGER_TABLE');
    }
  });
});
