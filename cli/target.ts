/**
 * What a command works on: the local stack (`--local`, from endpoints.json) or a
 * deployed one (`--stack NAME`, from CloudFormation). Commands see the same shape either
 * way: clients, table names and queue URLs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localDir, localRegionIn, readRunningEndpoints, StackNotRunningError, UnknownRegionError } from '../local/endpoints-file.ts';
import type { LocalRegionEndpoint } from '../local/endpoints-file.ts';
import { localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { deployedRegion, describeDeployedStack } from './deployed-stack.ts';
import { CliError, UsageError } from './errors.ts';
import { projectConfig } from './operations/route-config.ts';
import { editDistance, nearest } from './suggest.ts';

export interface Target {
  readonly kind: 'local' | 'aws';
  /** For messages: `the local stack in .local` (`... (region local-2)` when one was asked for) or `stack Retryproof`. */
  readonly description: string;
  /**
   * The local Region the queues are (`--local --region NAME`, else the first). The table is every
   * Region's; the queues, the DLQ and `localUrl` are this Region's. Undefined for a deployed stack.
   */
  readonly localRegion?: string;
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly eventsTable: string;
  readonly ledgerTable: string | undefined;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /**
   * The stack's routes: locally from endpoints.json; deployed, from retryproof.config.ts,
   * the file the stack was synthesized from (the stack itself does not list them).
   */
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

/**
 * Connects to the stack the flags name.
 * @throws UsageError when neither or both of --local and --stack are given, no region is set,
 *   or the local stack runs no Region of that name (the message lists those it runs)
 * @throws CliError when the stack cannot be found
 */
export async function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  const local = flags.local === true;
  if (local && flags.stack !== undefined) throw new UsageError('give either --local or --stack NAME, not both');
  if (!local && flags.stack === undefined) throw new UsageError('say which stack: --local, or --stack NAME for a deployed one');
  if (local) {
    const dir = localDir(env);
    const endpoints = await readRunningEndpoints(dir).catch((err: unknown) => {
      if (err instanceof StackNotRunningError) throw new CliError(err.message);
      throw err;
    });
    let region: LocalRegionEndpoint;
    try {
      region = localRegionIn(endpoints, flags.region);
    } catch (err) {
      if (err instanceof UnknownRegionError) {
        // local-3 is one edit from local-1 and local-2 alike: a guess only when one name is nearest.
        const near = nearest(err.region, err.regions);
        const tied = near !== undefined && err.regions.filter((r) => editDistance(err.region, r) === editDistance(err.region, near)).length > 1;
        throw new UsageError(
          `--region ${err.region}: the local stack in ${dir} has no such region${near === undefined || tied ? '' : ` (did you mean "${near}"?)`}; its regions: ${err.regions.join(', ')}`,
        );
      }
      throw err;
    }
    const dynamo = localDynamoClient(endpoints.dynamoEndpoint);
    const sqs = localSqsClient(endpoints.sqsEndpoint);
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
        dlqUrl: region.dlqUrl,
        routes: endpoints.routes.map((r) => r.name),
        localUrl: region.adminUrl,
        close: () => {
          dynamo.destroy();
          sqs.destroy();
        },
      },
      { [region.queueUrl]: region.queueArn, [region.dlqUrl]: region.dlqArn },
    );
  }
  const stackName = flags.stack ?? '';
  const region = await deployedRegion(stackName, flags.region);
  const stack = await describeDeployedStack(stackName, region);
  const config = { region };
  const dynamo = new DynamoDBClient(config);
  const sqs = new SQSClient(config);
  return withArns({
    kind: 'aws',
    description: `stack ${stackName}`,
    dynamo,
    sqs,
    eventsTable: stack.eventsTable,
    ledgerTable: stack.ledgerTable,
    queueUrl: stack.queueUrl,
    dlqUrl: stack.dlqUrl,
    routes: projectConfig().routes.map((r) => r.name),
    close: () => {
      dynamo.destroy();
      sqs.destroy();
    },
  });
}

/** The usage error for a route the stack does not have: it names the routes it has. */
export function unknownRouteError(target: Target, route: string): UsageError {
  const near = nearest(route, target.routes);
  return new UsageError(
    `unknown route "${route}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; the routes of ${target.description}: ${target.routes.join(', ')}`,
  );
}
