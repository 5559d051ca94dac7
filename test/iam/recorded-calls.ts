/**
 * The calls a function's code makes, recorded where they leave it: an SDK middleware on
 * the function's own clients notes each operation and what IAM authorizes it as (an action
 * on a resource) before the request is built, so a call that fails, a refused condition
 * say, is recorded like one that succeeds. The least-privilege test compares these with
 * each function's role in the synthesized template.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';

/** One action on one resource, as a policy grants it. Resources are named by role: `events table`, `work queue`. */
export interface NeededGrant {
  readonly action: string;
  readonly resource: string;
}

/** One call a function made. */
export interface RecordedCall {
  /** The operation sent, `service:Operation`: `dynamodb:TransactWriteItems`. */
  readonly operation: string;
  /** What IAM checks for it: one grant, or one per item of a transaction. */
  readonly needs: readonly NeededGrant[];
}

/** The clients a function's code may call through. */
type RecordableClient = DynamoDBClient | SQSClient | SNSClient | SecretsManagerClient | S3Client;

/** The IAM prefix of each client's service. */
const SERVICE_OF_CLIENT: Readonly<Record<string, string>> = {
  DynamoDBClient: 'dynamodb',
  SQSClient: 'sqs',
  SNSClient: 'sns',
  SecretsManagerClient: 'secretsmanager',
  S3Client: 's3',
};

/** The IAM action each kind of transaction item is checked as. */
const TRANSACT_WRITE_ITEM_ACTION: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

type Input = Readonly<Record<string, unknown>>;

/**
 * Names a physical resource (a table name, a queue URL, a topic ARN, a secret name) by its
 * role. One the test does not know is named `unknown <id>`, which no grant matches.
 */
export type ResourceNames = ReadonlyMap<string, string>;

function nameOf(names: ResourceNames, id: unknown): string {
  return names.get(String(id)) ?? `unknown ${String(id)}`;
}

/** What IAM checks for one operation: the action, and the resource it is checked on. */
function needsOf(service: string, operation: string, input: Input, names: ResourceNames): NeededGrant[] {
  const action = `${service}:${operation}`;
  switch (service) {
    case 'dynamodb': {
      if (operation === 'TransactWriteItems') {
        // IAM has no TransactWriteItems action: each item is checked as its own write.
        return (input.TransactItems as readonly Input[]).flatMap((item) =>
          Object.entries(item).map(([kind, write]) => {
            const itemAction = TRANSACT_WRITE_ITEM_ACTION[kind];
            if (itemAction === undefined) throw new Error(`TransactWriteItems: unknown item kind ${kind}`);
            return { action: itemAction, resource: nameOf(names, (write as Input).TableName) };
          }),
        );
      }
      if (operation === 'BatchGetItem') {
        // Checked as its own action on each table it reads.
        return Object.keys(input.RequestItems as Input).map((table) => ({ action, resource: nameOf(names, table) }));
      }
      if (typeof input.TableName !== 'string') {
        throw new Error(`${action} names no TableName: teach test/iam/recorded-calls.ts what IAM checks it on`);
      }
      const table = nameOf(names, input.TableName);
      // A Query on an index is checked on the index's ARN, not the table's.
      return [{ action, resource: typeof input.IndexName === 'string' ? `${table}/index/${input.IndexName}` : table }];
    }
    case 'sqs':
      return [{ action, resource: nameOf(names, input.QueueUrl) }];
    case 'sns':
      return [{ action, resource: nameOf(names, input.TopicArn ?? input.TargetArn) }];
    case 'secretsmanager':
      return [{ action, resource: nameOf(names, input.SecretId) }];
    case 's3':
      return s3Needs(operation, input, names);
    default:
      throw new Error(`no resource rule for ${action}`);
  }
}

/**
 * An object call is checked on the object's ARN; the grants name a key prefix (`bodies/*`), so
 * an object is named by its bucket's role and its name's first segment: `body bucket/bodies/*`.
 */
function objectOf(names: ResourceNames, bucket: unknown, key: unknown): string {
  return `${nameOf(names, bucket)}/${String(key).split('/')[0] ?? ''}/*`;
}

