/**
 * A route secret's life across deploys, as far as a synth can show it: removing a route and
 * adding it back, renaming a route with its secretName kept, and a destroy then a deploy, each
 * find the secret by its name and need no name hunting. The deploy-time behaviour (adopting a
 * secret of that name) is the handler's, tested in route-secret-ensure.test.ts; the template shows
 * that the stack never owns, replaces or deletes the secret.
 */
import { describe, expect, it } from 'vitest';
import type { RetryproofConfig } from '../../lambdas/config/route-config.ts';
import { config } from '../../retryproof.config.ts';
import { ensuredSecretsOf, synthesize } from './stack-fixture.ts';
import type { SynthesizedApp } from './stack-fixture.ts';

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DeletionPolicy?: string;
}

/** Each ensured secret by logical id: its name and its properties. */
function ensuredSecrets(built: SynthesizedApp): Map<string, { name: string; props: Record<string, unknown> }> {
  return new Map([...ensuredSecretsOf(built.template)].map(([id, props]) => [id, { name: props.SecretName, props }]));
}

const stripe = config.routes[0]!;
const github: RetryproofConfig['routes'][number] = { ...stripe, name: 'github', signature: { scheme: 'github' }, secretName: 'github' };
const withGithub: RetryproofConfig = { ...config, routes: [...config.routes, github] };

describe('route secrets across deploys', () => {
  it('keeps the secret, under the same logical id, when a route is renamed with its secretName kept', () => {
    // Prepare
    const before = ensuredSecrets(synthesize(config));
    // Act: the route `stripe` becomes `payments`; its secretName stays.
    const after = ensuredSecrets(synthesize({ ...config, routes: [{ ...stripe, name: 'payments' }] }));
    // Assess: the same resource, unchanged, so CloudFormation neither creates nor deletes a secret.
    expect([...after]).toEqual([...before]);
    expect([...after.values()].map((s) => s.name)).toEqual(['Retryproof/stripe']);
  });

  it('gives a route removed and added back the very resource it had, which adopts the secret the removal left', () => {
    // Prepare
    const first = ensuredSecrets(synthesize(withGithub));
    // Act
    const removed = ensuredSecrets(synthesize(config));
    const readded = ensuredSecrets(synthesize(withGithub));
    // Assess
    expect([...removed.values()].map((s) => s.name)).toEqual(['Retryproof/stripe']);
    expect([...readded]).toEqual([...first]);
  });

  it('owns no resource a destroy would leave behind under a fixed name: a deploy after a destroy creates nothing that exists', () => {
    // Prepare
    const built = synthesize(withGithub);
    const resources = Object.entries(built.template.toJSON().Resources as Record<string, Resource>);
    // Assess: no Secrets Manager secret is a stack resource (one retained or in its recovery
    // window would keep its name), and no retained resource has a name of its own.
    expect(resources.filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret')).toEqual([]);
    const retainedAndNamed = resources
      .filter(([, r]) => r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'RetainExceptOnCreate')
      .filter(([, r]) => Object.keys(r.Properties ?? {}).some((key) => /^(TableName|QueueName|Name|TopicName|FunctionName|LogGroupName)$/.test(key)))
      .map(([id]) => id);
    expect(retainedAndNamed).toEqual([]);
    // The secrets' custom resources call nothing on delete: the sender's value stays.
    // The handler does nothing on delete (lambdas/secrets/route-secret-resource.ts): its grants hold no DeleteSecret.
    const policies = JSON.stringify(resources.filter(([, r]) => r.Type === 'AWS::IAM::Policy').map(([, r]) => r.Properties));
    expect(policies).toContain('secretsmanager:CreateSecret');
    expect(policies).not.toContain('secretsmanager:DeleteSecret');
  });

  it('leaves an imported secret to its owner: no custom resource, read by the name as written', () => {
    const built = synthesize({ ...config, routes: [{ ...stripe, importSecret: true, secretName: 'shared/stripe' }] });
    expect(ensuredSecrets(built).size).toBe(0);
    expect(built.stack.resolve(built.stack.receiver.routeSecrets.get('stripe')?.secretName)).toBe('shared/stripe');
  });
});
