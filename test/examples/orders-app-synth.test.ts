/**
 * The orders-app example (examples/orders-app/) as a user's CDK app: its stack synthesizes,
 * with bundling on, a receiver whose executor carries the app's own action and whose
 * reconciler carries the app's own ledger, granted on and pointed at the app's own table,
 * while retryproof's function code names none of it.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrdersStack } from '../../examples/orders-app/orders-stack.ts';
import { DYNAMODB_LEDGER_LAYOUT } from '../../lambdas/actions/index.ts';
import { CDK_JSON_CONTEXT } from '../cdk/stack-fixture.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Strings only one of the example's modules holds, to find again in the bundles. */
const PLACE_ORDER_MARK = 'the orders API refused the order';
/** A string only the orders ledger holds (its entry id of an order); the ledger itself is the package's DynamoDbLedger. */
const ORDERS_LEDGER_MARK = 'orders ledger: an entry names the order it books';
/** A string of the ledger's cancel call, which its reverse makes. */
const CANCEL_ORDER_MARK = 'the orders API did not cancel';
/** A string of the demo's payout action, which this app does not use. */
const DEMO_PAYOUT_MARK = 'simulated permanent error';

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
}

describe('the orders-app example app', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'orders-app-synth-'));
  let stack: OrdersStack;
  let template: Template;
  let assemblyDir: string;
  const logicalId = (construct: IConstruct): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);

  beforeAll(() => {
    // Prepare: the app as app.ts builds it, with every stack's assets bundled by esbuild.
    const app = new App({ outdir, context: CDK_JSON_CONTEXT });
    stack = new OrdersStack(app, 'OrdersApp', { ordersApiUrl: 'https://orders.example.test' });
    // Act
    const assembly = app.synth();
    assemblyDir = assembly.directory;
    template = Template.fromJSON(assembly.getStackByName('OrdersApp').template as Record<string, unknown>);
  });

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  /** The bundled code of a function, from its asset folder. */
  const bundleOf = (construct: IConstruct): string => {
    const fn = template.findResources('AWS::Lambda::Function')[logicalId(construct)] as { Properties: { Code: { S3Key: string } } };
    return readFileSync(join(assemblyDir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'), 'utf8');
  };

  /** Every action the role's policies allow on the table (its ARN or its indexes). */
  const actionsOnTable = (role: IConstruct, table: IConstruct): string[] => {
    const roleRef = JSON.stringify({ Ref: logicalId(role) });
    const tableId = logicalId(table);
    const actions: string[] = [];
    for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
      const props = (policy as { Properties: { Roles: unknown[]; PolicyDocument: { Statement: Statement[] } } }).Properties;
      if (!props.Roles.some((r) => JSON.stringify(r) === roleRef)) continue;
      for (const statement of props.PolicyDocument.Statement) {
        if (JSON.stringify(statement.Resource).includes(`"${tableId}"`)) actions.push(...[statement.Action].flat());
      }
    }
    return [...new Set(actions)].sort();
  };

  it("creates the app's own ledger table with retryproof's LedgerTable: keyed by entryId, with the byHour index DynamoDbLedger reads", () => {
    const { partitionKey, byHourIndex } = DYNAMODB_LEDGER_LAYOUT;
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: byHourIndex.name,
          KeySchema: [
            { AttributeName: byHourIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: byHourIndex.sortKey, KeyType: 'RANGE' },
          ],
        },
      ],
    });
    expect(logicalId(stack.ledgerTable)).toMatch(/^OrdersLedger/);
  });

  it('grants the executor PutItem on the ledger (it books orders), and the reconciler Query, GetItem and UpdateItem (it reverses them)', () => {
    const { executorFunction, reconcilerFunction } = stack.receiver;
    expect(actionsOnTable(executorFunction.serviceRole, stack.ledgerTable)).toEqual(['dynamodb:PutItem']);
    expect(actionsOnTable(reconcilerFunction.serviceRole, stack.ledgerTable)).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(actionsOnTable(stack.receiver.ingestFunction.serviceRole, stack.ledgerTable)).toEqual([]);
  });

  it('sets ORDERS_LEDGER_TABLE and ORDERS_API_URL on the executor and the reconciler (whose reversal cancels an order), neither on the ingest', () => {
    const functions = template.findResources('AWS::Lambda::Function') as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> } } }
    >;
    const variablesOf = (construct: IConstruct) => functions[logicalId(construct)]?.Properties.Environment.Variables;
    const table = { Ref: logicalId(stack.ledgerTable) };
    expect(variablesOf(stack.receiver.executorFunction)).toMatchObject({ ORDERS_LEDGER_TABLE: table, ORDERS_API_URL: 'https://orders.example.test' });
    expect(variablesOf(stack.receiver.reconcilerFunction)).toMatchObject({ ORDERS_LEDGER_TABLE: table, ORDERS_API_URL: 'https://orders.example.test' });
    expect(variablesOf(stack.receiver.ingestFunction)).not.toHaveProperty('ORDERS_LEDGER_TABLE');
    expect(variablesOf(stack.receiver.ingestFunction)).not.toHaveProperty('ORDERS_API_URL');
  });

  it("bundles place-order.ts into the executor and orders-ledger.ts into the reconciler, and nothing of the demo's", () => {
    const executor = bundleOf(stack.receiver.executorFunction);
    const reconciler = bundleOf(stack.receiver.reconcilerFunction);
    expect(executor).toContain(PLACE_ORDER_MARK);
    expect(executor).toContain(ORDERS_LEDGER_MARK); // the action posts through the ledger module
    expect(reconciler).toContain(ORDERS_LEDGER_MARK);
    expect(reconciler).toContain(CANCEL_ORDER_MARK);
    expect(reconciler).not.toContain(PLACE_ORDER_MARK);
    expect(executor).not.toContain(DEMO_PAYOUT_MARK);
  });

  it('outputs the webhook URL of the orders route and the ledger table name', () => {
    const outputs = template.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['OrdersWebhookUrl', 'OrdersLedgerTableName']));
    expect(JSON.stringify(outputs.OrdersWebhookUrl?.Value)).toContain('/webhooks/orders');
  });

  it("leaves retryproof's function code knowing nothing of the example (no 'orders' or 'placeOrder' under lambdas/)", () => {
    const lambdas = join(REPO, 'lambdas');
    const hits: string[] = [];
    for (const file of readdirSync(lambdas, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      readFileSync(join(lambdas, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/orders|placeOrder|ORDERS_/.test(line)) hits.push(`${relative(REPO, join(lambdas, file))}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
  });
});