/**
 * What IAM checks for each S3 call the functions make: HeadObject as s3:GetObject ("To use HEAD,
 * you must have the s3:GetObject permission", Amazon S3 API Reference, HeadObject), and
 * CopyObject as s3:GetObject on its source and s3:PutObject on its destination (Amazon S3 API
 * Reference, CopyObject, Permissions).
 */
function s3Needs(operation: string, input: Input, names: ResourceNames): NeededGrant[] {
  const object = objectOf(names, input.Bucket, input.Key);
  switch (operation) {
    case 'PutObject':
      return [{ action: 's3:PutObject', resource: object }];
    case 'GetObject':
    case 'HeadObject':
      return [{ action: 's3:GetObject', resource: object }];
    case 'CopyObject': {
      // `<bucket>/<key>`, as lambdas/store/s3-body-objects.ts writes it.
      const source = String(input.CopySource);
      const slash = source.indexOf('/');
      return [
        { action: 's3:GetObject', resource: objectOf(names, source.slice(0, slash), source.slice(slash + 1)) },
        { action: 's3:PutObject', resource: object },
      ];
    }
    default:
      throw new Error(`s3:${operation}: teach test/iam/recorded-calls.ts what IAM checks it on`);
  }
}

/**
 * Adds the recording middleware to `client` and returns it. A document client made from it
 * later shares its middleware stack, so its calls are recorded as the low-level ones
 * (GetCommand as GetItem).
 */
export function recordCalls<C extends RecordableClient>(client: C, log: RecordedCall[], names: ResourceNames): C {
  const stack = client.middlewareStack as SQSClient['middlewareStack'];
  stack.add(
    (next, context) => async (args) => {
      const service = SERVICE_OF_CLIENT[context.clientName ?? ''];
      const operation = context.commandName?.replace(/Command$/, '');
      if (service === undefined || operation === undefined) {
        throw new Error(`cannot record a call of ${String(context.clientName)} ${String(context.commandName)}`);
      }
      log.push({ operation: `${service}:${operation}`, needs: needsOf(service, operation, args.input as Input, names) });
      return next(args);
    },
    { step: 'initialize', name: 'retryproofRecordCalls' },
  );
  return client;
}

/**
 * A real Secrets Manager client whose transport answers GetSecretValue from `values`
 * without any network: the one stand-in of the least-privilege test, because neither
 * DynamoDB Local nor fauxqs (SNS, SQS and S3) emulates Secrets Manager. The SDK still
 * builds, signs and parses every request, and {@link recordCalls} records it as any other;
 * any other operation is refused as Secrets Manager refuses an unknown one.
 */
export function offlineSecretsManager(values: ReadonlyMap<string, string>): SecretsManagerClient {
  const answer = (statusCode: number, body: Record<string, unknown>) => ({
    response: {
      statusCode,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: Buffer.from(JSON.stringify(body)),
    },
  });
  return new SecretsManagerClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    // Nothing listens on the discard port: were the handler below ever bypassed, the call fails here.
    endpoint: 'http://127.0.0.1:9',
    maxAttempts: 1,
    requestHandler: {
      handle: (request: { headers: Record<string, string>; body?: unknown }) => {
        const target = request.headers['x-amz-target'];
        if (target !== 'secretsmanager.GetSecretValue') {
          return Promise.resolve(answer(400, { __type: 'InvalidRequestException', message: `offline Secrets Manager answers GetSecretValue only, not ${String(target)}` }));
        }
        const body = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        const value = values.get(SecretId);
        if (value === undefined) {
          return Promise.resolve(answer(400, { __type: 'ResourceNotFoundException', message: `Secrets Manager can't find the specified secret: ${SecretId}` }));
        }
        return Promise.resolve(answer(200, { ARN: `arn:aws:secretsmanager:${LOCAL_REGION}:000000000000:secret:${SecretId}-AbCdEf`, Name: SecretId, SecretString: value, VersionId: 'v1' }));
      },
    },
  });
}
