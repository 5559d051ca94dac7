/**
 * The secret every doc tells people to put a value into (`aws secretsmanager put-secret-value
 * --secret-id NAME`) is one a synthesized template ensures, under that very name; and a command
 * with `--region` names the Region whose stack makes it, since a replica is read-only. The
 * templates are the real ones: the shipped app without a stage and in the stages the docs use,
 * and the multi-region example app.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildMultiRegionApp } from '../../examples/multi-region/multi-region-app.ts';
import { createRetryproofApp } from '../../lib/retryproof-app.ts';
import type { RetryproofApp } from '../../lib/retryproof-app.ts';
import { config } from '../../retryproof.config.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, ensuredSecretsOf } from '../cdk/stack-fixture.ts';
import { allDocs } from './doc-files.ts';

/** One `put-secret-value` command of a doc. */
interface PutCommand {
  readonly doc: string;
  readonly secretId: string;
  readonly region: string | undefined;
}

/** Every `aws secretsmanager put-secret-value` in `text`, its lines joined where they end in `\`. */
function putCommandsIn(doc: string, text: string): PutCommand[] {
  const joined = text.replace(/\\\n\s*/g, ' ');
  return [...joined.matchAll(/aws secretsmanager put-secret-value\b[^\n]*/g)].map(([line]) => ({
    doc,
    secretId: /--secret-id\s+(\S+)/.exec(line)?.[1] ?? '',
    region: /--region\s+(\S+)/.exec(line)?.[1],
  }));
}

/** The repository's docs and each example's README. */
function docsWithExamples(): { path: string; text: string }[] {
  const examples = readdirSync(new URL('../../examples/', import.meta.url), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `examples/${entry.name}/README.md`);
  return [...allDocs(), ...examples.map((path) => ({ path, text: readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8') }))];
}

/** Each secret the app's templates ensure, with the Region of the stack that makes it (undefined: the stack has none). */
function ensuredBy(built: RetryproofApp): { name: string; region: string | undefined }[] {
  const assembly = built.app.synth();
  return built.stacks.flatMap((stack) =>
    [...ensuredSecretsOf(Template.fromJSON(assembly.getStackByName(stack.stackName).template as Record<string, unknown>)).values()].map((props) => ({
      name: props.SecretName,
      region: stack.region.startsWith('${Token') ? undefined : stack.region,
    })),
  );
}

describe('the secret names the docs tell people to put', () => {
  const ensured: { name: string; region: string | undefined }[] = [];
  const commands = docsWithExamples().flatMap(({ path, text }) => putCommandsIn(path, text));

  beforeAll(() => {
    const context = { ...CDK_JSON_CONTEXT, ...NO_BUNDLING };
    for (const stage of [undefined, 'dev', 'prod']) {
      ensured.push(...ensuredBy(createRetryproofApp(config, { context: stage === undefined ? context : { ...context, stage } })));
    }
    ensured.push(...ensuredBy(buildMultiRegionApp({ context: { ...context, ordersApiUrl: 'https://orders.example.test' } })));
  }, 240_000);

  it('finds the commands in the README, the deploy page, the operating guide, the several-Regions page and the multi-region example', () => {
    expect(new Set(commands.map((c) => c.doc))).toEqual(
      new Set(['README.md', 'docs/deploying.md', 'docs/operating.md', 'docs/several-regions.md', 'examples/multi-region/README.md']),
    );
    for (const command of commands) expect(command.secretId, command.doc).not.toBe('');
  });

  it('names, in each command, a secret a template ensures, in the Region whose stack makes it', () => {
    const wrong = commands.filter(
      (c) => !ensured.some((e) => e.name === c.secretId && (c.region === undefined || e.region === c.region)),
    );
    expect(wrong.map((c) => `${c.doc}: --secret-id ${c.secretId}${c.region === undefined ? '' : ` --region ${c.region}`}`)).toEqual([]);
  });

  it('would catch the name without the prefix, and the replica Region', () => {
    const names = (text: string) => putCommandsIn('x', text).filter((c) => !ensured.some((e) => e.name === c.secretId && (c.region === undefined || e.region === c.region)));
    expect(names("aws secretsmanager put-secret-value --region us-east-1 --secret-id multi-region/orders --secret-string 'w'")).toHaveLength(1);
    expect(names("aws secretsmanager put-secret-value --region us-east-2 --secret-id Retryproof/multi-region/orders --secret-string 'w'")).toHaveLength(1);
    expect(names("aws secretsmanager put-secret-value --region us-east-1 --secret-id Retryproof/multi-region/orders --secret-string 'w'")).toHaveLength(0);
  });
});
