/** `retryproof receivers`: the retryproof receivers of a stack, of every stack in a region, or the local one. */
import type { Command } from '../command.ts';
import { deployedRegion } from '../aws-clients.ts';
import { CliError, UsageError } from '../errors.ts';
import { localDir, localRegionIn, readRunningEndpoints, StackNotRunningError, UnknownRegionError } from '../../local/index.ts';
import { table } from '../output.ts';
import { regionReceivers, stackReceivers } from '../receivers.ts';
import { unknownLocalRegion } from '../target.ts';
import type { FoundReceiver } from '../receivers.ts';

const USAGE = `retryproof receivers [--stack NAME] [--region R] [--json]
retryproof receivers --local [--json]

Lists retryproof receivers: every receiver of every stack in the region (DescribeStacks),
or only those of --stack NAME. A stack's receivers are the outputs that hold a receiver
descriptor, whatever the construct's id; the ID column is what --receiver takes when a
stack has several. --local lists the local stack's one receiver.

JSON: [{"stack", "receiver", "namePrefix", "region", "apiUrl", "queueUrl", "routeQueueUrls"?, "dlqUrl", "eventsTable", "ledgerTable"?, "bodyBucket"?}]
      (routeQueueUrls: {"<route>": "<queue URL>"} of the routes with a queue of their own, when any;
      bodyBucket: the bucket of large bodies, when the receiver has one)`;

interface ReceiverRow {
  readonly stack: string;
  readonly receiver: string;
  readonly namePrefix: string;
  readonly region: string;
  readonly apiUrl: string;
  readonly queueUrl: string;
  readonly routeQueueUrls?: Readonly<Record<string, string>>;
  readonly dlqUrl: string;
  readonly eventsTable: string;
  readonly ledgerTable?: string;
  readonly bodyBucket?: string;
}

/** The bucket of large bodies, when the receiver has one (a descriptor written before the S3 claim check has none). */
function bodyBucketOf(bucket: unknown): { bodyBucket?: string } {
  return typeof bucket === 'string' && bucket !== '' ? { bodyBucket: bucket } : {};
}

/** The routes' own queues, when there are any: a receiver without them lists as it always did. */
function routeQueuesOf(urls: Readonly<Record<string, string>> | undefined): { routeQueueUrls?: Readonly<Record<string, string>> } {
  return urls === undefined || Object.keys(urls).length === 0 ? {} : { routeQueueUrls: urls };
}

function rowOf({ stackName, descriptor: d }: FoundReceiver): ReceiverRow {
  return {
    stack: stackName,
    receiver: d.receiver,
    namePrefix: d.namePrefix,
    region: d.region,
    apiUrl: d.apiUrl,
    queueUrl: d.queueUrl,
    ...routeQueuesOf(d.routeQueueUrls),
    dlqUrl: d.dlqUrl,
    eventsTable: d.eventsTable,
    ...(d.ledgerTable === undefined ? {} : { ledgerTable: d.ledgerTable }),
    ...bodyBucketOf((d as { readonly bodyBucket?: unknown }).bodyBucket),
  };
}

export const receiversCommand: Command = {
  name: 'receivers',
  summary: 'list the receivers of a stack, of every stack in a region (--region R), or the local one',
  usage: USAGE,
  options: {},
  args: [],
  async run(ctx) {
    const { flags } = ctx;
    if (flags.receiver !== undefined) throw new UsageError('receivers lists receivers; --receiver picks one for the other commands', USAGE);
    let rows: ReceiverRow[];
    let where: string;
    if (flags.local === true) {
      if (flags.stack !== undefined) throw new UsageError('give either --local or --stack NAME, not both', USAGE);
      const dir = localDir(ctx.env);
      const endpoints = await readRunningEndpoints(dir).catch((err: unknown) => {
        if (err instanceof StackNotRunningError) throw new CliError(err.message);
        throw err;
      });
      let region;
      try {
        region = localRegionIn(endpoints, flags.region);
      } catch (err) {
        if (err instanceof UnknownRegionError) throw unknownLocalRegion(err, dir);
        throw err;
      }
      rows = [
        {
          stack: 'local',
          receiver: 'local',
          namePrefix: 'local',
          region: region.name,
          apiUrl: `${region.httpUrl}/webhooks/`,
          queueUrl: region.queueUrl,
          ...routeQueuesOf(region.routeQueueUrls),
          dlqUrl: region.dlqUrl,
          eventsTable: endpoints.eventsTable,
          ...(endpoints.ledgerTable === undefined ? {} : { ledgerTable: endpoints.ledgerTable }),
          ...bodyBucketOf(region.bodyBucket),
        },
      ];
      where = `the local stack in ${dir}`;
    } else {
      const region = await deployedRegion(ctx.aws, flags.region, flags.stack === undefined ? 'the list of receivers' : `stack ${flags.stack}`);
      const cfn = ctx.aws.cloudFormation(region);
      try {
        rows = (flags.stack === undefined ? await regionReceivers(cfn) : await stackReceivers(cfn, flags.stack, region)).map(rowOf);
      } finally {
        cfn.destroy();
      }
      where = flags.stack === undefined ? `region ${region}` : `stack ${flags.stack} (${region})`;
    }
    if (ctx.json) {
      ctx.print(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      ctx.print(`no retryproof receivers in ${where}\n`);
      return 0;
    }
    ctx.print(`${table(['stack', 'receiver', 'prefix', 'region', 'api url'], rows.map((r) => [r.stack, r.receiver, r.namePrefix, r.region, r.apiUrl]))}\n`);
    ctx.print(`${rows.length} receiver${rows.length === 1 ? '' : 's'} in ${where}; pick one with --stack STACK${rows.length > 1 ? ' --receiver RECEIVER' : ''}\n`);
    return 0;
  },
};
