/**
 * The Regions the local stack runs: `npm start -- --regions 2` (names `local-1`, `local-2`),
 * `--regions us-east-1,us-east-2` (names of your own), or, without the flag, the configuration's
 * `regions.replicas`, else one Region, `local-1`. Each Region is what a deployed Region holds of
 * its own (a gateway on its own port, a work queue and its DLQ, an executor); all of them share
 * the one events table and the demo's ledger. One DynamoDB Local table is linearizable, as an
 * MRSC global table is (DynamoDB Developer Guide, "How DynamoDB global tables work", multi-Region
 * strong consistency: a strongly consistent read in any Region returns the latest write, and a
 * conditional write is checked against it), so a claim won in one Region is what every other one
 * reads. What one table cannot show is MRSC's own refusals, such as ReplicatedWriteConflictException
 * ("one or more items in the request are being modified by a request in another Region", the
 * DynamoDB API reference's errors).
 * Pure: every value is checked here, and a bad one is one SettingsError line.
 */
import { SettingsError } from './settings-error.ts';

/** One local Region. */
export interface LocalRegion {
  readonly name: string;
  /** Its gateway's port: the stack's PORT for the first Region, the next ones after it. */
  readonly port: number;
  /** Its work queue's name; the DLQ is `<queue>-dlq`. */
  readonly queue: string;
  /** Its bucket of large bodies (the S3 claim check), on fauxqs's S3. */
  readonly bodyBucket: string;
}

/** At most this many Regions run locally: each is a gateway, a queue pair and an executor on this one machine. */
export const MAX_LOCAL_REGIONS = 8;

/** The name of the Region a stack runs without --regions, and the stem of a count's names. */
export const DEFAULT_LOCAL_REGION = 'local-1';

/**
 * The first Region's work queue: the single-Region stack's, so a stack restarted with or without
 * --regions finds the messages its first Region left. The others get `<this>-<name>`.
 */
export const FIRST_REGION_QUEUE = 'retryproof-work';

/**
 * The account the local services name (fauxqs's queue URLs and ARNs, the gateway's events).
 */
export const LOCAL_ACCOUNT = '000000000000';

/**
 * A Region's bucket of large bodies, named as the construct names a receiver's
 * (lib/stateful/body-bucket.ts, bodyBucketName: `<prefix>-bodies-<account>-<region>`) with the
 * prefix `retryproof`, as the first Region's queue is the construct's `<prefix>-work`, and the
 * local account: `retryproof-bodies-000000000000-local-1`. Every one is a valid S3 name (lowercase
 * letters, digits and hyphens, 3 to 63 characters: "General purpose bucket naming rules", Amazon S3
 * User Guide): the 31 characters before the Region's name leave room for its 32.
 */
export function localBodyBucketName(region: string): string {
  return `retryproof-bodies-${LOCAL_ACCOUNT}-${region}`;
}

/** A Region's name: lowercase letters, digits and hyphens, from a letter to a letter or digit, as AWS names its Regions. */
const REGION_NAME = /^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

const FORM = 'a count from 1 to 8 or a list of names such as us-east-1,us-east-2';

/**
 * The Region names `--regions` gives, or the configuration's replicas without it.
 * @param flag the flag's text, undefined when it was not given
 * @param replicas the configuration's `regions.replicas`, when it has them
 * @throws SettingsError of one line naming the value: 0 or more than MAX_LOCAL_REGIONS, a name
 *   twice, an empty or malformed name
 */
export function localRegionNames(flag: string | undefined, replicas?: readonly string[]): string[] {
  if (flag === undefined) return replicas === undefined || replicas.length === 0 ? [DEFAULT_LOCAL_REGION] : checkedNames(replicas, 'regions.replicas');
  const text = flag.trim();
  if (/^-?\d+$/.test(text)) {
    const count = Number(text);
    if (count < 1 || count > MAX_LOCAL_REGIONS) {
      throw new SettingsError(
        `--regions must be ${FORM}, got ${JSON.stringify(flag)}` +
          (count > MAX_LOCAL_REGIONS ? ` (at most ${MAX_LOCAL_REGIONS} run locally: each is a gateway, a queue pair and an executor on this machine)` : ''),
      );
    }
    return Array.from({ length: count }, (_, i) => `local-${i + 1}`);
  }
  if (text === '') throw new SettingsError(`--regions must be ${FORM}, got ${JSON.stringify(flag)}`);
  return checkedNames(text.split(',').map((name) => name.trim()), '--regions', flag);
}

function checkedNames(names: readonly string[], source: string, given?: string): string[] {
  const shown = given === undefined ? names.join(',') : given;
  if (names.length > MAX_LOCAL_REGIONS) {
    throw new SettingsError(`${source} names ${names.length} regions (${shown}); at most ${MAX_LOCAL_REGIONS} run locally`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    if (name === '') throw new SettingsError(`${source} has an empty region name in ${JSON.stringify(shown)}`);
    if (!REGION_NAME.test(name)) {
      throw new SettingsError(
        `${source}: ${JSON.stringify(name)} is not a region name: lowercase letters, digits and hyphens, ` +
          'from a letter to a letter or digit, at most 32 characters (such as us-east-1)',
      );
    }
    if (seen.has(name)) throw new SettingsError(`${source} names the region ${name} twice (${shown})`);
    seen.add(name);
  }
  return [...names];
}

/**
 * The Regions of `names`, their ports from `port` up, one each.
 * @throws SettingsError when the last port would be past 65535
 */
export function localRegionsOf(names: readonly string[], port: number): LocalRegion[] {
  const last = port + names.length - 1;
  if (last > 65_535) {
    throw new SettingsError(
      `${names.length} regions need the ports ${port} to ${last}, past 65535: start with PORT=${65_536 - names.length} or lower`,
    );
  }
  return names.map((name, i) => ({
    name,
    port: port + i,
    queue: i === 0 ? FIRST_REGION_QUEUE : `${FIRST_REGION_QUEUE}-${name}`,
    bodyBucket: localBodyBucketName(name),
  }));
}
