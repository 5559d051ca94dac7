import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** One route's signing secret, as the stack needs to know it. */
export interface RouteSecretSpec {
  /** The route's name; becomes part of the construct id, so it must stay stable. */
  readonly route: string;
  /** Name of the secret in Secrets Manager. */
  readonly secretName: string;
  /** Import an existing secret by name instead of creating one. */
  readonly importSecret: boolean;
}

/** Props of {@link RouteSecrets}. */
export interface RouteSecretsProps {
  readonly routes: readonly RouteSecretSpec[];
  /**
   * Regions where Secrets Manager keeps a read-only replica of each created secret, under the
   * same name, with the value kept in step with this one (Secrets Manager User Guide,
   * "Replicate AWS Secrets Manager secrets across Regions"). A receiver there imports it by name.
   * @default - no replicas
   */
  readonly replicaRegions?: readonly string[];
}

/**
 * One Secrets Manager secret per route. A created secret starts with a random
 * placeholder: the real value is the sender's signing secret, which the operator puts
 * in after deploy. An imported secret is looked up by name and left as it is. With
 * `replicaRegions`, each created secret is replicated there, so the value is set once.
 */
export class RouteSecrets extends Construct {
  /** The secret of each route, by route name. */
  readonly byRoute: ReadonlyMap<string, ISecret>;

  constructor(scope: Construct, id: string, props: RouteSecretsProps) {
    super(scope, id);
    const byRoute = new Map<string, ISecret>();
    for (const spec of props.routes) {
      if (byRoute.has(spec.route)) {
        throw new Error(`route ${spec.route} has more than one secret`);
      }
      if (spec.importSecret) {
        byRoute.set(spec.route, Secret.fromSecretNameV2(this, spec.route, spec.secretName));
        continue;
      }
      const secret = new Secret(this, spec.route, {
        secretName: spec.secretName,
        description: `retryproof: signing secret of route "${spec.route}" (replace the placeholder with the sender's secret)`,
        generateSecretString: { passwordLength: 48, excludePunctuation: true },
        ...(props.replicaRegions === undefined || props.replicaRegions.length === 0
          ? {}
          : { replicaRegions: props.replicaRegions.map((region) => ({ region })) }),
        // The value is issued by the sender: a stack deleted by mistake must not take it along.
        // Not plain RETAIN, which also keeps a secret whose first create is rolled back: the
        // retried deploy would then fail on its name (Secrets Manager holds deleted names too).
        // After a deliberate destroy the secret stays; README, "Redeploying after a destroy".
        removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason: 'a webhook signing secret is issued and rotated by the sender; the receiver cannot rotate it on its own',
      });
      byRoute.set(spec.route, secret);
    }
    this.byRoute = byRoute;
  }
}
