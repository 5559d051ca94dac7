/**
 * Builds the retryproof app the way bin/app.ts does (cdk-nag included) for CDK tests,
 * and reads its template. esbuild bundling is skipped by default: these tests are about
 * the template, and test/cdk/cdk-synth.test.ts bundles for real through the CLI.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofApp } from '../../lib/retryproof-app.ts';

/** CDK's switch to bundle no stack's assets (NodejsFunction then skips esbuild). */
export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] as string[] };

/** cdk.json's feature flags, which `cdk synth` applies and a bare `new App()` would not. */
export const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;

export interface SynthesizedApp extends RetryproofApp {
  readonly template: Template;
}

/** Builds and synthesizes the app; cdk-nag runs, so any unacknowledged finding throws here. */
export function synthesize(config: RetryproofConfig, options: { bundling?: boolean } = {}): SynthesizedApp {
  const context = { ...CDK_JSON_CONTEXT, ...(options.bundling === true ? {} : NO_BUNDLING) };
  const built = createRetryproofApp(config, { context });
  return { ...built, template: Template.fromStack(built.stack) };
}

/**
 * The logical id of the CloudFormation resource behind the construct at `path`: a path in
 * the stack (`Ledger/Table`), or in its receiver (`Events/Table`, under the id `Default`).
 */
export function logicalIdOf(built: RetryproofApp, path: string): string {
  const first = path.split('/')[0]!;
  const construct = built.stack.node.tryFindChild(first) ?? built.stack.receiver.node.findChild(first);
  const target = path.split('/').slice(1).reduce((node, id) => node.node.findChild(id), construct);
  const cfn = target.node.defaultChild as CfnElement | undefined;
  if (cfn === undefined) throw new Error(`${path} has no default child`);
  return built.stack.getLogicalId(cfn);
}

/** One allowed action on one resource, as a policy grants it. */
export interface Grant {
  readonly action: string;
  /**
   * The resource: `*`, the logical id of the resource whose ARN (or Ref) it is, that id with
   * a suffix such as `/index/*`, or else the JSON of the CloudFormation expression.
   */
  readonly resource: string;
}

/** Every Allow of every AWS::IAM::Policy attached to the role at `rolePath`, one action and resource at a time. */
export function grantsOf(built: SynthesizedApp, rolePath: string): Grant[] {
  const roleRef = JSON.stringify({ Ref: logicalIdOf(built, rolePath) });
  const grants: Grant[] = [];
  for (const policy of Object.values(built.template.findResources('AWS::IAM::Policy'))) {
    const props = (policy as { Properties: { Roles: unknown[]; PolicyDocument: { Statement: Statement[] } } }).Properties;
    if (!props.Roles.some((r) => JSON.stringify(r) === roleRef)) continue;
    for (const statement of props.PolicyDocument.Statement) {
      if (statement.Effect !== 'Allow') throw new Error(`unexpected ${statement.Effect} statement`);
      for (const action of [statement.Action].flat()) {
        for (const resource of [statement.Resource].flat()) grants.push({ action, resource: resourceKey(resource) });
      }
    }
  }
  return grants;
}

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

function resourceKey(resource: unknown): string {
  if (resource === '*') return '*';
  const r = resource as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]] };
  if (typeof r.Ref === 'string') return r.Ref;
  if (r['Fn::GetAtt']?.[1] === 'Arn') return r['Fn::GetAtt'][0];
  const join = r['Fn::Join'];
  if (join?.[0] === '' && join[1].length === 2 && typeof join[1][1] === 'string') {
    return resourceKey(join[1][0]) + join[1][1];
  }
  return JSON.stringify(resource);
}

/** One widget of a CloudWatch dashboard body, as the console stores it. */
export interface DashboardWidget {
  readonly type: string;
  readonly width: number;
  readonly height: number;
  readonly properties: {
    readonly title?: string;
    readonly markdown?: string;
    readonly metrics?: readonly (readonly unknown[])[];
    readonly alarms?: readonly string[];
    readonly setPeriodToTimeRange?: boolean;
    readonly annotations?: { readonly horizontal?: readonly { readonly value: number; readonly label?: string }[] };
  };
}

/**
 * The widgets of the dashboard at `path`. Its body is one `Fn::Join` of JSON text and
 * references; each reference sits inside a JSON string, so it is written in as
 * `<Ref LogicalId>` or `<GetAtt LogicalId.Attribute>` and the text parses as JSON.
 */
export function dashboardWidgets(built: SynthesizedApp, path: string): DashboardWidget[] {
  const dashboard = built.template.findResources('AWS::CloudWatch::Dashboard')[logicalIdOf(built, path)] as
    | { Properties: { DashboardBody: { 'Fn::Join': [string, unknown[]] } } }
    | undefined;
  if (dashboard === undefined) throw new Error(`${path} is not a dashboard`);
  const [separator, parts] = dashboard.Properties.DashboardBody['Fn::Join'];
  const text = parts.map((part) => (typeof part === 'string' ? part : referenceText(part))).join(separator);
  return (JSON.parse(text) as { widgets: DashboardWidget[] }).widgets;
}

function referenceText(part: unknown): string {
  const r = part as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (typeof r.Ref === 'string') return `<Ref ${r.Ref}>`;
  if (r['Fn::GetAtt'] !== undefined) return `<GetAtt ${r['Fn::GetAtt'].join('.')}>`;
  throw new Error(`unexpected reference in a dashboard body: ${JSON.stringify(part)}`);
}

/** The action a demo-off variant's routes name: a team's own module (test/support/fixtures). */
export const OWN_ACTION = 'notify';

/** `config` with the demo off and every route on a team's own action, {@link OWN_ACTION}. */
export function withOwnAction(config: RetryproofConfig, route: Partial<RetryproofConfig['routes'][number]> = {}): RetryproofConfig {
  return {
    ...config,
    demo: false,
    actions: { [OWN_ACTION]: { entry: fileURLToPath(new URL('../support/fixtures/notify-action.ts', import.meta.url)) } },
    routes: config.routes.map((r) => ({ ...r, ...route, action: OWN_ACTION })),
  };
}

/** Runs `act` and returns what it threw; fails the test if it threw nothing. */
export function thrownBy(act: () => unknown): Error {
  try {
    act();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw, got none');
}

/** The logical id prefix of the function behind the route secrets' custom resource (lib/stateful/route-secrets.ts). */
export const SECRET_HANDLER_ID = 'SecretsEnsureHandler';

/** Each ensured route secret's properties, as Custom::RetryproofRouteSecret carries them, by logical id. */
export function ensuredSecretsOf(template: Template): Map<string, { SecretName: string; Description: unknown; ReplicaRegions?: string[] }> {
  const found = template.findResources('Custom::RetryproofRouteSecret') as Record<string, { Properties: Record<string, unknown> }>;
  return new Map(Object.entries(found).map(([id, r]) => [id, r.Properties as { SecretName: string; Description: unknown; ReplicaRegions?: string[] }]));
}
