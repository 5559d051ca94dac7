/**
 * Ensures a route secret exists, at deploy, with a replica in every Region asked for: the
 * use case behind the stack's Custom::RetryproofRouteSecret (lib/stateful/route-secrets.ts).
 * It never deletes a secret and never writes a value: the value is the sender's.
 */

/** One Region's replica, as DescribeSecret reports it. */
export interface ReplicaStatus {
  readonly region: string;
  /** `InSync`, `InProgress` or `Failed` (Secrets Manager API Reference, ReplicationStatusType). */
  readonly status: string;
  readonly message?: string;
}

/** What DescribeSecret tells about a secret that exists. */
export interface SecretDescription {
  /** Set when the secret is scheduled for deletion. */
  readonly deleted: boolean;
  /** The Region of the primary, when the secret is a replica or has replicas. */
  readonly primaryRegion?: string;
  readonly replicas: readonly ReplicaStatus[];
}

/** The Secrets Manager calls the ensure makes; the handler adapts the SDK to it. */
export interface SecretsAdmin {
  /** CreateSecret with no value; false when a secret of that name exists already (ResourceExistsException). */
  create(name: string, description: string, replicaRegions: readonly string[]): Promise<boolean>;
  describe(name: string): Promise<SecretDescription>;
  /** ReplicateSecretToRegions, overwriting a same-name secret in each Region. */
  replicate(name: string, regions: readonly string[]): Promise<void>;
}

/** What to ensure. */
export interface EnsureRequest {
  readonly name: string;
  readonly description: string;
  /** The Region the stack is in: the primary's. */
  readonly region: string;
  readonly replicaRegions: readonly string[];
}

/** How long the ensure waits for replicas still `InProgress`. */
export interface EnsureTiming {
  readonly attempts: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly intervalMs: number;
}

/** A secret the deploy cannot make usable: the deploy fails with this, naming the fix. */
export class RouteSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteSecretError';
  }
}

/**
 * Creates the secret, or adopts the one of that name, then adds every replica Region it lacks.
 * A Region that already holds a same-name secret of its own gets it overwritten by the replica
 * (ForceOverwriteReplicaSecret): the receiver there reads that name, and a stale copy would answer
 * 401 (docs/architecture.md, "Several Regions", decision on route secrets).
 * @throws RouteSecretError when the secret is scheduled for deletion, is another Region's replica,
 *   or a replica failed: a deploy that succeeded then would leave a Region answering 503 or 401
 */
export async function ensureRouteSecret(admin: SecretsAdmin, request: EnsureRequest, timing: EnsureTiming): Promise<void> {
  const { name, region, replicaRegions } = request;
  const created = await admin.create(name, request.description, replicaRegions);
  let found = await admin.describe(name);
  if (!created) {
    if (found.deleted) {
      throw new RouteSecretError(`secret ${name} is scheduled for deletion: restore it (aws secretsmanager restore-secret --region ${region} --secret-id ${name}) and deploy again`);
    }
    if (found.primaryRegion !== undefined && found.primaryRegion !== region) {
      throw new RouteSecretError(`secret ${name} in ${region} is a replica of the one in ${found.primaryRegion}: the receiver's secrets are made in ${region}; promote it (aws secretsmanager stop-replication-to-replica) or delete it, then deploy again`);
    }
    const missing = replicaRegions.filter((r) => !found.replicas.some((replica) => replica.region === r));
    if (missing.length > 0) {
      await admin.replicate(name, missing);
      found = await admin.describe(name);
    }
  }
  for (let attempt = 1; attempt < timing.attempts && found.replicas.some((r) => replicaRegions.includes(r.region) && r.status === 'InProgress'); attempt++) {
    await timing.sleep(timing.intervalMs);
    found = await admin.describe(name);
  }
  const failed = found.replicas.filter((r) => replicaRegions.includes(r.region) && r.status === 'Failed');
  if (failed.length > 0) {
    const regions = failed.map((r) => r.region);
    throw new RouteSecretError(
      `secret ${name} could not be replicated to ${failed.map((r) => `${r.region} (${r.message ?? 'no reason given'})`).join(', ')}: ` +
        `remove the failed replica (aws secretsmanager remove-regions-from-replication --region ${region} --secret-id ${name} --remove-replica-regions ${regions.join(' ')}) and deploy again`,
    );
  }
}
