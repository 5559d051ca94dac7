/**
 * The Regions of an active-active deployment, checked against what DynamoDB's multi-Region strong
 * consistency (MRSC) accepts, so that `cdk synth` refuses what a deploy would: a global table in
 * MRSC mode spans exactly three Regions, three replicas or two replicas and a witness, all of one
 * Region set (DynamoDB Developer Guide, "How DynamoDB global tables work", multi-Region strong
 * consistency; docs/architecture.md, "Several Regions").
 */
import type { RegionsConfig } from './route-config.ts';

/** The Region sets an MRSC global table may span, each of its Regions from one set. */
export const MRSC_REGION_SETS: Readonly<Record<string, readonly string[]>> = {
  US: ['us-east-1', 'us-east-2', 'us-west-2'],
  EU: ['eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1'],
  AP: ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3'],
};

/** How many Regions an MRSC global table spans, replicas and witness together. */
export const MRSC_REGION_COUNT = 3;

/** The reason eventual consistency is refused for the events table, in every message that refuses it. */
export const MREC_REFUSAL =
  'multi-Region eventual consistency (MREC) evaluates each conditional write against the local replica and settles ' +
  'conflicting writes by last writer wins, so two Regions can both claim one key and both run its action';

/** A configuration error's message, from the checks below. */
export type RegionsProblem = string;

/**
 * The problems of a regions setting, as messages that name the value and the rule; empty when
 * MRSC accepts it.
 */
export function regionsProblems(regions: Required<Pick<RegionsConfig, 'replicas'>> & RegionsConfig): RegionsProblem[] {
  const problems: RegionsProblem[] = [];
  const { replicas, witness } = regions;
  if (regions.consistency === 'eventual') {
    problems.push(`regions: consistency "eventual" is refused for the events table: ${MREC_REFUSAL}; use consistency: 'strong' (MRSC)`);
  }
  const seen = new Set<string>();
  for (const region of replicas) {
    if (seen.has(region)) problems.push(`regions: replica ${region} is listed twice`);
    seen.add(region);
  }
  if (witness !== undefined && seen.has(witness)) problems.push(`regions: witness ${witness} is also a replica; a witness Region holds no replica`);
  const total = replicas.length + (witness === undefined ? 0 : 1);
  if (replicas.length === 2 && witness === undefined) {
    problems.push(`regions: two replicas (${replicas.join(', ')}) need a witness Region: MRSC spans exactly ${MRSC_REGION_COUNT} Regions`);
  } else if (total !== MRSC_REGION_COUNT) {
    problems.push(
      `regions: ${replicas.length} replicas${witness === undefined ? '' : ' and a witness'} make ${total} Regions; ` +
        `MRSC spans exactly ${MRSC_REGION_COUNT}: three replicas, or two replicas and a witness`,
    );
  }
  const all = [...replicas, ...(witness === undefined ? [] : [witness])];
  const sets = new Set(all.map((region) => regionSetOf(region) ?? `none:${region}`));
  const outside = all.filter((region) => regionSetOf(region) === undefined);
  if (outside.length > 0) {
    problems.push(`regions: ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} in no MRSC Region set (${describeSets()})`);
  } else if (sets.size > 1) {
    problems.push(`regions: ${all.join(', ')} span several Region sets; MRSC needs all of them in one (${describeSets()})`);
  }
  return problems;
}

/** The Region set a Region belongs to, or undefined when MRSC does not reach it. */
export function regionSetOf(region: string): string | undefined {
  return Object.entries(MRSC_REGION_SETS).find(([, members]) => members.includes(region))?.[0];
}

function describeSets(): string {
  return Object.entries(MRSC_REGION_SETS)
    .map(([name, members]) => `${name}: ${members.join(', ')}`)
    .join('; ');
}

/**
 * A literal that names a receiving Region or datacenter, such as `us-east1_` or `eu-west-1:`.
 * In a deployment of several Regions such a prefix makes one event two keys, one per Region its
 * copies land in, and so runs it twice.
 */
const REGION_LIKE = /(^|[^a-z])(us|eu|ap|sa|ca|me|af|il|mx|cn)[-_]?(gov[-_]?)?(north|south|east|west|central|northeast|southeast|northwest|southwest)[-_]?[0-9]/i;

/** Whether a key template's literal text names a Region (REGION_LIKE), or one of the deployment's. */
export function namesARegion(literal: string, regions: readonly string[]): boolean {
  return REGION_LIKE.test(literal) || regions.some((region) => literal.toLowerCase().includes(region));
}
