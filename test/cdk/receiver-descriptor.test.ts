/**
 * The receiver's descriptor output: the CLI finds a receiver, whatever its id or stack, by this
 * one output's value (receiver-descriptor.ts), and reads the configuration from the function
 * it names.
 */
import { resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { deployedConfigOf, parseReceiverDescriptor, RECEIVER_DESCRIPTOR_VERSION } from '../../lambdas/config/receiver-descriptor.ts';
import { parseShippedConfig } from '../../lambdas/config/shipped-config.ts';
import type { ReceiverDescriptor } from '../../lambdas/config/receiver-descriptor.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, synthesize } from './stack-fixture.ts';

const ACTION = { entry: new URL('../../lambdas/actions/index.ts', import.meta.url).pathname };

/** The descriptors among a template's outputs, their CloudFormation functions resolved as names. */
function descriptorsOf(template: Template): Array<{ key: string; value: unknown }> {
  const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description?: string }>;
  return Object.entries(outputs)
    .filter(([, o]) => (o.Description ?? '').startsWith('retryproof receiver'))
    .map(([key, o]) => ({ key, value: o.Value }));
}

/** Fn::Join of literal strings and references, rendered with each reference as `<Ref:Id>`. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::Join'])) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(render).join(sep);
  }
  if (typeof v.Ref === 'string') return `<Ref:${v.Ref}>`;
  if (Array.isArray(v['Fn::GetAtt'])) return `<GetAtt:${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  return `<${Object.keys(v)[0] ?? '?'}>`;
}

describe('the receiver descriptor output', () => {
  it('the app stack has one, naming its queues, table, demo ledger and the reconciler that holds its configuration', () => {
    const built = synthesize({
      demo: true,
      routes: [{ name: 'demo', signature: { scheme: 'hmac-sha256', header: 'x-signature' }, secretName: 'retryproof/demo', actionTimeSeconds: 10, action: 'payout' }],
    });
    const found = descriptorsOf(built.template);
    expect(found).toHaveLength(1);
    const descriptor = parseReceiverDescriptor(render(found[0]!.value));
    expect(descriptor).toBeDefined();
    const d = descriptor as ReceiverDescriptor;
    expect(d.retryproof).toBe(RECEIVER_DESCRIPTOR_VERSION);
    expect(d.receiver).toBe('Default');
    const reconciler = built.stack.getLogicalId(built.stack.receiver.reconcilerFunction.node.defaultChild as never);
    expect(d.configResource).toBe(reconciler);
    // The CLI reads the configuration from that resource's metadata: the one the functions bundle.
    const resources = built.template.toJSON().Resources as Record<string, { Metadata?: Record<string, unknown> }>;
    const deployed = resolveConfig(deployedConfigOf(resources[reconciler]) as RetryproofConfig);
    expect(JSON.parse(JSON.stringify(deployed))).toEqual(parseShippedConfig(built.stack.receiver.reconcilerFunction.shippedConfig).resolved);
    expect(d.ledgerTable).toMatch(/^<Ref:LedgerTable[0-9A-F]{8}>$/);
    expect(d.eventsTable).toMatch(/^<Ref:EventsTable[0-9A-F]{8}>$/);
    // The bucket of large bodies, which the CLI's tools read and keep alive (the S3 claim check).
    expect(d.bodyBucket).toBe(`<Ref:${built.stack.getLogicalId(built.stack.receiver.bodyBucket.node.defaultChild as never)}>`);
  });

  it('two receivers of one stack, one with the id Webhooks, each have their own, told apart by their path', () => {
    const app = new App({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
    const stack = new Stack(app, 'Consumer', { env: { account: '111111111111', region: 'eu-west-1' } });
    const route = (name: string) => ({ name, signature: { scheme: 'hmac-sha256' as const, header: 'x-signature' }, secretName: `consumer/${name}`, actionTimeSeconds: 10, action: 'act' });
    new WebhookReceiver(stack, 'Webhooks', { routes: [route('orders')], actions: { act: ACTION } });
    new WebhookReceiver(stack, 'Payments', { routes: [route('charges')], actions: { act: ACTION } });
    const found = descriptorsOf(Template.fromStack(stack)).map((o) => parseReceiverDescriptor(render(o.value)));
    expect(found.map((d) => d?.receiver).sort()).toEqual(['Payments', 'Webhooks']);
    expect(found.map((d) => d?.namePrefix).sort()).toEqual(['Consumer-Payments', 'Consumer-Webhooks']);
    expect(found.every((d) => d?.ledgerTable === undefined)).toBe(true);
    expect(new Set(found.map((d) => d?.configResource)).size).toBe(2);
  });

  it('parseReceiverDescriptor keeps only its own version and shape', () => {
    const good = { retryproof: 1, receiver: 'R', namePrefix: 'p', region: 'r', apiUrl: 'a', queueUrl: 'q', dlqUrl: 'd', eventsTable: 't', configResource: 'c' };
    expect(parseReceiverDescriptor(JSON.stringify(good))).toEqual(good);
    // bodyBucket is optional: a descriptor written before the S3 claim check has none.
    expect(parseReceiverDescriptor(JSON.stringify({ ...good, bodyBucket: 'b' }))).toEqual({ ...good, bodyBucket: 'b' });
    expect(parseReceiverDescriptor(JSON.stringify({ ...good, bodyBucket: 7 }))).toBeUndefined();
    expect(parseReceiverDescriptor(JSON.stringify({ ...good, retryproof: 2 }))).toBeUndefined();
    expect(parseReceiverDescriptor(JSON.stringify({ ...good, queueUrl: '' }))).toBeUndefined();
    expect(parseReceiverDescriptor('https://example.com')).toBeUndefined();
    expect(parseReceiverDescriptor('{not json')).toBeUndefined();
    expect(parseReceiverDescriptor(undefined)).toBeUndefined();
  });
});
