import { App, Validations } from 'aws-cdk-lib';
import type { AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ConfigError, resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { RetryproofStack } from './retryproof-stack.ts';

/** The stack's name in CloudFormation, and its construct id. */
export const STACK_NAME = 'Retryproof';

/** The CDK context key of the stage: `cdk deploy -c stage=dev`. */
export const STAGE_CONTEXT = 'stage';

/** A stage's name: it ends the stack's name and the name prefix, which allow only these. */
const STAGE = /^[a-z][a-z0-9-]{0,15}$/;

/** The stack of one stage (`Retryproof-dev`), or the app's one stack without a stage (`Retryproof`). */
export function stageStackName(stage: string | undefined): string {
  return stage === undefined ? STACK_NAME : `${STACK_NAME}-${stage}`;
}

/** The stack of one Region in a deployment of several: `Retryproof-us-east-1`, or `Retryproof-dev-us-east-1` in a stage. */
export function regionalStackName(region: string, stage?: string): string {
  return `${stageStackName(stage)}-${region}`;
}

/** How {@link createRetryproofApp} names what it builds. */
export interface RetryproofAppOptions {
  /**
   * The stage (`dev`, `prod`): one deployment of the configuration, beside others in the same
   * account and Region. It ends the stack's name (`Retryproof-dev`) and the name prefix of every
   * physical name (`<namePrefix>-dev`, by default `Retryproof-dev`), route secrets included, so
   * two stages share no name. 1 to 16 lowercase letters, digits or `-`, starting with a letter.
   * @default - the context value `stage` (`cdk deploy -c stage=dev`); without it, no stage: the
   *   stack `Retryproof` with the name prefix `namePrefix`, by default `Retryproof`
   */
  readonly stage?: string;
}

/** What {@link createRetryproofApp} built. */
export interface RetryproofApp {
  readonly app: App;
  /** The stack; with several Regions, the first replica's, which defines the global table. */
  readonly stack: RetryproofStack;
  /** Every stack, one per replica Region in the order of `regions.replicas`; with one Region, just `stack`. */
  readonly stacks: readonly RetryproofStack[];
}

const DESCRIPTION = 'retryproof: a webhook receiver that makes sender retries harmless';

/**
 * Builds the CDK app from a configuration: the stack (the receiver, and the demo when
 * asked for), with cdk-nag's AwsSolutions checks on the whole app, so any finding that is
 * not acknowledged fails synth. A bad configuration throws ConfigError here, so it never
 * deploys. bin/app.ts calls this with retryproof.config.ts; tests call it with their own.
 *
 * With `regions`, one stack per replica Region instead (`Retryproof-<region>`), all with the
 * name prefix `Retryproof` unless `namePrefix` is set: the first replica's defines the MRSC
 * global table and the route secrets, and every other stack depends on it, so
 * `cdk deploy --all` deploys it first.
 * @throws ConfigError naming the route, the field and the value
 */
export function createRetryproofApp(config: RetryproofConfig, appProps: AppProps = {}, options: RetryproofAppOptions = {}): RetryproofApp {
  const app = new App(appProps);
  const regions = resolveConfig(config).regions;
  const stage = stageOf(options.stage ?? app.node.tryGetContext(STAGE_CONTEXT));
  const stackName = stageStackName(stage);
  // In a stage, the prefix is the stage's whatever the configuration says, so that one
  // configuration deploys as several stages; without one, as before (the stack's name).
  const staged: RetryproofConfig = stage === undefined ? config : { ...config, namePrefix: `${config.namePrefix ?? STACK_NAME}-${stage}` };
  let stacks: RetryproofStack[];
  if (regions === undefined) {
    stacks = [new RetryproofStack(app, stackName, { description: DESCRIPTION, config: staged })];
  } else {
    const shared = { ...staged, namePrefix: staged.namePrefix ?? STACK_NAME };
    // An account left to the CLI's credentials (CDK_DEFAULT_ACCOUNT), unset offline: the
    // Region is what the global table and each receiver need to know at synth.
    const account = process.env.CDK_DEFAULT_ACCOUNT;
    stacks = regions.replicas.map(
      (region) =>
        new RetryproofStack(app, regionalStackName(region, stage), {
          description: `${DESCRIPTION} (${region}, one of ${regions.replicas.join(', ')})`,
          env: { region, ...(account === undefined ? {} : { account }) },
          config: shared,
        }),
    );
    const [owner, ...others] = stacks as [RetryproofStack, ...RetryproofStack[]];
    for (const stack of others) stack.addStackDependency(owner, 'the first replica Region defines the global events table and the route secrets');
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack: stacks[0] as RetryproofStack, stacks };
}

/**
 * The stage, checked, or undefined for none.
 * @throws ConfigError naming the value
 */
function stageOf(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !STAGE.test(value)) {
    throw new ConfigError(`stage must be 1 to 16 lowercase letters, digits or "-", starting with a letter, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * What bin/app.ts runs: {@link createRetryproofApp}, with a mistake in the configuration told as
 * one line on stderr (`retryproof.config.ts: route "stripe": ...`) and exit code 1. Uncaught, a
 * ConfigError would print the line of this package's source that threw it (Node shows the
 * throwing line above an uncaught error), which is no help to the user. Any other error is
 * thrown on: it is ours.
 * @param configFile the file the configuration came from, as the message names it
 * @returns the app, or undefined when the configuration was refused
 */
export function runRetryproofApp(config: RetryproofConfig, configFile = 'retryproof.config.ts', appProps: AppProps = {}): RetryproofApp | undefined {
  try {
    return createRetryproofApp(config, appProps);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${configFile}: ${err.message}\n`);
    process.exitCode = 1;
    return undefined;
  }
}
