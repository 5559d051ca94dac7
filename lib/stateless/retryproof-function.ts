import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validations } from 'aws-cdk-lib';
import type { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SHIPPED_CONFIG_DEFINE } from '../../lambdas/config/shipped-config.ts';
import { S3_SDK_BUNDLE_FILE, S3_SDK_FILE_DEFINE } from '../../lambdas/store/s3-sdk-file.ts';
import { logRetention } from '../log-retention.ts';
import { defaultPolicyOf } from '../nag.ts';

/**
 * The handler code: lambdas/ beside lib/, in this repository (TypeScript) and in the
 * installed package (dist/, JavaScript) alike.
 */
const LAMBDAS_DIR = fileURLToPath(new URL('../../lambdas/', import.meta.url));
/** `.ts` when this construct runs from its sources, `.js` when it runs compiled. */
const SOURCE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/**
 * Code in this repository that imports the package by its name (the examples, the template
 * action: `from 'retryproof/actions'`) gets its sources when the construct runs from its
 * sources: the package's "exports" name dist/, which a checkout has not built. esbuild's
 * `--alias` substitutes an import path before resolving it. Installed, the construct runs
 * compiled (`.js`), and a user's `retryproof` is the installed package's own.
 */
const SELF_REFERENCE_ALIASES: Readonly<Record<string, string>> | undefined =
  SOURCE_EXTENSION === '.ts'
    ? {
        '--alias:retryproof/actions': join(LAMBDAS_DIR, 'actions', 'index.ts'),
        '--alias:retryproof': fileURLToPath(new URL('../index.ts', import.meta.url)),
      }
    : undefined;

/** The absolute path of a handler file under lambdas/, e.g. `lambdaEntry('ingest/handler')`. */
export function lambdaEntry(path: string): string {
  return join(LAMBDAS_DIR, `${path}${SOURCE_EXTENSION}`);
}

/**
 * esbuild's project root: the nearest folder above this file with a package-lock.json.
 * In this repository that is its root; installed under a user's node_modules, it is the
 * user's project, whose node_modules hold the packages the handlers import.
 */
function projectRoot(): { readonly projectRoot: string; readonly depsLockFilePath: string } | undefined {
  for (let dir = fileURLToPath(new URL('.', import.meta.url)); ; dir = dirname(dir)) {
    const lock = join(dir, 'package-lock.json');
    if (existsSync(lock)) return { projectRoot: dir, depsLockFilePath: lock };
    if (dirname(dir) === dir) return undefined;
  }
}

/** The esbuild binary NodejsFunction itself runs: the project's, else the one on the PATH. */
function esbuildBinary(): string {
  const root = projectRoot()?.projectRoot ?? process.cwd();
  try {
    return createRequire(join(root, 'package.json')).resolve('esbuild/bin/esbuild');
  } catch {
    return 'esbuild';
  }
}

/** The command that writes the S3 SDK's own file beside the bundle (why: docs/architecture.md#large-bodies-off-the-cold-path). */
function s3SdkBundleCommand(outputDir: string): string {
  const banner = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";
  const args = ['--bundle', '--minify', '--format=esm', '--platform=node', '--target=node24', '--main-fields=module,main', '--log-level=error'];
  const build = [`"${esbuildBinary()}"`, `"${lambdaEntry('store/s3-sdk')}"`, ...args, `"--banner:js=${banner}"`, `"--outfile=${join(outputDir, S3_SDK_BUNDLE_FILE)}"`];
  // Only a bundle that imports it gets it: the route secrets' handler never reads a body.
  return `if grep -q '"./${S3_SDK_BUNDLE_FILE}"' "${join(outputDir, 'index.mjs')}"; then ${build.join(' ')}; fi`;
}

/**
 * Where entries generated at synth are written: esbuild bundles only entries under its
 * project root, so under that root's node_modules/.cache, where build tools keep theirs.
 */
export function generatedEntriesDir(): string {
  return join(projectRoot()?.projectRoot ?? process.cwd(), 'node_modules', '.cache', 'retryproof-entries');
}

