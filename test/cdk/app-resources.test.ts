/**
 * The app is the construct plus the demo, and deploys the same stack as before the
 * construct existed: the same resources under the same logical ids, so an update changes
 * them in place and replaces nothing (a replaced table would lose every idempotency record).
 * The fixture lists `Type LogicalId` of every resource and output of the app's template at
 * 6e2293a, the last commit before the WebhookReceiver construct.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { config } from '../../retryproof.config.ts';
import { synthesize } from './stack-fixture.ts';

describe('the app built from retryproof.config.ts', () => {
  it('has the resources and outputs it had before the construct, under the same logical ids', () => {
    const before = readFileSync(new URL('./fixtures/app-resources-6e2293a.txt', import.meta.url), 'utf8').trim().split('\n');
    const template = synthesize(config).template.toJSON() as { Resources: Record<string, { Type: string }>; Outputs?: Record<string, unknown> };
    const now = [
      ...Object.entries(template.Resources).map(([id, r]) => `${r.Type} ${id}`),
      ...Object.keys(template.Outputs ?? {}).map((id) => `Output ${id}`),
    ].sort();
    // Added since then, none replacing anything: the CLI's receiver descriptor; the route
    // secret ensured by name at deploy (a custom resource, and the function behind it with its
    // role, policy and log group: lib/stateful/route-secrets.ts; `Ensured`, since CloudFormation
    // refuses a new ServiceToken on the AwsCustomResource it replaced); the route's
    // signature-rejection alarm; the DLQ age alarm; the bucket of large bodies.
    const added = [
      'Output Receiver',
      'AWS::IAM::Policy SecretsEnsureHandlerRoleDefaultPolicy87D1B77D',
      'AWS::IAM::Role SecretsEnsureHandlerRole7B43284A',
      'AWS::Lambda::Function SecretsEnsureHandler2D0151B1',
      'AWS::Logs::LogGroup SecretsEnsureHandlerLogs99022F02',
      'Custom::RetryproofRouteSecret SecretsEnsuredRetryproofstripeedbf787f04BD1F92',
      // The alarm on the DLQ's oldest dead letter (lib/stateless/receiver-alarms.ts).
      'AWS::CloudWatch::Alarm ObservabilityDlqOldestMessage087F3F67',
      // The stripe route's alarm on its share of 401s (lib/stateless/signature-rejection-alarm.ts).
      'AWS::CloudWatch::Alarm ObservabilitySignatureRejectionsstripeB2E1C603',
      // The bucket of large bodies and its TLS-only policy (lib/stateful/body-bucket.ts).
      'AWS::S3::Bucket BodiesBucket7CDFEDE9',
      'AWS::S3::BucketPolicy BodiesBucketPolicyCBAE75E1',
    ];
    // Removed, and nothing stateful deleted with them:
    // - the demo (its route's two alarms, and the ledger table): the shipped configuration deploys
    //   no demo now. The ledger table is RETAIN (lib/demo/ledger-table.ts): a stack that had it keeps it.
    // - the AWS::SecretsManager::Secret resources: both were RETAIN_ON_UPDATE_OR_DELETE, so leaving
    //   the stack keeps them and their values in Secrets Manager. The stripe route's secret is now
    //   named with the prefix (Retryproof/stripe, was retryproof/stripe): the value is copied once
    //   (docs-drafts/construct.md, "Upgrading: route secrets are named with the prefix").
    const removed = [
      'AWS::CloudWatch::Alarm ObservabilityDuplicateStormdemo90F11A57',
      'AWS::CloudWatch::Alarm ObservabilityRoutePauseddemo120034A8',
      'AWS::DynamoDB::GlobalTable LedgerTable9343E4AA',
      'AWS::SecretsManager::Secret Secretsdemo8B43EF99',
      'AWS::SecretsManager::Secret Secretsstripe87CB9F58',
    ];
    expect(removed.every((line) => before.includes(line))).toBe(true);
    expect(now).toEqual([...before.filter((line) => !removed.includes(line)), ...added].sort());
    // The events table, the queues and the alarm topic keep their logical ids: updated in place, never replaced.
    for (const kept of ['AWS::DynamoDB::GlobalTable EventsTable4B7491D3', 'AWS::SQS::Queue WorkQueue1CAC4D2F', 'AWS::SQS::Queue WorkDeadLetterQueue304A9441']) {
      expect(now).toContain(kept);
    }
  });
});
