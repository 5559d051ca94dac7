/**
 * The CDK app: `cdk synth` / `cdk deploy` run this file on Node 24, which strips the
 * types itself. The configuration is validated here, so a mistake never deploys, and
 * cdk-nag's AwsSolutions checks run on every synth: an unacknowledged finding fails it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import { RetryproofStack } from '../lib/retryproof-stack.ts';
import { config } from '../retryproof.config.ts';

const app = new App();
new RetryproofStack(app, 'Retryproof', {
  description: 'retryproof: a webhook receiver that makes sender retries harmless',
  config,
  resolved: resolveConfig(config),
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
