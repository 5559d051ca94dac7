/**
 * Credentials, region and AWS errors, the AWS CLI's way: the SDK's default chain reads
 * AWS_PROFILE, AWS_REGION, the shared config files and SSO caches, and every failure is one
 * line saying what to do (exit code 1; 2 for what the command line lacks).
 *
 * Two kinds of test. The CLI as a child process, with a HOME of its own and every AWS call
 * pointed at a loopback server (AWS_ENDPOINT_URL) that counts the calls and answers as
 * CloudFormation does: the real chain, the real errors. And runCli with stub clients that throw
 * the errors the SDK throws, built as it builds them: CredentialsProviderError from
 * @smithy/core/config, a service's ServiceException subclass with name, $fault, $metadata.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationServiceException } from '@aws-sdk/client-cloudformation';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { CredentialsProviderError } from '@smithy/core/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { deniedAction } from '../../cli/aws-errors.ts';
import { EXIT } from '../../cli/errors.ts';
import { runCli } from '../../cli/main.ts';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING } from '../cdk/stack-fixture.ts';
import { runScript } from '../local/stack-process.ts';
import { cloudFormationStub, deployedStack } from './cloudformation-stub.ts';

const REGION = 'eu-west-1';
const META = { httpStatusCode: 403, requestId: '6f1c2a0e-0000-4000-8000-000000000000', attempts: 1, totalRetryDelay: 0 };

/** A service error as the SDK's deserializer makes one: the service's ServiceException, named by the error code. */
function cfnError(name: string, message: string, httpStatusCode = 403): CloudFormationServiceException {
  return new CloudFormationServiceException({ name, $fault: 'client', $metadata: { ...META, httpStatusCode }, message });
}

// One receiver, really synthesized, for the commands that get past CloudFormation.
const app = new App({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
const stack = new Stack(app, 'Consumer', { env: { account: '111111111111', region: REGION } });
new WebhookReceiver(stack, 'Webhooks', {
  routes: [{ name: 'orders', signature: { scheme: 'hmac-sha256', header: 'x-signature' }, secretName: 'c/orders', actionTimeSeconds: 10, action: 'act' }],
  actions: { act: { entry: new URL('../../lambdas/actions/index.ts', import.meta.url).pathname } },
});
const CONSUMER = deployedStack(stack);

/** Clients whose CloudFormation throws `fail` (when given), and whose DynamoDB and SQS throw theirs. */
function failingAws(options: { cfn?: () => Error; dynamo?: () => Error; sqs?: () => Error }): Partial<AwsClients> {
  // A real client whose every call fails with `make()` where the SDK would send the request.
  const failing = <T extends { middlewareStack: { add(m: unknown, o: unknown): void } }>(client: T, make: (() => Error) | undefined): T => {
    if (make !== undefined) client.middlewareStack.add(() => () => Promise.reject(make()), { step: 'initialize', name: 'failLikeAws' });
    return client;
  };
  const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'x' };
  return {
    region: () => Promise.resolve(REGION),
    cloudFormation: (): CloudFormationClient => cloudFormationStub([CONSUMER], options.cfn === undefined ? {} : { fail: options.cfn }),
    dynamo: (region) => failing(new DynamoDBClient({ region, credentials }), options.dynamo),
    sqs: (region) => failing(new SQSClient({ region, credentials }), options.sqs),
  };
}

async function cli(argv: string[], aws: Partial<AwsClients>, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env, aws });
  return { code, stdout, stderr };
}

