import { createHash } from 'node:crypto';
import { ArnFormat, CustomResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { defaultPolicyOf, nagResource } from '../nag.ts';
import { RetryproofFunction, lambdaEntry } from '../stateless/retryproof-function.ts';

/** One route's signing secret, as the stack needs to know it. */
export interface RouteSecretSpec {
  /** The route's name. */
  readonly route: string;
  /** The secret's name in Secrets Manager, exactly: for a created one, {@link createdSecretName}. */
  readonly secretName: string;
  /** Import an existing secret by name instead of ensuring one exists. */
  readonly importSecret: boolean;
}

/** Props of {@link RouteSecrets}. */
export interface RouteSecretsProps {
  readonly routes: readonly RouteSecretSpec[];
  /**
   * Regions where Secrets Manager keeps a read-only replica of each secret this creates, under
   * the same name, with the value kept in step with this one (Secrets Manager User Guide,
   * "Replicate AWS Secrets Manager secrets across Regions"). A receiver there imports it by name.
   * @default - no replicas
   */
  readonly replicaRegions?: readonly string[];
  /** Days the ensuring function's log group keeps its logs, as the receiver's functions do. */
  readonly logRetentionDays: number;
  /** The receiver's metric namespace, for the function's Powertools defaults. */
  readonly metricNamespace: string;
}

/**
 * The Secrets Manager name of a route secret the receiver creates: the receiver's name prefix,
 * a slash, then the route's `secretName`. Two stages or two receivers of one account and Region
 * never share one, and a route renamed with its `secretName` kept keeps its secret.
 */
export function createdSecretName(namePrefix: string, secretName: string): string {
  return `${namePrefix}/${secretName}`;
}

/**
 * The construct id of a created secret: from its name, not its route's, so a renamed route keeps it.
 * `Ensured`, not the `Ensure` of the AwsCustomResource it replaces: CloudFormation refuses to change
 * a custom resource's ServiceToken, so the new provider comes with new resources.
 */
function ensuredSecretId(secretName: string): string {
  const readable = secretName.replace(/[^A-Za-z0-9]/g, '');
  const digest = createHash('sha256').update(secretName).digest('hex').slice(0, 8);
  return `Ensured${readable.slice(0, 40)}${digest}`;
}

/**
 * One Secrets Manager secret per route, found by name. A secret the receiver creates is not
 * an AWS::SecretsManager::Secret of the stack: CloudFormation would then own its name, and
 * the name outlives the resource. A retained secret keeps it, and a deleted one keeps it
 * through its recovery window of 7 to 30 days ("Secrets Manager does not immediately delete
 * secrets ... scheduled for deletion after a recovery window of a minimum of seven days",
 * Secrets Manager User Guide, "Delete an AWS Secrets Manager secret"). A route removed and
 * added again, or a stack destroyed and deployed again, would then fail with "already exists",
 * and so would a route renamed with its secretName kept: a changed logical id is created
 * before the old one is deleted. CloudFormation's auto-import cannot adopt it either: it needs
 * the primary identifier in the template, and a secret's (`Id`, its ARN) is read-only
 * (CloudFormation User Guide, "Import AWS resources into a CloudFormation stack automatically").
 *
 * So a custom resource ensures the secret exists (lambdas/secrets/ensure-route-secret.ts): it
 * calls CreateSecret, with no value and no placeholder, adopts a secret of that name, adds each
 * replica Region the secret lacks, and never deletes it. It runs when the resource is created or
 * its properties change (a new route, a new name, new replica Regions), not on every deploy
 * (docs/architecture.md, "Several Regions"). The value is the sender's signing secret, which the
 * operator puts in after the first deploy (until then the ingest answers 503 and senders retry).
 * An imported secret is looked up by name and left as it is.
 */
export class RouteSecrets extends Construct {
  /** The secret of each route, by route name. */
  readonly byRoute: ReadonlyMap<string, ISecret>;

  constructor(scope: Construct, id: string, props: RouteSecretsProps) {
    super(scope, id);
    const byRoute = new Map<string, ISecret>();
    const stack = Stack.of(this);
    const replicas = props.replicaRegions ?? [];
    const ensured = new Set<string>();
    for (const spec of props.routes) {
      if (byRoute.has(spec.route)) {
        throw new Error(`route ${spec.route} has more than one secret`);
      }
      byRoute.set(spec.route, Secret.fromSecretNameV2(this, spec.route, spec.secretName));
      // Two routes on one created secret share it: one custom resource for both.
      if (!spec.importSecret) ensured.add(spec.secretName);
    }
    this.byRoute = byRoute;
    if (ensured.size === 0) return;

    const handler = new RetryproofFunction(this, 'EnsureHandler', {
      entry: lambdaEntry('secrets/route-secret-resource'),
      description: 'retryproof: ensures each route secret exists, with its replicas, at deploy',
      timeout: Duration.minutes(2),
      memorySize: 256,
      logRetentionDays: props.logRetentionDays,
      metricNamespace: props.metricNamespace,
    });
    const arnOf = (name: string) => stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${name}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    Grant.addToPrincipal({
      grantee: handler,
      actions: ['secretsmanager:CreateSecret', 'secretsmanager:DescribeSecret', ...(replicas.length === 0 ? [] : ['secretsmanager:ReplicateSecretToRegions'])],
      resourceArns: [...ensured].map(arnOf),
    });
    for (const name of ensured) {
      Validations.of(defaultPolicyOf(handler.serviceRole)).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(this, arnOf(name))}]`,
        reason: `the route secret ${name} is made by name at deploy; -?????? matches only the suffix Secrets Manager appends`,
      });
      new CustomResource(this, ensuredSecretId(name), {
        resourceType: 'Custom::RetryproofRouteSecret',
        serviceToken: handler.functionArn,
        properties: {
          SecretName: name,
          Description: `retryproof: a webhook signing secret (put the sender's secret here: aws secretsmanager put-secret-value --region ${stack.region} --secret-id ${name})`,
          ...(replicas.length === 0 ? {} : { ReplicaRegions: [...replicas] }),
        },
      });
    }
  }
}
