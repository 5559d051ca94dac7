/**
 * What a command works on: the local stack (`--local`, from endpoints.json) or a deployed
 * receiver (`--stack NAME [--receiver ID]`, from CloudFormation). Commands see the same shape
 * either way: clients, table names, queue URLs, and the configuration the receiver runs.
 *
 * The running receiver is the one source of its settings: locally the resolved configuration
 * the stack wrote into endpoints.json (its `--config` file with the environment's overrides,
 * RETRYPROOF_SETTLE_S and the others, applied); deployed, the RETRYPROOF_CONFIG of the
 * function the receiver's descriptor names, in the deployed template. Never a configuration
 * file of this checkout, which may not be what runs.
 *
 * The receiver's bucket of large bodies (the S3 claim check) comes the same way: locally from
 * endpoints.json (each Region's bucket on fauxqs's S3), deployed from the descriptor's `bodyBucket`.
 * A receiver without one (a stack older than the claim check) has none: its bodies all travel inline.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import type { ReceiverDescriptor } from '../lambdas/config/receiver-descriptor.ts';
import type { RouteControlOptions } from '../lambdas/routes/route-control.ts';
import {
  localDir,
  localDynamoClient,
  localRegionIn,
  localS3Client,
  localSqsClient,
  readRunningEndpoints,
  StackNotRunningError,
  UnknownRegionError,
} from '../local/index.ts';
import type { LocalRegionEndpoint } from '../local/index.ts';
import { deployedRegion, sdkClients } from './aws-clients.ts';
import type { AwsClients } from './aws-clients.ts';
import { CliError, UsageError } from './errors.ts';
import { pickReceiver, receiverConfig, stackReceivers } from './receivers.ts';
import { editDistance, nearest } from './suggest.ts';

export interface Target {
  readonly kind: 'local' | 'aws';
  /** For messages: `the local stack in .local` (`... (region local-2)` when one was asked for), `stack Retryproof` or `receiver Webhooks of stack Consumer`. */
  readonly description: string;
  /**
   * The local Region the queues are (`--local --region NAME`, else the first). The table is every
   * Region's; the queues, the DLQ and `localUrl` are this Region's. Undefined for a deployed stack.
   */
  readonly localRegion?: string;
  /** The deployed receiver's descriptor; undefined locally. */
  readonly receiver?: ReceiverDescriptor;
  /** The deployed receiver's stack and the Region it was found in; undefined locally. */
  readonly stack?: { readonly name: string; readonly region: string };
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly eventsTable: string;
  readonly ledgerTable: string | undefined;
  /** The shared work queue: every route without a queue of its own. */
  readonly queueUrl: string;
  /**
   * The queue of each route with one of its own (ownQueue), by route; each dead-letters into
   * `dlqUrl`. @default - none: no route has one (or the receiver predates route queues)
   */
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  readonly dlqUrl: string;
  /**
   * The receiver's bucket of large bodies (locally the Region's), and a client on it.
   * @default - none: the receiver has no bucket (or predates the S3 claim check)
   */
  readonly bodyBucket?: string;
  readonly s3?: S3Client;
  /** The configuration the receiver runs, resolved (see the module comment). */
  readonly config: ResolvedConfig;
  /** The names of `config`'s routes. */
  readonly routes: readonly string[];
  /**
   * The local stack's gateway (`--local` only), the Region's: its reconciler holds the
   * configuration and the ledger modules the stack runs, which may not be this repository's,
   * and re-enqueues onto that Region's queue.
   */
  readonly localUrl?: string;
  /** A queue's ARN, asked once. */
  queueArn(url: string): Promise<string>;
  close(): void;
}

export interface TargetFlags {
  readonly local?: boolean;
  readonly stack?: string;
  /** Deployed: the AWS Region. Local: the local Region (its queues, its DLQ, its gateway); @default the first */
  readonly region?: string;
  /** Deployed: which receiver of the stack (its descriptor's `receiver`); @default the stack's only one */
  readonly receiver?: string;
}

