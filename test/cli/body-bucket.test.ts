/**
 * The CLI's view of a receiver's bucket of large bodies (the S3 claim check): the target carries
 * it (locally from endpoints.json, deployed from the receiver's descriptor; a descriptor without
 * one has none), the operator verbs get it with an S3 client, and `inspect --with-body` says a
 * body is in the bucket, prints its pointer and reads it from there. The local stack is stood in
 * for by its endpoints.json (its pid ours, so alive) over the run's DynamoDB Local and fauxqs,
 * with a bucket and records of this test's own names; a deployed stack by a CloudFormation stub
 * over a template written by hand (cloudformation-stub.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AwsClients } from '../../cli/aws-clients.ts';
import { runCli } from '../../cli/main.ts';
import { operatorOptionsOf, resolveTarget } from '../../cli/target.ts';
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { bodyObjectName, bodyObjectPointer } from '../../lambdas/domain/body-object.ts';
import { documentClient } from '../../lambdas/store/dynamodb-event-store.ts';
import { toRecordItem } from '../../lambdas/store/record-item.ts';
import { localDynamoClient, localS3Client } from '../../local/aws-clients.ts';
import { listen } from '../../local/http-gateway.ts';
import type { LocalEndpoints } from '../../local/endpoints-file.ts';
import { sampleRecord } from '../support/event-records.ts';
import { cloudFormationStub } from './cloudformation-stub.ts';
import type { DeployedStack } from './cloudformation-stub.ts';

const run = randomUUID().slice(0, 8);
/** A route that keeps every body in the bucket (claimCheckAboveBytes 0), and one that keeps those over 128 KiB. */
const ROUTE = `large-${run}`;
const INLINE = `inline-${run}`;
const BUCKET = `cli-bodies-${run}`;
const CONFIG: RetryproofConfig = {
  routes: [
    { name: ROUTE, signature: { scheme: 'standard-webhooks' }, secretName: 'large', action: 'a', actionTimeSeconds: 5, claimCheckAboveBytes: 0 },
    { name: INLINE, signature: { scheme: 'standard-webhooks' }, secretName: 'inline', action: 'a', actionTimeSeconds: 5 },
  ],
};

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('a deployed receiver\'s bucket of large bodies, from its descriptor', () => {
  const REGION = 'eu-west-1';
  /** A stack with one receiver, as CloudFormation describes it, its descriptor laid over with `extra`. */
  const stackWith = (name: string, extra: Record<string, unknown>): DeployedStack => ({
    name,
    region: REGION,
    template: {
      Resources: { Reconciler: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: { RETRYPROOF_CONFIG: JSON.stringify(CONFIG) } } } } as never },
      Outputs: {
        Receiver: {
          Value: JSON.stringify({
            retryproof: 1,
            receiver: 'Default',
            namePrefix: name,
            region: REGION,
            apiUrl: 'https://a.execute-api.eu-west-1.amazonaws.com',
            queueUrl: `https://sqs.eu-west-1.amazonaws.com/111111111111/${name}-work`,
            dlqUrl: `https://sqs.eu-west-1.amazonaws.com/111111111111/${name}-work-dlq`,
            eventsTable: `${name}-events`,
            configResource: 'Reconciler',
            ...extra,
          }),
        },
      },
    },
  });
  const s3Regions: string[] = [];
  const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
  const aws: AwsClients = {
    region: () => Promise.resolve(REGION),
    cloudFormation: () => cloudFormationStub([stackWith('WithBucket', { bodyBucket: 'withbucket-bodies-1a2b3c' }), stackWith('Older', {})]),
    dynamo: (region) => new DynamoDBClient({ region, credentials }),
    sqs: (region) => new SQSClient({ region, credentials }),
    s3: (region) => {
      s3Regions.push(region);
      return new S3Client({ region, credentials });
    },
    lambda: (region) => new LambdaClient({ region, credentials }),
  };

  it('carries the descriptor\'s bodyBucket, with an S3 client in the receiver\'s Region, to the operator verbs', async () => {
    // Act
    const target = await resolveTarget({ stack: 'WithBucket' }, {}, aws);
    target.close();
    // Assess
    expect(target.bodyBucket).toBe('withbucket-bodies-1a2b3c');
    expect(target.s3).toBeDefined();
    expect(s3Regions).toEqual([REGION]);
    expect(operatorOptionsOf(target, Date.now)).toMatchObject({ s3: target.s3, bodyBucket: 'withbucket-bodies-1a2b3c' });
  });

  it('lists the bucket with `receivers`, and none for a descriptor written before the claim check', async () => {
    // Act
    let stdout = '';
    const code = await runCli(['receivers', '--json'], { stdout: (t) => (stdout += t), stderr: () => undefined, stderrIsTty: false, env: {}, aws });
    // Assess
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as { stack: string; bodyBucket?: string }[];
    expect(rows.map((r) => [r.stack, r.bodyBucket])).toEqual([
      ['Older', undefined],
      ['WithBucket', 'withbucket-bodies-1a2b3c'],
    ]);
  });

  it('has no bucket and makes no S3 client for a descriptor written before the claim check', async () => {
    // Prepare
    s3Regions.length = 0;
    // Act
    const target = await resolveTarget({ stack: 'Older' }, {}, aws);
    target.close();
    // Assess
    expect(target.bodyBucket).toBeUndefined();
    expect(target.s3).toBeUndefined();
    expect(s3Regions).toEqual([]);
    expect(operatorOptionsOf(target, Date.now)).not.toHaveProperty('bodyBucket');
  });
});

