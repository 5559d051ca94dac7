/**
 * What a command works on: the local stack (`--local`, from endpoints.json) or a
 * deployed one (`--stack NAME`, from CloudFormation). Commands see the same shape either
 * way: clients, table names and queue URLs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localDir, readRunningEndpoints, StackNotRunningError } from '../local/endpoints-file.ts';
import { localDynamoClient, localSqsClient } from '../local/aws-clients.ts';
import { deployedRegion, describeDeployedStack } from './deployed-stack.ts';
import { CliError, UsageError } from './errors.ts';
import { projectConfig } from './operations/route-config.ts';
import { nearest } from './suggest.ts';

export interface Target {
  readonly kind: 'local' | 'aws';
  /** For messages: `the local stack in .local` or `stack Retryproof`. */
  readonly description: string;
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
   * The local stack's gateway (`--local` only): its reconciler holds the configuration and
   * the ledger modules the stack runs, which may not be this repository's.
   */
  readonly localUrl?: string;
  /** A queue's ARN, asked once. */
  queueArn(url: string): Promise<string>;
  close(): void;
}

export interface TargetFlags {
  readonly local?: boolean;
  readonly stack?: string;
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
 * @throws UsageError when neither or both of --local and --stack are given, or no region is set
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
    const dynamo = localDynamoClient(endpoints.dynamoEndpoint);
    const sqs = localSqsClient(endpoints.sqsEndpoint);
    return withArns(
      {
        kind: 'local',
        description: `the local stack in ${dir}`,
        dynamo,
        sqs,
        eventsTable: endpoints.eventsTable,
        ledgerTable: endpoints.ledgerTable,
        queueUrl: endpoints.queueUrl,
        dlqUrl: endpoints.dlqUrl,
        routes: endpoints.routes.map((r) => r.name),
        localUrl: endpoints.httpUrl,
        close: () => {
          dynamo.destroy();
          sqs.destroy();
        },
      },
      { [endpoints.queueUrl]: endpoints.queueArn, [endpoints.dlqUrl]: endpoints.dlqArn },
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