describe('AWS failures, each one line saying what to do, exit code 1', () => {
  it('no credentials anywhere: set AWS_PROFILE or run aws configure / aws sso login', async () => {
    // The default chain's last link (@aws-sdk/credential-provider-node).
    const out = await cli(['--stack', 'Consumer', 'dlq', 'list'], failingAws({ cfn: () => new CredentialsProviderError('Could not load credentials from any providers', { tryNextLink: false }) }));
    expect(out).toEqual({ code: EXIT.failed, stdout: '', stderr: 'retryproof dlq list: no AWS credentials: set AWS_PROFILE or run aws configure / aws sso login\n' });
  });

  it('an expired SSO session: run aws sso login --profile P, P the profile in use', async () => {
    // @aws-sdk/credential-provider-sso's message for a cached token past its expiresAt.
    const expired = (): Error =>
      new CredentialsProviderError('The SSO session associated with this profile has expired. To refresh this SSO session run aws sso login with the corresponding profile.', {
        tryNextLink: false,
      });
    const out = await cli(['--stack', 'Consumer', 'routes', 'list'], failingAws({ cfn: expired }), { AWS_PROFILE: 'ops-admin' });
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe('retryproof routes list: the AWS SSO session of profile ops-admin has expired: run aws sso login --profile ops-admin\n');
  });

  it('expired temporary credentials (ExpiredToken): run aws sso login --profile P', async () => {
    const out = await cli(['--stack', 'Consumer', 'ledger'], failingAws({ cfn: () => cfnError('ExpiredToken', 'The security token included in the request is expired') }), { AWS_PROFILE: 'dev' });
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe('retryproof ledger: the AWS session has expired (ExpiredToken): run aws sso login --profile dev, or renew the credentials you set, then retry\n');
  });

  it('access denied names the action IAM refused, and to whom', async () => {
    const denied = (): Error =>
      cfnError(
        'AccessDenied',
        'User: arn:aws:sts::111111111111:assumed-role/ReadOnly/alice is not authorized to perform: cloudformation:DescribeStacks on resource: arn:aws:cloudformation:eu-west-1:111111111111:stack/Consumer/* because no identity-based policy allows the cloudformation:DescribeStacks action',
      );
    const out = await cli(['--stack', 'Consumer', 'inspect', 'orders', 'k'], failingAws({ cfn: denied }));
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe(
      'retryproof inspect: AWS refused cloudformation:DescribeStacks to arn:aws:sts::111111111111:assumed-role/ReadOnly/alice: use a role that allows cloudformation:DescribeStacks (or ask for it)\n',
    );
  });

  it('access denied past CloudFormation: DynamoDB\'s AccessDeniedException and SQS\'s AccessDenied name theirs', async () => {
    // Prepare: CloudFormation answers; the table and the queue refuse.
    const dynamoDenied = (): Error =>
      new DynamoDBServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: META,
        message: 'User: arn:aws:iam::111111111111:user/bob is not authorized to perform: dynamodb:Query on resource: arn:aws:dynamodb:eu-west-1:111111111111:table/Consumer-Webhooks-x because no identity-based policy allows the dynamodb:Query action',
      });
    const sqsDenied = (): Error =>
      new SQSServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: META,
        message: 'User: arn:aws:iam::111111111111:user/bob is not authorized to perform: sqs:getqueueattributes on resource: arn:aws:sqs:eu-west-1:111111111111:Consumer-Webhooks-dlq because no identity-based policy allows the sqs:getqueueattributes action',
      });
    // Act
    const routes = await cli(['--stack', 'Consumer', 'routes', 'list'], failingAws({ dynamo: dynamoDenied }));
    const dlq = await cli(['--stack', 'Consumer', 'dlq', 'list'], failingAws({ sqs: sqsDenied }));
    // Assess
    expect(routes.stderr).toBe('retryproof routes list: AWS refused dynamodb:Query to arn:aws:iam::111111111111:user/bob: use a role that allows dynamodb:Query (or ask for it)\n');
    expect(dlq.stderr).toBe(
      'retryproof dlq list: AWS refused sqs:getqueueattributes to arn:aws:iam::111111111111:user/bob: use a role that allows sqs:getqueueattributes (or ask for it)\n',
    );
    expect([routes.code, dlq.code]).toEqual([EXIT.failed, EXIT.failed]);
  });

  it('keys AWS does not know (UnrecognizedClientException): set AWS_PROFILE or run aws configure / aws sso login', async () => {
    const unknownKeys = (): Error =>
      new DynamoDBServiceException({ name: 'UnrecognizedClientException', $fault: 'client', $metadata: { ...META, httpStatusCode: 400 }, message: 'The security token included in the request is invalid.' });
    const out = await cli(['--stack', 'Consumer', 'routes', 'list'], failingAws({ dynamo: unknownKeys }));
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe(
      'retryproof routes list: AWS does not accept these credentials (UnrecognizedClientException: The security token included in the request is invalid.): set AWS_PROFILE or run aws configure / aws sso login\n',
    );
  });

  it('deniedAction reads the action out of IAM\'s message, and nothing out of another', () => {
    expect(deniedAction('User: arn:aws:iam::1:user/x is not authorized to perform: cloudformation:GetTemplate on resource: y')).toBe('cloudformation:GetTemplate');
    expect(deniedAction('Access Denied')).toBeUndefined();
  });

  it('a receiver without a ledger: ledger says so, with no call to AWS', async () => {
    const out = await cli(['--stack', 'Consumer', 'ledger'], failingAws({ dynamo: () => new Error('no call expected') }));
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe("retryproof ledger: stack Consumer has no ledger the CLI can read: its descriptor names none (the demo's ledger table is there only with demo: true)\n");
  });
});

