/**
 * The multi-region example's CDK app: one stack per replica Region of retryproof.config.ts
 * (Retryproof-us-east-1, Retryproof-us-east-2). From the repository root:
 *   npx cdk synth --app 'node --import ./examples/self-reference.ts examples/multi-region/app.ts' -c ordersApiUrl=https://orders.example.com
 */
import { buildMultiRegionApp } from './multi-region-app.ts';

buildMultiRegionApp();
