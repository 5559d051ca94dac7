import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { NAME_PREFIX, NAME_PREFIX_RULE } from '../../lambdas/config/config-schema.ts';
import { ConfigError, assertActionsSupplied, resolveConfig } from '../../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import type { ActionSource } from '../../lambdas/config/route-config.ts';
import { regionalPlacement } from '../regional-placement.ts';
import type { RegionalPlacement } from '../regional-placement.ts';
import { createdSecretName } from '../stateful/route-secrets.ts';
import type { WebhookReceiverProps } from './receiver-props.ts';

/** The configuration as written, without the actions' paths: what the functions' code carries. */
export type WrittenConfig = Omit<WebhookReceiverProps, 'secretsKey' | 'actions'>;

/** What {@link receiverSettings} checked in the props and derived from them: what every later step reads. */
export interface ReceiverSettings {
  /** Every default applied, every derived number computed. */
  readonly resolved: ResolvedConfig;
  /** The prefix of every physical name. */
  readonly namePrefix: string;
  /** With several Regions: this receiver's Region, and whether its stack defines the table. */
  readonly placement: RegionalPlacement | undefined;
  /** The actions the routes run, by name: only these are bundled. */
  readonly sources: ReadonlyMap<string, ActionSource>;
  /** The configuration the functions ship, each created secret under its prefixed name. */
  readonly shipped: WrittenConfig;
}

/**
 * Checks the props and derives the settings: the resolved configuration, the name prefix, the
 * Region's placement and the action modules to bundle.
 * @throws ConfigError naming the route, the field and the value
 */
export function receiverSettings(receiver: Construct, id: string, props: WebhookReceiverProps): ReceiverSettings {
  const { secretsKey: _key, ...config } = props;
  const resolved = resolveConfig(config);
  assertActionsSupplied(resolved, Object.keys(props.actions));
  // An explicit prefix was checked by resolveConfig; the derived one is checked by the same rule.
  const namePrefix = props.namePrefix ?? defaultNamePrefix(Stack.of(receiver).stackName, id);
  if (!NAME_PREFIX.test(namePrefix)) {
    throw new ConfigError(`the name prefix derived from the stack and the id, "${namePrefix}", is not ${NAME_PREFIX_RULE}: set namePrefix`);
  }
  const placement = resolved.regions === undefined ? undefined : regionalPlacement(receiver, resolved.regions, props.namePrefix);
  const { actions: _paths, ...written } = config;
  return { resolved, namePrefix, placement, sources: usedActionSources(resolved, props.actions), shipped: shippedConfigOf(written, namePrefix) };
}

/**
 * The sources of the actions the routes run, each path checked: the functions get no paths of this machine.
 * @throws ConfigError naming the action and the missing file
 */
function usedActionSources(resolved: ResolvedConfig, actions: Readonly<Record<string, ActionSource>>): Map<string, ActionSource> {
  const used = new Set(resolved.routes.map((r) => r.action));
  const sources = new Map(Object.entries(actions).filter(([name]) => used.has(name)));
  for (const [name, source] of sources) {
    for (const [what, path] of [['entry', source.entry], ['ledger', source.ledger]] as const) {
      if (path !== undefined && !existsSync(resolve(path))) {
        throw new ConfigError(`action "${name}": its ${what} ${path} does not exist (paths are relative to ${process.cwd()})`);
      }
    }
  }
  return sources;
}

/** The written configuration with each created secret under the name the functions read it by. */
function shippedConfigOf(written: WrittenConfig, namePrefix: string): WrittenConfig {
  return {
    ...written,
    routes: written.routes.map((r) => ({ ...r, secretName: secretNameOf(namePrefix, { secretName: r.secretName, importSecret: r.importSecret === true }) })),
  };
}

/**
 * A route secret's name in Secrets Manager: an imported one's as written; one the receiver
 * creates carries its name prefix, as every name it creates does.
 */
export function secretNameOf(namePrefix: string, route: { readonly secretName: string; readonly importSecret: boolean }): string {
  return route.importSecret ? route.secretName : createdSecretName(namePrefix, route.secretName);
}

/**
 * Whether this Region's receiver reads replicas of the route secrets: with several Regions the
 * first replica's stack creates each secret and Secrets Manager replicates it to the others, so
 * its value is set once and cannot drift (a Region with a stale copy would answer every delivery
 * 401). The others import their replica by name.
 */
export function readsReplicatedSecrets(placement: RegionalPlacement | undefined): boolean {
  return placement !== undefined && !placement.owner;
}

/** The stack's name, then the id unless it is `Default`, with what names refuse replaced by dashes. */
function defaultNamePrefix(stackName: string, id: string): string {
  const raw = id === 'Default' ? stackName : `${stackName}-${id}`;
  return raw.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 40);
}
