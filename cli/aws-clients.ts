/**
 * The AWS clients of a command on a deployed receiver, made the way the AWS CLI makes its
 * own: region and credentials from the SDK's default chain, so AWS_PROFILE, AWS_REGION,
 * ~/.aws/config and ~/.aws/credentials (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE), SSO
 * profiles (`aws sso login`), web identity and instance roles all work with no flag of ours.
 *
 * The chain is @aws-sdk/credential-provider-node's defaultProvider (the client's default
 * `credentialDefaultProvider`): env keys, unless AWS_PROFILE is set ("AWS_PROFILE is set,
 * skipping fromEnv provider"), then SSO, ini, process, web identity, container/instance
 * metadata; it fails with CredentialsProviderError "Could not load credentials from any
 * providers" (node_modules/@aws-sdk/credential-provider-node/dist-cjs/index.js, 3.972.x).
 * The profile is passed as the client's `profile` from the CLI's environment, so a test
 * (or a caller) that hands runCli an environment gets that profile, not process.env's.
 *
 * Tests replace any of these factories (runCli's `io.aws`): nothing here is called then.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { UsageError } from './errors.ts';

export interface AwsClients {
  /** The region of the default chain: AWS_REGION, else the region of the profile (AWS_PROFILE or `default`). */
  region(): Promise<string | undefined>;
  cloudFormation(region: string): CloudFormationClient;
  dynamo(region: string): DynamoDBClient;
  sqs(region: string): SQSClient;
  /**
   * The receiver's bucket of large bodies. A body pointer may name another Region's bucket (a
   * record accepted there): the client follows S3's redirect to it (followRegionRedirects).
   */
  s3(region: string): S3Client;
  /** The receiver's own functions: `reconcile` runs its reconciler, which holds the receiver's ledgers. */
  lambda(region: string): LambdaClient;
}

/** The profile the SDK will use: AWS_PROFILE, else `default` (getProfileName in @smithy/core/config). */
export function profileOf(env: NodeJS.ProcessEnv): string {
  const named = env.AWS_PROFILE?.trim();
  return named === undefined || named === '' ? 'default' : named;
}

/** The SDK's own clients on the default chain, with `env`'s AWS_PROFILE. */
export function sdkClients(env: NodeJS.ProcessEnv): AwsClients {
  const named = env.AWS_PROFILE?.trim();
  const profile = named === undefined || named === '' ? {} : { profile: named };
  return {
    async region() {
      const client = new CloudFormationClient(profile);
      try {
        return await client.config.region();
      } catch {
        // "Region is missing": the caller says what to set.
        return undefined;
      } finally {
        client.destroy();
      }
    },
    cloudFormation: (region) => new CloudFormationClient({ ...profile, region }),
    dynamo: (region) => new DynamoDBClient({ ...profile, region }),
    sqs: (region) => new SQSClient({ ...profile, region }),
    s3: (region) => new S3Client({ ...profile, region, followRegionRedirects: true }),
    lambda: (region) => new LambdaClient({ ...profile, region }),
  };
}

/**
 * The region a deployed receiver's clients use: `--region`, else the chain's. Resolved before
 * any call, so a missing region is one line saying what to set, and no request is made.
 * @throws UsageError when no region is set anywhere
 */
export async function deployedRegion(aws: AwsClients, region: string | undefined, what: string): Promise<string> {
  if (region !== undefined) return region;
  const found = await aws.region();
  if (found === undefined || found === '') {
    throw new UsageError(`no AWS region for ${what}: pass --region R, or set AWS_REGION (or a region in the profile AWS_PROFILE names)`);
  }
  return found;
}