function withArns(base: Omit<Target, 'queueArn'>, known: Readonly<Record<string, string>> = {}): Target {
  const cache = new Map<string, string>(Object.entries(known));
  return {
    ...base,
    async queueArn(url) {
      const hit = cache.get(url);
      if (hit !== undefined) return hit;
      const out = await base.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
      const arn = out.Attributes?.QueueArn;
      if (arn === undefined) throw new CliError(`queue ${url} has no ARN`);
      cache.set(url, arn);
      return arn;
    },
  };
}

/** The usage error for a local Region the stack does not run: it names those it runs. */
export function unknownLocalRegion(err: UnknownRegionError, dir: string): UsageError {
  // local-3 is one edit from local-1 and local-2 alike: a guess only when one name is nearest.
  const near = nearest(err.region, err.regions);
  const tied = near !== undefined && err.regions.filter((r) => editDistance(err.region, r) === editDistance(err.region, near)).length > 1;
  return new UsageError(
    `--region ${err.region}: the local stack in ${dir} has no such region${near === undefined || tied ? '' : ` (did you mean "${near}"?)`}; its regions: ${err.regions.join(', ')}`,
  );
}

async function localTarget(flags: TargetFlags, env: NodeJS.ProcessEnv): Promise<Target> {
  if (flags.receiver !== undefined) {
    throw new UsageError(`--receiver picks a receiver of a deployed stack; the local stack runs one (leave --receiver out)`);
  }
  const dir = localDir(env);
  const endpoints = await readRunningEndpoints(dir).catch((err: unknown) => {
    if (err instanceof StackNotRunningError) throw new CliError(err.message);
    throw err;
  });
  if (endpoints.config === undefined) {
    throw new CliError(
      `the local stack in ${dir} (pid ${endpoints.pid}) is older than this CLI: its endpoints.json does not say which configuration it runs; restart the local stack (Ctrl-C, then npm start)`,
    );
  }
  let region: LocalRegionEndpoint;
  try {
    region = localRegionIn(endpoints, flags.region);
  } catch (err) {
    if (err instanceof UnknownRegionError) throw unknownLocalRegion(err, dir);
    throw err;
  }
  const dynamo = localDynamoClient(endpoints.dynamoEndpoint);
  const sqs = localSqsClient(endpoints.sqsEndpoint);
  // fauxqs serves S3 on its SQS endpoint, with the same local credentials.
  const s3 = region.bodyBucket === undefined ? undefined : localS3Client(endpoints.s3Endpoint ?? endpoints.sqsEndpoint);
  return withArns(
    {
      kind: 'local',
      description: `the local stack in ${dir}${flags.region === undefined ? '' : ` (region ${region.name})`}`,
      localRegion: region.name,
      dynamo,
      sqs,
      eventsTable: endpoints.eventsTable,
      ledgerTable: endpoints.ledgerTable,
      queueUrl: region.queueUrl,
      routeQueueUrls: region.routeQueueUrls ?? {},
      dlqUrl: region.dlqUrl,
      ...(region.bodyBucket === undefined || s3 === undefined ? {} : { bodyBucket: region.bodyBucket, s3 }),
      config: endpoints.config,
      routes: endpoints.config.routes.map((r) => r.name),
      localUrl: region.adminUrl,
      close: () => {
        dynamo.destroy();
        sqs.destroy();
        s3?.destroy();
      },
    },
    { [region.queueUrl]: region.queueArn, [region.dlqUrl]: region.dlqArn },
  );
}

/**
 * The descriptor's bucket of large bodies: a descriptor written before the S3 claim check has
 * none, and one of another shape is read as none rather than trusted.
 */
