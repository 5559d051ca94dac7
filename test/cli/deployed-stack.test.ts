import { describe, expect, it } from 'vitest';
import type { Output, StackResource } from '@aws-sdk/client-cloudformation';
import { parseDeployedStack } from '../../cli/deployed-stack.ts';
import { CliError } from '../../cli/errors.ts';

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
