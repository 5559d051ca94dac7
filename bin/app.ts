/**
 * The CDK app. `cdk synth` and `cdk deploy` run this file on Node 24, which strips the
 * types itself. The configuration is validated before anything is built, and cdk-nag's
 * AwsSolutions checks run on every synth: a finding not acknowledged fails it.
 */
import { createRetryproofApp } from '../lib/retryproof-app.ts';
import { config } from '../retryproof.config.ts';

createRetryproofApp(config);
