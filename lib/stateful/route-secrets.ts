import { createHash } from 'node:crypto';
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import type { AwsSdkCall } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

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
}

/**
 * The Secrets Manager name of a route secret the receiver creates: the receiver's name prefix,
 * a slash, then the route's `secretName`. Two stages or two receivers of one account and Region
 * never share one, and a route renamed with its `secretName` kept keeps its secret.
 */
export function createdSecretName(namePrefix: string, secretName: string): string {
  return `${namePrefix}/${secretName}`;
}

/** The construct id of a created secret: from its name, not its route's, so a renamed route keeps it. */
function ensuredSecretId(secretName: string): string {
  const readable = secretName.replace(/[^A-Za-z0-9]/g, '');
  const digest = createHash('sha256').update(secretName).digest('hex').slice(0, 8);
  return `Ensure${readable.slice(0, 40)}${digest}`;
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
 * So each deploy ensures the secret exists: a custom resource calls CreateSecret, with no value
 * and no placeholder, and takes ResourceExistsException for success; it never deletes it. The
 * value is the sender's signing secret, which the operator puts in after the first deploy
 * (until then the ingest answers 503 and senders retry). An imported secret is looked up by
 * name and left as it is.
 */
export class RouteSecrets extends Construct {
  /** The secret of each route, by route name. */
  readonly byRoute: ReadonlyMap<string, ISecret>;

  constructor(scope: Construct, id: string, props: RouteSecretsProps) {
    super(scope, id);
    const byRoute = new Map<string, ISecret>();
    const stack = Stack.of(this);
    const replicas = props.replicaRegions ?? [];
    for (const spec of props.routes) {
      if (byRoute.has(spec.route)) {
        throw new Error(`route ${spec.route} has more than one secret`);
      }
      const secret = Secret.fromSecretNameV2(this, spec.route, spec.secretName);
      byRoute.set(spec.route, secret);
      if (spec.importSecret) continue;
      const ensureId = ensuredSecretId(spec.secretName);
      // Two routes on one created secret share it: one custom resource for both.
      if (this.node.tryFindChild(ensureId) !== undefined) continue;
      const create: AwsSdkCall = {
        service: 'SecretsManager',
        action: 'CreateSecret',
        parameters: {
          Name: spec.secretName,
          Description: `retryproof: a webhook signing secret (put the sender's secret here: aws secretsmanager put-secret-value --secret-id ${spec.secretName})`,
          ...(replicas.length === 0 ? {} : { AddReplicaRegions: replicas.map((region) => ({ Region: region })) }),
        },
        // The name is the secret: the same name is the same secret, whichever route uses it.
        physicalResourceId: PhysicalResourceId.of(spec.secretName),
        // Adopt a secret of that name: one this stack made before it was destroyed, one a
        // removed route left, or one a person made (Secrets Manager API Reference, CreateSecret:
        // ResourceExistsException, "A resource with the ID you requested already exists").
        ignoreErrorCodesMatching: 'ResourceExistsException',
      };
      new AwsCustomResource(this, ensureId, {
        resourceType: 'Custom::RetryproofRouteSecret',
        // On every create and update, never on delete: the value is issued by the sender, and a
        // stack deleted by mistake must not take it along.
        onCreate: create,
        onUpdate: create,
        policy: AwsCustomResourcePolicy.fromStatements([
          new PolicyStatement({
            actions: ['secretsmanager:CreateSecret', ...(replicas.length === 0 ? [] : ['secretsmanager:ReplicateSecretToRegions'])],
            resources: [stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${spec.secretName}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
          }),
        ]),
        installLatestAwsSdk: false,
      });
    }
    // The one provider function of the stack's AwsCustomResources, a singleton CDK keeps at the stack's root.
    const provider = stack.node.tryFindChild(`AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`);
    if (provider !== undefined) {
      Validations.of(provider).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: "CDK's AwsCustomResource provider writes its own logs with the basic execution role; it is called only at deploy, and only makes the CreateSecret calls its policy names",
      });
    }
    this.byRoute = byRoute;
  }
}
