import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output, StackResource } from '@aws-sdk/client-cloudformation';
import { parseDeployedStack } from '../../cli/deployed-stack.ts';
import { CliError } from '../../cli/errors.ts';
import { runScript } from '../local/stack-process.ts';

// The shape CloudFormation returns for a deployed Retryproof stack (logical ids as in cdk.out).
const OUTPUTS: Output[] = [
  { OutputKey: 'ApiUrl', OutputValue: 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhooks/' },
  { OutputKey: 'QueueUrl', OutputValue: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Retryproof-WorkQueue1CAC4D2F-x' },
  { OutputKey: 'DlqUrl', OutputValue: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Retryproof-WorkDeadLetterQueue304A9441-y' },
  { OutputKey: 'DlqConsoleUrl', OutputValue: 'https://console.aws.amazon.com/sqs/v3/home' },
];
const resource = (logical: string, type: string, physical: string): StackResource =>
  ({ LogicalResourceId: logical, ResourceType: type, PhysicalResourceId: physical, StackName: 'Retryproof' }) as StackResource;
const RESOURCES: StackResource[] = [
  resource('EventsTable4B7491D3', 'AWS::DynamoDB::GlobalTable', 'Retryproof-EventsTable4B7491D3-ABC'),
  resource('LedgerTable9343E4AA', 'AWS::DynamoDB::GlobalTable', 'Retryproof-LedgerTable9343E4AA-DEF'),
  resource('WorkQueue1CAC4D2F', 'AWS::SQS::Queue', 'https://sqs.eu-west-1.amazonaws.com/111122223333/Retryproof-WorkQueue1CAC4D2F-x'),
  resource('EventsTableReadRole12345678', 'AWS::IAM::Role', 'not-a-table'),
];

describe('parseDeployedStack', () => {
  it('takes the queues from the outputs and the tables from the resources by logical id', () => {
    expect(parseDeployedStack('Retryproof', OUTPUTS, RESOURCES)).toEqual({
      stackName: 'Retryproof',
      apiUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhooks/',
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Retryproof-WorkQueue1CAC4D2F-x',
      dlqUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Retryproof-WorkDeadLetterQueue304A9441-y',
      eventsTable: 'Retryproof-EventsTable4B7491D3-ABC',
      ledgerTable: 'Retryproof-LedgerTable9343E4AA-DEF',
    });
  });

  it('has no ledger table when the demo is off', () => {
    const withoutLedger = RESOURCES.filter((r) => !r.LogicalResourceId?.startsWith('Ledger'));
    expect(parseDeployedStack('Retryproof', OUTPUTS, withoutLedger).ledgerTable).toBeUndefined();
  });

  it('names the missing output when the stack is not a retryproof stack', () => {
    const act = () => parseDeployedStack('Other', OUTPUTS.filter((o) => o.OutputKey !== 'DlqUrl'), RESOURCES);
    expect(act).toThrow(CliError);
    expect(act).toThrow('stack Other has no output DlqUrl');
  });

  it('refuses a stack without an events table', () => {
    expect(() => parseDeployedStack('Retryproof', OUTPUTS, RESOURCES.slice(1))).toThrow(/no events table/);
  });

  it('refuses two candidate events tables rather than guess', () => {
    const twice = [...RESOURCES, resource('EventsTableAAAAAAAA', 'AWS::DynamoDB::Table', 'other')];
    expect(() => parseDeployedStack('Retryproof', OUTPUTS, twice)).toThrow(/2 tables named EventsTable/);
  });
});

describe('retryproof --stack without a region or credentials', () => {
  // Every AWS call the CLI could make is pointed at this loopback server, which counts them:
  // the errors below must come before any call, so it must see none.
  let server: Server;
  let requests = 0;
  let home: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    home = await mkdtemp(join(tmpdir(), 'retryproof-home-'));
    // Nothing from the machine: no region, no profile, no credentials, no instance metadata.
    env = {
      PATH: process.env.PATH,
      HOME: home,
      AWS_CONFIG_FILE: join(home, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_ENDPOINT_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    };
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(home, { recursive: true, force: true });
  });

  it('says to pass --region or set AWS_REGION, exit code 2, before any call', async () => {
    // Act
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', 'ledger'], env);
    // Assess
    expect(out.code).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe(
      'retryproof ledger: no AWS region for stack Retryproof: pass --region R, or set AWS_REGION (or a region in the profile AWS_PROFILE names)',
    );
    expect(out.stderr).not.toContain('Region is missing');
    expect(requests).toBe(0);
  });

  it('says how to get credentials when there are none, exit code 1, without a call', async () => {
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', '--region', 'eu-west-1', 'dlq', 'list'], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      'retryproof dlq list: no AWS credentials to read stack Retryproof: set AWS_PROFILE (after aws sso login or aws configure), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\n',
    );
    expect(requests).toBe(0);
  });
});
