import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validations } from 'aws-cdk-lib';
import type { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { logRetention } from '../log-retention.ts';
import { defaultPolicyOf } from '../nag.ts';

/** The repository root: esbuild's project root, and where package-lock.json lives. */
const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Props of {@link RetryproofFunction}. */
export interface RetryproofFunctionProps {
  /** The handler's entry file, relative to the repository root, e.g. `lambdas/ingest/handler.ts`. */
  readonly entry: string;
  /** What the function does, for the console. */
  readonly description: string;
  readonly timeout: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  /** Days the function's log group keeps its logs. Must be a CloudWatch Logs retention. */
  readonly logRetentionDays: number;
  /** Environment beyond the shared defaults (NODE_OPTIONS, POWERTOOLS_*). @default - none */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Powertools' service name, the `service` key of every log line and the `service`
   * dimension of every metric. The handlers pass the same name from the metric catalogue
   * (SERVICE), which wins; the variable keeps the two from telling different stories.
   * @default 'retryproof'
   */
  readonly serviceName?: string;
}

/**
 * A retryproof Lambda function: every default the three functions share lives here.
 * nodejs24.x on arm64, an ESM bundle built by the local esbuild (no Docker) with the
 * AWS SDK inside it, source maps on, X-Ray active, its own log group with a set
 * retention, and its own role that may write to that log group and nothing else until
 * the stack grants it more.
 */
export class RetryproofFunction extends NodejsFunction {
  /** The function's log group, created with it so its retention is ours to set. */
  readonly logs: ILogGroup;
  /** The function's own role; every grant to the function lands in its default policy. */
  readonly serviceRole: Role;

  constructor(scope: Construct, id: string, props: RetryproofFunctionProps) {
    // The log group and role are siblings of the function (a subclass cannot create
    // children before super()). The role is our own so the function gets no managed
    // policy: AWSLambdaBasicExecutionRole would allow writing to every log group.
    const logs = new LogGroup(scope, `${id}Logs`, { retention: logRetention(props.logRetentionDays) });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `retryproof: runs the ${id} function`,
    });
    super(scope, id, {
      entry: join(PROJECT_ROOT, props.entry),
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      tracing: Tracing.ACTIVE,
      logGroup: logs,
      role,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'retryproof',
        POWERTOOLS_METRICS_NAMESPACE: 'Retryproof',
        ...props.environment,
      },
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        // Prefer each package's ESM build, so esbuild can tree-shake it.
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        // Stack traces need the mappings, not the sources; leaving them out halves the map.
        sourcesContent: false,
        // The SDK is bundled, not taken from the runtime: the bundle then runs the exact
        // client versions package-lock.json pins and the local tests ran against, and
        // tree-shaking keeps only the commands we call.
        bundleAwsSDK: true,
        // Some CommonJS dependencies call require() for Node built-ins; an ESM bundle has
        // no require unless we make one.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
    });
    logs.grantWrite(role);
    Validations.of(defaultPolicyOf(role)).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions; tracing needs Resource *',
    });
    this.logs = logs;
    this.serviceRole = role;
  }
}

