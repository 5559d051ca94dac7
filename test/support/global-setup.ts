/**
 * vitest global setup: one DynamoDB Local and one fauxqs for the whole run, with the
 * events table, the demo ledger table and a queue pair created from the same schema the
 * CDK constructs use. Tests get the endpoints through `inject`.
 *
 * Every temporary folder of the run goes under one root, removed at the end: a bare
 * `new App()` makes a `cdk.out*` folder in the system temp directory on each synth, and
 * nothing else would delete them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalDynamo, startLocalSqs } from '../../local/local-aws.ts';
import { createEventsTable, createLedgerTable, createQueuePair, localDynamoClient, localSqsClient } from '../../local/aws-clients.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    sqsEndpoint: string;
    eventsTable: string;
    ledgerTable: string;
    queueUrl: string;
    dlqUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Set before the test workers start, so they (and every process they spawn) inherit it.
  const tempRoot = await mkdtemp(join(tmpdir(), 'retryproof-test-'));
  process.env.TMPDIR = tempRoot;
  // DynamoDB Local sends usage telemetry to AWS unless told not to; tests stay on loopback.
  process.env.DDB_LOCAL_TELEMETRY = '0';
  const [dynamo, sqs] = await Promise.all([startLocalDynamo(), startLocalSqs()]);
  const ddb = localDynamoClient(dynamo.endpoint);
  const sqsClient = localSqsClient(sqs.endpoint);
  const eventsTable = await createEventsTable(ddb, 'retryproof-events');
  const ledgerTable = await createLedgerTable(ddb, 'retryproof-ledger');
  const { queueUrl, dlqUrl } = await createQueuePair(sqsClient, sqs.endpoint, 'retryproof', { maxReceiveCount: 5 });
  ddb.destroy();
  sqsClient.destroy();
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  project.provide('eventsTable', eventsTable);
  project.provide('ledgerTable', ledgerTable);
  project.provide('queueUrl', queueUrl);
  project.provide('dlqUrl', dlqUrl);
  return async () => {
    await Promise.all([dynamo.stop(), sqs.stop()]);
    await rm(tempRoot, { recursive: true, force: true });
  };
}