describe('the local stack\'s bucket of large bodies, from endpoints.json', () => {
  const s3 = localS3Client(inject('sqsEndpoint'));
  const dynamo = localDynamoClient(inject('dynamoEndpoint'));
  let dir: string;
  // The stack's admin calls, as far as inspect makes them: its ledgers, of which it has none.
  const admin = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ledgers: 0, entries: [] }));
  });

  /** A record as the claim check leaves it, written straight to the run's table. */
  const putRecord = async (key: string, body: Buffer, extra: Parameters<typeof sampleRecord>[3] = {}, route = ROUTE): Promise<void> => {
    const record = sampleRecord(route, key, Date.now() - 60_000, { fingerprint: sha256(body), bodyBytes: body.length, ...extra });
    await documentClient(dynamo).send(new PutCommand({ TableName: inject('eventsTable'), Item: toRecordItem(record) }));
  };
  const putObject = (key: string, body: Buffer, route = ROUTE): Promise<unknown> =>
    s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: bodyObjectName(route, key, sha256(body)), Body: body }));

  async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['--local', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), stderrIsTty: false, env: { RETRYPROOF_LOCAL_DIR: dir } });
    return { code, stdout, stderr };
  }

  beforeAll(async () => {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const adminUrl = `http://127.0.0.1:${await listen(admin, 0)}`;
    dir = await mkdtemp(join(tmpdir(), 'retryproof-body-bucket-'));
    const queue = { queueUrl: 'http://127.0.0.1:1/000000000000/q', dlqUrl: 'http://127.0.0.1:1/000000000000/q-dlq', queueArn: 'arn:aws:sqs:us-east-1:000000000000:q', dlqArn: 'arn:aws:sqs:us-east-1:000000000000:q-dlq' };
    const endpoints: LocalEndpoints = {
      version: 1,
      pid: process.pid,
      startedAt: new Date().toISOString(),
      configFile: '/x/retryproof.config.ts',
      httpUrl: adminUrl,
      region: 'us-east-1',
      dynamoEndpoint: inject('dynamoEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
      s3Endpoint: inject('sqsEndpoint'),
      eventsTable: inject('eventsTable'),
      ...queue,
      bodyBucket: BUCKET,
      regions: [{ name: 'local-1', httpUrl: adminUrl, adminUrl, ...queue, bodyBucket: BUCKET }],
      routes: [],
      config: resolveConfig(CONFIG),
      settings: { visibilityTimeoutSeconds: 30, maxReceiveCount: 5, reconcileEverySeconds: 0, stuckAfterSeconds: 900, settleSeconds: 300 },
    };
    await writeFile(join(dir, 'endpoints.json'), JSON.stringify(endpoints));
  });

  afterAll(async () => {
    s3.destroy();
    dynamo.destroy();
    await new Promise((resolve) => admin.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the Region\'s bucket with `receivers --local`', async () => {
    const listed = await cli('receivers', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ stack: 'local', bodyBucket: BUCKET })]);
  });

  it('carries the Region\'s bucket and a client on fauxqs\'s S3, and hands both to the operator verbs', async () => {
    // Act
    const target = await resolveTarget({ local: true }, { RETRYPROOF_LOCAL_DIR: dir });
    try {
      // Assess: the client reaches the bucket (path-style, the local credentials).
      expect(target.bodyBucket).toBe(BUCKET);
      await target.s3!.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'probe', Body: 'x' }));
      expect(operatorOptionsOf(target, Date.now)).toMatchObject({ s3: target.s3, bodyBucket: BUCKET });
    } finally {
      target.close();
    }
  });

  it('inspect --with-body prints the pointer a parked record keeps, and the body read from the bucket', async () => {
    // Prepare: the record keeps its payload (it is parked) with the object's pointer, not the body.
    const key = `parked-${run}`;
    const body = Buffer.from(JSON.stringify({ blob: 'p'.repeat(200_000) }));
    await putObject(key, body);
    const pointer = bodyObjectPointer(BUCKET, bodyObjectName(ROUTE, key, sha256(body)));
    await putRecord(key, body, { status: 'PARKED', body: '', bodyObject: pointer });
    // Act
    const shown = await cli('inspect', ROUTE, key, '--with-body');
    const json = await cli('inspect', ROUTE, key, '--with-body', '--json');
    // Assess
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain(`  body       ${body.length} bytes, in the receiver's bucket: ${pointer}`);
    const start = lines.indexOf(`----- body of ${ROUTE}/${key} (${body.length} bytes, read from the bucket, shown as text) -----`);
    // 200 KB: the text shows its first 4 KiB, --json all of it.
    expect(lines.slice(start + 1, start + 3)).toEqual([
      body.subarray(0, 4096).toString('utf8'),
      `----- body cut: the first 4096 of ${body.length} bytes shown; inspect ${ROUTE} ${key} --with-body --json holds it whole -----`,
    ]);
    const record = (JSON.parse(json.stdout) as { record: { bodyObject: string; bodySource: string; body: string; bodyEncoding: string } }).record;
    expect(record).toMatchObject({ bodyObject: pointer, bodySource: 'bucket', bodyEncoding: 'base64' });
    expect(Buffer.from(record.body, 'base64').equals(body)).toBe(true);
  });

  it('inspect --with-body finds the object of a completed record that keeps no payload, by its name', async () => {
    // Prepare: as the executor leaves a record once its work is done.
    const key = `done-${run}`;
    const body = Buffer.from([0, 1, 2, 255, 254, 253]);
    await putObject(key, body);
    await putRecord(key, body, { status: 'COMPLETED', body: undefined, completedAt: Date.now() });
    // Act
    const shown = await cli('inspect', ROUTE, key, '--with-body');
    // Assess: binary, so shown as base64.
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain(`  body       ${body.length} bytes, in the receiver's bucket: ${bodyObjectPointer(BUCKET, bodyObjectName(ROUTE, key, sha256(body)))}`);
    const start = lines.indexOf(`----- body of ${ROUTE}/${key} (${body.length} bytes, read from the bucket, binary, shown as base64) -----`);
    expect(lines[start + 1]).toBe(body.toString('base64'));
  });

  it('inspect --with-body does not look in the bucket for a body its route keeps inline', async () => {
    // Prepare: an object under the name, which a body of 14 bytes on a 128 KiB route never gets.
    const key = `small-${run}`;
    const body = Buffer.from('{"small":true}');
    await putObject(key, body, INLINE);
    await putRecord(key, body, { status: 'COMPLETED', body: undefined, completedAt: Date.now() }, INLINE);
    // Act
    const shown = await cli('inspect', INLINE, key, '--with-body');
    // Assess
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`  body       ${body.length} bytes, not kept in the table (it travels in the work message)\n`);
    expect(shown.stdout).not.toContain('bucket');
  });

  it('inspect --with-body says so when the object a record points to is gone, and shows no body', async () => {
    // Prepare: the pointer, but no object (expired, say).
    const key = `gone-${run}`;
    const body = Buffer.from('{"gone":true}');
    const pointer = bodyObjectPointer(BUCKET, bodyObjectName(ROUTE, key, sha256(body)));
    await putRecord(key, body, { status: 'FAILED', body: '', bodyObject: pointer });
    // Act
    const shown = await cli('inspect', ROUTE, key, '--with-body');
    // Assess
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`  body       ${body.length} bytes, in the receiver's bucket: ${pointer}\n             the object is gone (expired, or never stored): the body cannot be shown\n`);
    expect(shown.stdout).not.toContain('----- body of');
  });

  it('inspect without --with-body reads nothing from the bucket and prints no body', async () => {
    // Prepare
    const key = `quiet-${run}`;
    const body = Buffer.from('{"quiet":true}');
    await putObject(key, body);
    await putRecord(key, body, { status: 'COMPLETED', body: undefined, completedAt: Date.now() });
    // Act
    const json = await cli('inspect', ROUTE, key, '--json');
    // Assess
    const record = (JSON.parse(json.stdout) as { record: Record<string, unknown> }).record;
    expect(record).not.toHaveProperty('body');
    expect(record).not.toHaveProperty('bodyObject');
  });
});
