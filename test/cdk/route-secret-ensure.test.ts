/**
 * ensureRouteSecret, the deploy-time use case behind Custom::RetryproofRouteSecret, against a fake
 * Secrets Manager: a replica is added to a secret it adopts, and a state no deploy can fix
 * fails the deploy with the command that fixes it.
 */
import { describe, expect, it } from 'vitest';
import { RouteSecretError, ensureRouteSecret } from '../../lambdas/secrets/ensure-route-secret.ts';
import type { ReplicaStatus, SecretDescription, SecretsAdmin } from '../../lambdas/secrets/ensure-route-secret.ts';

const NAME = 'Retryproof/multi-region/orders';
const timing = { attempts: 3, intervalMs: 0, sleep: () => Promise.resolve() };
const request = (replicaRegions: string[]) => ({ name: NAME, description: 'd', region: 'us-east-1', replicaRegions });

/** Secrets Manager in the primary Region, as far as the ensure sees it. */
class FakeSecrets implements SecretsAdmin {
  existing: SecretDescription | undefined;
  readonly calls: string[] = [];
  /** A Region whose replica fails, with this message. */
  failing: Record<string, string> = {};

  constructor(existing?: SecretDescription) {
    this.existing = existing;
  }

  async create(name: string, _description: string, regions: readonly string[]): Promise<boolean> {
    this.calls.push(`create ${name} ${regions.join(',')}`);
    if (this.existing !== undefined) return false;
    this.existing = { deleted: false, replicas: [] };
    await this.replicate(name, regions, false);
    return true;
  }

  describe(name: string): Promise<SecretDescription> {
    this.calls.push(`describe ${name}`);
    if (this.existing === undefined) return Promise.reject(new Error('ResourceNotFoundException'));
    return Promise.resolve(this.existing);
  }

  replicate(name: string, regions: readonly string[], log = true): Promise<void> {
    if (log) this.calls.push(`replicate ${name} ${regions.join(',')}`);
    const added: ReplicaStatus[] = regions.map((region) => {
      const message = this.failing[region];
      return message === undefined ? { region, status: 'InSync' } : { region, status: 'Failed', message };
    });
    const current = this.existing ?? { deleted: false, replicas: [] };
    this.existing = { ...current, primaryRegion: 'us-east-1', replicas: [...current.replicas, ...added] };
    return Promise.resolve();
  }
}

describe('ensureRouteSecret', () => {
  it('creates a missing secret with its replicas in one call', async () => {
    const secrets = new FakeSecrets();
    await ensureRouteSecret(secrets, request(['us-east-2']), timing);
    expect(secrets.calls).toEqual([`create ${NAME} us-east-2`, `describe ${NAME}`]);
    expect(secrets.existing?.replicas).toEqual([{ region: 'us-east-2', status: 'InSync' }]);
  });

  it('adds the replica an adopted secret lacks (ReplicateSecretToRegions, which the handler forces over a same-name secret)', async () => {
    // Prepare: the secret a destroyed stack left, never replicated.
    const secrets = new FakeSecrets({ deleted: false, replicas: [] });
    // Act
    await ensureRouteSecret(secrets, request(['us-east-2']), timing);
    // Assess
    expect(secrets.calls).toContain(`replicate ${NAME} us-east-2`);
    expect(secrets.existing?.replicas.map((r) => r.region)).toEqual(['us-east-2']);
  });

  it('asks for no replica an adopted secret already has', async () => {
    const secrets = new FakeSecrets({ deleted: false, primaryRegion: 'us-east-1', replicas: [{ region: 'us-east-2', status: 'InSync' }] });
    await ensureRouteSecret(secrets, request(['us-east-2']), timing);
    expect(secrets.calls.filter((c) => c.startsWith('replicate'))).toEqual([]);
  });

  it('adopts a secret in one Region without describing replicas it does not want', async () => {
    const secrets = new FakeSecrets({ deleted: false, replicas: [] });
    await ensureRouteSecret(secrets, request([]), timing);
    expect(secrets.calls.filter((c) => c.startsWith('replicate'))).toEqual([]);
  });

  it('fails the deploy when a replica failed, naming the Region, the reason and the fix', async () => {
    const secrets = new FakeSecrets({ deleted: false, replicas: [] });
    secrets.failing = { 'us-east-2': 'kms key not found' };
    const err = await ensureRouteSecret(secrets, request(['us-east-2']), timing).then(() => { throw new Error('expected a refusal'); }, (e: unknown) => e as Error);
    expect(err).toBeInstanceOf(RouteSecretError);
    expect(err.message).toMatch(/us-east-2 \(kms key not found\).*remove-regions-from-replication/);
  });

  it('fails the deploy for a secret scheduled for deletion, telling how to restore it', async () => {
    const secrets = new FakeSecrets({ deleted: true, replicas: [] });
    const err = await ensureRouteSecret(secrets, request([]), timing).then(() => { throw new Error('expected a refusal'); }, (e: unknown) => e as Error);
    expect(err.message).toMatch(/scheduled for deletion: restore it \(aws secretsmanager restore-secret --region us-east-1 --secret-id Retryproof\/multi-region\/orders\)/);
  });

  it("fails the deploy for a secret that is another Region's replica", async () => {
    const secrets = new FakeSecrets({ deleted: false, primaryRegion: 'eu-west-1', replicas: [{ region: 'us-east-1', status: 'InSync' }] });
    const err = await ensureRouteSecret(secrets, request(['us-east-2']), timing).then(() => { throw new Error('expected a refusal'); }, (e: unknown) => e as Error);
    expect(err.message).toMatch(/is a replica of the one in eu-west-1/);
  });

  it('waits for replicas in progress, then checks them', async () => {
    const secrets = new FakeSecrets({ deleted: false, primaryRegion: 'us-east-1', replicas: [{ region: 'us-east-2', status: 'InProgress' }] });
    let sleeps = 0;
    const err = await ensureRouteSecret(secrets, request(['us-east-2']), {
      ...timing,
      sleep: () => {
        sleeps++;
        secrets.existing = { deleted: false, primaryRegion: 'us-east-1', replicas: [{ region: 'us-east-2', status: 'Failed', message: 'access denied' }] };
        return Promise.resolve();
      },
    }).then(() => { throw new Error('expected a refusal'); }, (e: unknown) => e as Error);
    expect(sleeps).toBe(1);
    expect(err.message).toMatch(/us-east-2 \(access denied\)/);
  });
});