/** Props of {@link RetryproofFunction}. */
export interface RetryproofFunctionProps {
  /** The handler's entry file, an absolute path: {@link lambdaEntry}, or a generated entry. */
  readonly entry: string;
  /** What the function does, for the console. */
  readonly description: string;
  readonly timeout: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  /**
   * Concurrency reserved for the function: both its ceiling and a floor no other function of the
   * account can take. @default - none: the function shares the account's unreserved pool
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Active X-Ray tracing (the configuration's `tracing`). Off, the function has no tracing
   * config (Lambda's PassThrough, and nothing upstream of ours traces: an HTTP API cannot) and
   * its role no X-Ray permissions. @default false
   */
  readonly tracing?: boolean;
  /** Days the function's log group keeps its logs. Must be a CloudWatch Logs retention. */
  readonly logRetentionDays: number;
  /** Environment beyond the shared defaults (NODE_OPTIONS, POWERTOOLS_*). @default - none */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * The configuration the function reads at cold start, as JSON (lib/stateless/shipped-config.ts),
   * written into its bundle rather than its environment. @default - none: the bundle carries none
   */
  readonly shippedConfig?: string;
  /**
   * Powertools' service name, the `service` key of every log line and the `service`
   * dimension of every metric. The handlers pass the same name from the metric catalogue
   * (SERVICE), which wins; the variable keeps the two from telling different stories.
   * @default 'retryproof'
   */
  readonly serviceName?: string;
  /** The CloudWatch namespace its metrics go to: its receiver's (ReceiverMetrics), so its alarms read them. */
  readonly metricNamespace: string;
}

/**
 * A retryproof Lambda function: every default the three functions share lives here.
 * nodejs24.x on arm64, an ESM bundle built by the local esbuild (no Docker) with the
 * AWS SDK inside it, source maps on, X-Ray active when asked, its own log group with a set
 * retention, and its own role that may write to that log group and nothing else until
 * the stack grants it more.
 */
export class RetryproofFunction extends NodejsFunction {
  /** The function's log group, created with it so its retention is ours to set. */
  readonly logs: ILogGroup;
  /** The function's own role; every grant to the function lands in its default policy. */
  readonly serviceRole: Role;
  /** The configuration JSON its bundle carries, as {@link RetryproofFunctionProps.shippedConfig} gave it. */
  readonly shippedConfig: string | undefined;

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
      entry: props.entry,
      // Without a lock file above us, NodejsFunction looks for one from the current directory.
      ...projectRoot(),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      ...(props.reservedConcurrentExecutions === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      timeout: props.timeout,
      tracing: props.tracing === true ? Tracing.ACTIVE : Tracing.DISABLED,
      logGroup: logs,
      role,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'retryproof',
        POWERTOOLS_METRICS_NAMESPACE: props.metricNamespace,
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
        // The configuration as a string literal in the code (esbuild passes it on its command
        // line, where Linux allows one argument 128 KiB: some 590 routes like the shipped one, past CloudFormation's 500 resources).
        define: {
          [S3_SDK_FILE_DEFINE]: JSON.stringify(`./${S3_SDK_BUNDLE_FILE}`),
          ...(props.shippedConfig === undefined ? {} : { [SHIPPED_CONFIG_DEFINE]: JSON.stringify(props.shippedConfig) }),
        },
        commandHooks: { beforeBundling: () => [], beforeInstall: () => [], afterBundling: (_input, output) => [s3SdkBundleCommand(output)] },
        ...(SELF_REFERENCE_ALIASES === undefined ? {} : { esbuildArgs: SELF_REFERENCE_ALIASES }),
      },
    });
    logs.grantWrite(role);
    if (props.tracing === true) {
      Validations.of(defaultPolicyOf(role)).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions; tracing needs Resource *',
      });
    }
    this.logs = logs;
    this.serviceRole = role;
    this.shippedConfig = props.shippedConfig;
  }
}