/** Answers every call as CloudFormation does for a stack it does not have, and remembers each call's headers. */
function cloudFormationServer(seen: IncomingHttpHeaders[]): Server {
  return createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'text/xml' }).end(
        '<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code>' +
          '<Message>Stack with id Retryproof does not exist</Message></Error><RequestId>b2544024-a0f9-4ae1-ab23-fc08e1ef4e9a</RequestId></ErrorResponse>',
      );
    });
  });
}

describe('retryproof --stack, the real SDK chain in a HOME of its own', () => {
  let server: Server;
  const seen: IncomingHttpHeaders[] = [];
  let home: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = cloudFormationServer(seen);
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
    const startUrl = 'https://example.awsapps.com/start';
    await writeFile(
      join(home, 'config'),
      [
        '[profile ops]',
        'region = eu-central-1',
        '[profile sso-dev]',
        `sso_start_url = ${startUrl}`,
        'sso_region = eu-west-1',
        'sso_account_id = 111111111111',
        'sso_role_name = ReadOnly',
        'region = eu-west-1',
        '',
      ].join('\n'),
    );
    await writeFile(join(home, 'credentials'), ['[ops]', 'aws_access_key_id = AKIAOPSEXAMPLE0000001', 'aws_secret_access_key = secret', ''].join('\n'));
    // `aws sso login` leaves the token here (sha1 of the start URL); this one expired long ago.
    const cache = join(home, '.aws', 'sso', 'cache');
    await mkdir(cache, { recursive: true });
    await writeFile(join(cache, `${createHash('sha1').update(startUrl).digest('hex')}.json`), JSON.stringify({ accessToken: 'x', expiresAt: '2020-01-01T00:00:00Z' }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(home, { recursive: true, force: true });
  });

  it('no region anywhere: pass --region or set AWS_REGION, exit code 2, before any call', async () => {
    const before = seen.length;
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', 'ledger'], env);
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(
      'retryproof ledger: no AWS region for stack Retryproof: pass --region R, or set AWS_REGION (or a region in the profile AWS_PROFILE names)',
    );
    expect(seen.length).toBe(before);
  });

  it('no credentials: set AWS_PROFILE or run aws configure / aws sso login, exit code 1, without a call', async () => {
    const before = seen.length;
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', '--region', 'eu-west-1', 'dlq', 'list'], env);
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe('retryproof dlq list: no AWS credentials: set AWS_PROFILE or run aws configure / aws sso login\n');
    expect(seen.length).toBe(before);
  });

  it('AWS_PROFILE gives the profile\'s region and keys from the shared files; an unknown stack names that region', async () => {
    const before = seen.length;
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', 'routes', 'list'], { ...env, AWS_PROFILE: 'ops' });
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe('retryproof routes list: no stack Retryproof in region eu-central-1; list them with retryproof receivers --region eu-central-1\n');
    // The request was signed with the profile's key, for its region.
    expect(seen.length).toBe(before + 1);
    expect(seen.at(-1)?.authorization).toMatch(/Credential=AKIAOPSEXAMPLE0000001\/\d{8}\/eu-central-1\/cloudformation\/aws4_request/);
  });

  it('an SSO profile whose session expired: run aws sso login --profile P, without a call', async () => {
    const before = seen.length;
    const out = await runScript('cli/retryproof.ts', ['--stack', 'Retryproof', 'inspect', 'demo', 'k'], { ...env, AWS_PROFILE: 'sso-dev' });
    expect(out.code).toBe(EXIT.failed);
    expect(out.stderr).toBe('retryproof inspect: the AWS SSO session of profile sso-dev has expired: run aws sso login --profile sso-dev\n');
    expect(seen.length).toBe(before);
  });

  it('receivers with no --stack and no region is a usage error too', async () => {
    const out = await runScript('cli/retryproof.ts', ['receivers'], env);
    expect(out.code).toBe(EXIT.usage);
    expect(out.stderr.split('\n')[0]).toBe(
      'retryproof receivers: no AWS region for the list of receivers: pass --region R, or set AWS_REGION (or a region in the profile AWS_PROFILE names)',
    );
  });
});
