/**
 * The CDK app. `cdk synth` and `cdk deploy` run this file on Node 24, which strips the
 * types itself. The configuration is validated before anything is built (a mistake is one
 * line on stderr and exit code 1), and cdk-nag's AwsSolutions checks run on every synth: a
 * finding not acknowledged fails it.
 *
 * The stage comes from the context: `cdk deploy -c stage=dev` deploys the stack
 * `Retryproof-dev`, whose every physical name starts with `Retryproof-dev`.
 */
import { runRetryproofApp } from '../lib/retryproof-app.ts';
import { config } from '../retryproof.config.ts';

runRetryproofApp(config);
