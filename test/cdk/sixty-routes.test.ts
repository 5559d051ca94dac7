/**
 * Scale (issue 43): a receiver of 60 routes, 20 of them on queues of their own, synthesizes with
 * cdk-nag's AwsSolutions checks clean, within CloudFormation's quotas, and with every function's
 * environment under Lambda's 4 KB; the configuration the environment can no longer hold is in
 * the functions' code.
 *
 * CloudFormation: 500 resources a template, and 1 MB of template body from an S3 object
 * (CloudFormation User Guide, "Understand CloudFormation quotas",
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html;
 * aws-cdk-lib checks the same 1,000,000 bytes, TEMPLATE_BODY_MAXIMUM_SIZE in core/lib/stack.ts).
 * Lambda: "Function environment variables: 4 KB, for all environment variables associated with
 * the function, in aggregate" (Lambda Developer Guide, "Lambda quotas",
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseShippedConfig } from '../../lambdas/config/shipped-config.ts';
import type { RetryproofConfig, RouteConfig } from '../../lambdas/config/route-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofApp } from '../../lib/retryproof-app.ts';
import { config as shipped } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING } from './stack-fixture.ts';

const ROUTES = 60;
const OWN_QUEUES = 20;
const CLOUDFORMATION_MAX_RESOURCES = 500;
const CLOUDFORMATION_MAX_TEMPLATE_BYTES = 1_000_000;
const LAMBDA_MAX_ENVIRONMENT_BYTES = 4 * 1024;
/**
 * What a reference in a variable (the table's name, the queue's URL, the bucket's name) may
 * hold once deployed, counted at more than its longest: a queue URL is at most about 150 bytes
 * (`https://sqs.<region>.amazonaws.com.cn/<account>/` and an 80-character name).
 */
const REFERENCE_BYTES = 256;

/** Tenants of one sender, like the shipped `stripe` route; the first 20 on queues of their own. */
function sixtyRoutes(): RetryproofConfig {
  const [stripe] = shipped.routes as [RouteConfig];
  const routes = Array.from({ length: ROUTES }, (_, i): RouteConfig => {
    const name = `tenant-${String(i).padStart(2, '0')}`;
    return { ...stripe, name, secretName: name, ...(i < OWN_QUEUES ? { ownQueue: true } : {}) };
  });
  return { ...shipped, routes };
}

/** A function's variables as Lambda counts them: names and values, serialized, each reference at {@link REFERENCE_BYTES}. */
function environmentBytes(variables: Readonly<Record<string, unknown>>): number {
  const counted = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : 'x'.repeat(REFERENCE_BYTES)]));
  return Buffer.byteLength(JSON.stringify(counted), 'utf8');
}

describe('a receiver of 60 routes, 20 of them on queues of their own', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'retryproof-sixty-'));
  let built: RetryproofApp;
  let template: { Resources: Record<string, { Type: string; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }> };
  let templateBytes: number;

  beforeAll(() => {
    // Prepare and act: the app as bin/app.ts builds it, cdk-nag included; an unacknowledged finding throws here.
    built = createRetryproofApp(sixtyRoutes(), { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING }, outdir });
    const stack = built.app.synth().getStackByName(built.stack.stackName);
    template = stack.template as typeof template;
    // The file cdk deploy uploads, as written.
    templateBytes = statSync(stack.templateFullPath).size;
  });

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesizes with the AwsSolutions checks clean, its 20 route queues and their event sources in it', () => {
    const count = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    // The shared queue, the DLQ and the 20 routes' own; an event source on each work queue.
    expect(count('AWS::SQS::Queue')).toBe(2 + OWN_QUEUES);
    expect(count('AWS::Lambda::EventSourceMapping')).toBe(1 + OWN_QUEUES);
  });

  it('declares fewer resources than CloudFormation\'s 500 a template', () => {
    expect(Object.keys(template.Resources).length).toBeLessThan(CLOUDFORMATION_MAX_RESOURCES);
  });

  it('writes a template under CloudFormation\'s 1,000,000 bytes from S3', () => {
    expect(templateBytes).toBeLessThan(CLOUDFORMATION_MAX_TEMPLATE_BYTES);
  });

  it('keeps every function\'s environment under Lambda\'s 4 KB, names and values together', () => {
    const functions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(3);
    for (const [id, fn] of functions) {
      expect(environmentBytes(fn.Properties?.Environment?.Variables ?? {}), id).toBeLessThan(LAMBDA_MAX_ENVIRONMENT_BYTES);
    }
  });

  it('carries the whole configuration in each function\'s code instead: 60 routes, and the 20 route queues\' names', () => {
    const { receiver } = built.stack;
    for (const fn of [receiver.ingestFunction, receiver.executorFunction, receiver.reconcilerFunction]) {
      const carried = parseShippedConfig(fn.shippedConfig);
      expect(carried.resolved.routes).toHaveLength(ROUTES);
      expect(Object.keys(carried.routeQueueNames)).toHaveLength(OWN_QUEUES);
      expect(Buffer.byteLength(fn.shippedConfig ?? '')).toBeGreaterThan(LAMBDA_MAX_ENVIRONMENT_BYTES);
    }
  });
});
