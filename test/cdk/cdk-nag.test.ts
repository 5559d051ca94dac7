import { App, Stack, Validations } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import { config } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, withOwnAction } from './stack-fixture.ts';

const context = { ...CDK_JSON_CONTEXT, ...NO_BUNDLING };

/** A stack that breaks two AwsSolutions rules: a queue with no DLQ (SQS3) that allows plain HTTP (SQS4). */
function bareQueueApp(acknowledge: readonly string[]): App {
  const app = new App({ context });
  const stack = new Stack(app, 'Bare');
  const queue = new Queue(stack, 'Queue', { encryption: QueueEncryption.SQS_MANAGED });
  for (const id of acknowledge) {
    Validations.of(queue).acknowledge({ id, reason: 'test: this acknowledgement is what the test is about' });
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return app;
}

/** The message of what `act` threw; the empty string when it threw nothing. */
function thrownMessage(act: () => unknown): string {
  try {
    act();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}

describe('cdk-nag AwsSolutions checks', () => {
  it('fail synth on an unacknowledged finding, naming the rule and the resource', () => {
    // Prepare: a non-compliant queue, nothing acknowledged. Act and assess: synth throws.
    const message = thrownMessage(() => bareQueueApp([]).synth());
    expect(message).toContain('AwsSolutions-SQS3');
    expect(message).toContain('AwsSolutions-SQS4');
    expect(message).toContain('Bare/Queue/Resource');
  });

  it('still fail synth when only one of two findings is acknowledged', () => {
    const message = thrownMessage(() => bareQueueApp(['AwsSolutions-SQS3']).synth());
    expect(message).toContain('AwsSolutions-SQS4');
    expect(message).not.toContain('AwsSolutions-SQS3');
  });

  it('pass synth once every finding is acknowledged, one finding at a time', () => {
    expect(() => bareQueueApp(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']).synth()).not.toThrow();
  });

  it('pass on the retryproof app built from retryproof.config.ts', () => {
    const { app } = createRetryproofApp(config, { context });
    const assembly = app.synth();
    expect(assembly.getStackByName('Retryproof').template).toHaveProperty('Resources');
  });

  it('pass on the retryproof app with the demo off, an imported secret and an alarm e-mail', () => {
    const variant: RetryproofConfig = { ...withOwnAction(config, { importSecret: true }), alarmEmail: 'ops@example.com' };
    const { app } = createRetryproofApp(variant, { context });
    expect(() => app.synth()).not.toThrow();
  });

  it('run inside the retryproof app: a resource added without an acknowledgement fails its synth', () => {
    const { app, stack } = createRetryproofApp(config, { context });
    new Queue(stack, 'Unacknowledged', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    const message = thrownMessage(() => app.synth());
    expect(message).toContain('AwsSolutions-SQS3');
    expect(message).toContain('Retryproof/Unacknowledged/Resource');
    // Only the added queue is reported: everything retryproof builds is acknowledged.
    expect(message.match(/^ERROR /gm)).toHaveLength(1);
  });
});