function bodyBucketOf(descriptor: ReceiverDescriptor): string | undefined {
  const value: unknown = (descriptor as { readonly bodyBucket?: unknown }).bodyBucket;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

async function deployedTarget(stackName: string, flags: TargetFlags, aws: AwsClients): Promise<Target> {
  const region = await deployedRegion(aws, flags.region, `stack ${stackName}`);
  const cfn = aws.cloudFormation(region);
  let found;
  let config: ResolvedConfig;
  try {
    found = pickReceiver(await stackReceivers(cfn, stackName, region), stackName, flags.receiver);
    config = await receiverConfig(cfn, found);
  } finally {
    cfn.destroy();
  }
  const { descriptor } = found;
  // The receiver's own Region (a stack's receivers all share it; a replica's is its own).
  const dynamo = aws.dynamo(descriptor.region);
  const sqs = aws.sqs(descriptor.region);
  const bodyBucket = bodyBucketOf(descriptor);
  const s3 = bodyBucket === undefined ? undefined : aws.s3(descriptor.region);
  return withArns({
    kind: 'aws',
    description: flags.receiver === undefined ? `stack ${stackName}` : `receiver ${descriptor.receiver} of stack ${stackName}`,
    receiver: descriptor,
    stack: { name: found.stackName, region },
    dynamo,
    sqs,
    eventsTable: descriptor.eventsTable,
    ledgerTable: descriptor.ledgerTable,
    queueUrl: descriptor.queueUrl,
    routeQueueUrls: descriptor.routeQueueUrls ?? {},
    dlqUrl: descriptor.dlqUrl,
    ...(bodyBucket === undefined || s3 === undefined ? {} : { bodyBucket, s3 }),
    config,
    routes: config.routes.map((r) => r.name),
    close: () => {
      dynamo.destroy();
      sqs.destroy();
      s3?.destroy();
    },
  });
}

/**
 * Connects to the receiver the flags name.
 * @param aws the AWS clients (tests pass stubs) @default the SDK's, on the default chain
 * @throws UsageError when neither or both of --local and --stack are given, no region is set,
 *   the local stack runs no Region of that name, or the stack has several receivers and
 *   --receiver names none of them (the messages list what there is)
 * @throws CliError when the stack, its receiver or the local stack cannot be found
 */
export async function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv = process.env, aws: AwsClients = sdkClients(env)): Promise<Target> {
  const local = flags.local === true;
  if (local && flags.stack !== undefined) throw new UsageError('give either --local or --stack NAME, not both');
  if (local) return localTarget(flags, env);
  if (flags.stack === undefined) {
    throw new UsageError(
      flags.receiver === undefined
        ? 'say which stack: --local, or --stack NAME for a deployed one (retryproof receivers lists them)'
        : `--receiver ${flags.receiver} needs --stack NAME, the stack it is in (retryproof receivers lists them)`,
    );
  }
  return deployedTarget(flags.stack, flags, aws);
}

/** What the operator verbs (route control, the bulk redrive) need of a receiver: its table, queues, bucket and routes. */
export function operatorOptionsOf(target: Target, now: () => number): RouteControlOptions {
  return {
    dynamo: target.dynamo,
    eventsTable: target.eventsTable,
    sqs: target.sqs,
    queueUrl: target.queueUrl,
    // Re-enqueued work goes to its route's own queue, as every sender's does.
    routeQueueUrls: target.routeQueueUrls ?? {},
    // A re-send of work whose body is in the bucket keeps its object alive first, as every sender's does.
    ...(target.s3 === undefined || target.bodyBucket === undefined ? {} : { s3: target.s3, bodyBucket: target.bodyBucket }),
    config: target.config,
    routes: target.routes,
    now,
  };
}

/** The usage error for a route the receiver does not have: it names the routes it has. */
export function unknownRouteError(target: Target, route: string): UsageError {
  const near = nearest(route, target.routes);
  return new UsageError(
    `unknown route "${route}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; the routes of ${target.description}: ${target.routes.join(', ')}`,
  );
}
