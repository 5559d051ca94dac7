/**
 * A consumer app's package-lock.json, cut from the repository's own lock.
 *
 * Why: the pack test installs the tarball offline from the npm cache that `npm ci` filled.
 * `npm ci` fetches tarballs by their locked URL and never the registry's package documents
 * (packuments), so `npm install --offline aws-cdk-lib@2.276.0` cannot even resolve a version
 * from that cache (checked on a fresh cache: npm fails with ERESOLVE, "Found: aws-cdk-lib@undefined").
 * With a lock, npm installs from locked URLs and integrities alone, as `npm ci` did. The
 * versions are the ones the repository tests with, so the consumer runs the same code.
 */

/** One entry of a lockfileVersion 3 `packages` map. */
interface LockEntry {
  readonly version?: string;
  readonly resolved?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { optional?: boolean }>>;
  readonly dev?: boolean;
  readonly devOptional?: boolean;
  readonly peer?: boolean;
  readonly optional?: boolean;
  readonly [field: string]: unknown;
}

/** The parts of package-lock.json read here. */
export interface PackageLock {
  readonly packages: Readonly<Record<string, LockEntry>>;
}

/** The consumer's direct dependencies: each name with the spec its package.json gives. */
export type DirectDependencies = Readonly<Record<string, string>>;

/**
 * Where Node would find `name` when required from the package installed at `from`
 * (`''` is the project root): its own node_modules first, then each enclosing one.
 */
function locate(lock: PackageLock, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) return candidate;
    if (dir === '') return undefined;
    const parent = dir.lastIndexOf('/node_modules/');
    dir = parent < 0 ? '' : dir.slice(0, parent);
  }
}

/** The npm registry's tarball URL of the package installed at `at` (`node_modules/@scope/name`). */
function registryTarball(at: string, version: string): string {
  const name = at.slice(at.lastIndexOf('node_modules/') + 'node_modules/'.length);
  return `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1) ?? name}-${version}.tgz`;
}

/**
 * The lock of a consumer whose root depends on `tarball` (the packed package, a `file:`
 * spec) and on `registryDeps`, and has `registryDevDeps` as devDependencies, every one of
 * which the repository's lock holds. Each
 * locked package reachable from them is kept at the repository's path and version; the
 * dev and peer marks of the repository's tree are dropped, since the consumer's tree has
 * its own.
 * @throws Error naming a package and a dependency the repository's lock cannot supply
 */
export function consumerLock(
  repoLock: PackageLock,
  tarball: { readonly name: string; readonly spec: string },
  registryDeps: DirectDependencies,
  registryDevDeps: DirectDependencies = {},
): { readonly lock: object; readonly packageCount: number } {
  const root = repoLock.packages[''];
  if (root === undefined) throw new Error('package-lock.json has no root package');
  // As npm would lock it; npm links the bins a lock entry names, so `bin` must be here too.
  const packed: Record<string, unknown> = { ...root, resolved: tarball.spec };
  delete packed.name;
  delete packed.devDependencies;

  const keep = new Set<string>();
  const pending: string[] = [];
  const need = (from: string, entry: LockEntry) => {
    const optional = { ...entry.optionalDependencies, ...entry.peerDependenciesMeta };
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies })) {
      const at = locate(repoLock, from, name);
      if (at !== undefined) pending.push(at);
      else if (!(name in optional)) throw new Error(`${from === '' ? 'the consumer' : from} needs ${name}, which package-lock.json does not hold`);
    }
  };
  // The packed package is installed at node_modules/<name>, so its dependencies resolve
  // exactly as the root's do in the repository.
  need('', { dependencies: { ...registryDeps, ...registryDevDeps } });
  need('', packed);
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    if (keep.has(at)) continue;
    keep.add(at);
    const entry = repoLock.packages[at];
    if (entry !== undefined) need(at, entry);
  }

  const packages: Record<string, object> = {
    '': {
      name: 'consumer',
      dependencies: { [tarball.name]: tarball.spec, ...registryDeps },
      ...(Object.keys(registryDevDeps).length === 0 ? {} : { devDependencies: registryDevDeps }),
    },
    [`node_modules/${tarball.name}`]: packed,
  };
  for (const at of [...keep].sort()) {
    const entry: Record<string, unknown> = { ...repoLock.packages[at] };
    const devOptional = entry.devOptional === true;
    delete entry.dev;
    delete entry.devOptional;
    delete entry.peer;
    // Optional in the repository's tree for being a dev dependency's optional one: still optional.
    if (devOptional) entry.optional = true;
    // An entry without its tarball's URL (@aws-sdk/client-lambda's) makes an offline install ask the registry for it.
    if (entry.resolved === undefined && typeof entry.version === 'string') entry.resolved = registryTarball(at, entry.version);
    packages[at] = entry;
  }
  return { lock: { name: 'consumer', lockfileVersion: 3, requires: true, packages }, packageCount: keep.size + 1 };
}
