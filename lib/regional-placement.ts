import { Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ConfigError } from '../lambdas/config/resolve-config.ts';
import type { ResolvedRegions } from '../lambdas/config/resolve-config.ts';

/**
 * Where one Region's receiver stands in a deployment of several Regions: whether its stack
 * defines the global events table (the first replica's does), and the name every Region
 * finds that table by.
 */
export interface RegionalPlacement {
  /** The stack's Region, one of the replicas. */
  readonly region: string;
  /** True for the first replica's stack: it defines the table and the route secrets, and deploys first. */
  readonly owner: boolean;
  /** The replica Regions other than this one. */
  readonly otherReplicas: readonly string[];
  readonly witness: string | undefined;
  /** The global table's physical name, the same in every Region. */
  readonly tableName: string;
}

/** The events table's physical name in a deployment of several Regions. */
export function globalEventsTableName(namePrefix: string): string {
  return `${namePrefix}-events`;
}

/**
 * The placement of the receiver `scope` in `regions`, or a ConfigError for what would break
 * the deployment: a stack with no Region of its own (a global table needs one, and TableV2
 * refuses it only in the owner's stack), a stack outside the replicas (its receiver would
 * have no replica to read, or would define the table in the witness Region), and a derived
 * name prefix (each Region's stack has its own name, so the prefixes, and with them the table
 * name each Region looks for, would differ).
 * @throws ConfigError naming the stack, its Region and the replicas
 */
export function regionalPlacement(scope: Construct, regions: ResolvedRegions, namePrefix: string | undefined): RegionalPlacement {
  const stack = Stack.of(scope);
  const { replicas, witness } = regions;
  if (Token.isUnresolved(stack.region)) {
    throw new ConfigError(
      `regions: stack ${stack.stackName} has no Region of its own; with several Regions (${replicas.join(', ')}) each receiver's stack sets env.region to one of them`,
    );
  }
  const region = stack.region;
  if (!replicas.includes(region)) {
    throw new ConfigError(
      `regions: stack ${stack.stackName} is in ${region}, which is not a replica Region (${replicas.join(', ')})` +
        (region === witness ? '; a witness Region holds no replica and runs no receiver' : ''),
    );
  }
  if (namePrefix === undefined) {
    throw new ConfigError(
      `regions: set namePrefix; every Region's receiver finds the one global table by a name made from it, and the default prefix (the stack's name, ${stack.stackName}) differs between Regions`,
    );
  }
  return {
    region,
    owner: region === replicas[0],
    otherReplicas: replicas.filter((r) => r !== region),
    witness,
    tableName: globalEventsTableName(namePrefix),
  };
}
