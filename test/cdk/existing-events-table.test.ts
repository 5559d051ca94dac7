/**
 * Adopting the events table a `cdk destroy` retained: with `existingEventsTable` the receiver
 * creates no table, and grants, configures, describes and watches the one it was given.
 */
import { App, Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { EVENTS_TABLE } from '../../lambdas/store/table-schema.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import { WebhookReceiver } from '../../lib/webhook-receiver.ts';
import { config } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, grantsOf, synthesize, thrownBy } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

const KEPT = 'Retryproof-EventsTable4B7491D3-1A2B3C4D5E6F';
const KEPT_ARN = `arn:aws:dynamodb:eu-west-1:111111111111:table/${KEPT}`;

/** The JSON of what a policy names for the kept table: its ARN, written by CloudFormation from the name. */
function tableArnIn(resource: string): boolean {
  return resource.includes(`:table/${KEPT}`);
}

describe('a receiver given existingEventsTable', () => {
  let built: SynthesizedApp;

  beforeAll(() => {
    built = synthesize({ ...config, existingEventsTable: KEPT });
  });

  it('creates no table', () => {
    built.template.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
    built.template.resourceCountIs('AWS::DynamoDB::Table', 0);
  });

  it('grants each function its item actions on the kept table and Query on exactly its byTime and parked indexes', () => {
    const ingest = grantsOf(built, 'IngestRole').filter((g) => g.action.startsWith('dynamodb:'));
    expect(ingest.map((g) => g.action).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(ingest.every((g) => tableArnIn(g.resource) && !g.resource.includes('/index/'))).toBe(true);
    const queries = grantsOf(built, 'ReconcilerRole').filter((g) => g.action === 'dynamodb:Query');
    expect(queries.map((g) => g.resource.match(/\/index\/(\w+)/)?.[1]).sort()).toEqual([EVENTS_TABLE.byTimeIndex.name, EVENTS_TABLE.parkedIndex.name].sort());
    expect(queries.every((g) => tableArnIn(g.resource))).toBe(true);
    for (const role of ['IngestRole', 'ExecutorRole', 'ReconcilerRole']) {
      expect(grantsOf(built, role).filter((g) => g.action.startsWith('dynamodb:') && !tableArnIn(g.resource))).toEqual([]);
    }
  });

  it('hands every function the kept table\'s name, and names it in the receiver descriptor', () => {
    for (const fn of [built.stack.receiver.ingestFunction, built.stack.receiver.executorFunction, built.stack.receiver.reconcilerFunction]) {
      const resolved = built.stack.resolve((fn.node.defaultChild as unknown as { environment: unknown }).environment) as { variables: Record<string, unknown> };
      expect(resolved.variables.RETRYPROOF_EVENTS_TABLE).toBe(KEPT);
    }
    const descriptor = Object.values(built.template.findOutputs('*')).find((o: { Description?: string }) => o.Description?.startsWith('retryproof receiver') === true);
    expect(JSON.stringify(descriptor?.Value)).toContain(`\\"eventsTable\\":\\"${KEPT}\\"`);
  });

  it('takes the table by ARN as well', () => {
    const byArn = createRetryproofApp({ ...config, existingEventsTable: KEPT_ARN }, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } });
    expect(byArn.stack.resolve(byArn.stack.receiver.table.tableName)).toBe(KEPT);
    expect(byArn.stack.resolve(byArn.stack.receiver.table.tableArn)).toBe(KEPT_ARN);
  });

  it('refuses, at synth, an ARN in another Region than the stack\'s', () => {
    const stack = new Stack(new App({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } }), 'Shop', { env: { account: '111111111111', region: 'eu-west-2' } });
    const { demo: _demo, actions, ...rest } = config;
    const err = thrownBy(() => new WebhookReceiver(stack, 'Receiver', { ...rest, actions: actions ?? {}, existingEventsTable: KEPT_ARN }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`existingEventsTable: ${KEPT_ARN} is in eu-west-1, not in this stack's Region eu-west-2; a receiver reads its table in its own Region`);
  });

  it('refuses, at synth, any table with several Regions: each Region finds the global table by its name', () => {
    const withRegions: RetryproofConfig = {
      ...config,
      namePrefix: 'shop',
      regions: { replicas: ['eu-west-1', 'eu-west-2', 'eu-west-3'] },
      existingEventsTable: KEPT,
    };
    const err = thrownBy(() => createRetryproofApp(withRegions, { context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING } }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^existingEventsTable: .* cannot be adopted with several Regions; .*shop-events/);
  });

  it('refuses a value that is neither a table name nor a table ARN', () => {
    const err = thrownBy(() => synthesize({ ...config, existingEventsTable: 'arn:aws:s3:::bucket' }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain('existingEventsTable must be a DynamoDB table name');
  });
});
