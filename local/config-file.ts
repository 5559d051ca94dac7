/**
 * The configuration file `npm start` runs: `./retryproof.config.ts`, or the one given with
 * `--config <path>`. It exports `config` (a RetryproofConfig) and may export `localSetup`
 * (local-setup.ts). Loading it is all this file does: the configuration itself is checked
 * by readLocalSettings, through resolveConfig, as `cdk synth` checks it.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import type { LocalSetup } from './local-setup.ts';
import { DEFAULT_CONFIG_FILE, SettingsError } from './local-settings.ts';

export interface ConfigFile {
  /** Absolute. */
  readonly path: string;
  /** How messages name it: relative to the current directory when under it, else absolute. */
  readonly shown: string;
  /** As exported; not yet validated. */
  readonly config: RetryproofConfig;
  readonly localSetup: LocalSetup | undefined;
}

/** `path` as a person would type it from `cwd`. */
export function shownPath(path: string, cwd: string = process.cwd()): string {
  const near = relative(cwd, path);
  return near === '' || near.startsWith('..') || isAbsolute(near) ? path : near;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}

/**
 * Imports a configuration file.
 * @param path absolute, or relative to `cwd`
 * @throws SettingsError of one line: the file is missing, cannot be loaded, exports no
 *   `config` object, or exports a `localSetup` that is not a function
 */
export async function loadConfigFile(path: string = DEFAULT_CONFIG_FILE, cwd: string = process.cwd()): Promise<ConfigFile> {
  const absolute = resolve(cwd, path);
  const shown = shownPath(absolute, cwd);
  const found = await stat(absolute).catch(() => undefined);
  if (found === undefined) throw new SettingsError(`config file ${shown} not found (give another with --config <path>)`);
  if (!found.isFile()) throw new SettingsError(`config file ${shown} is not a file`);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new SettingsError(`config file ${shown} could not be loaded: ${firstLine(error)}`);
  }
  const { config, localSetup } = module;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new SettingsError(
      `config file ${shown} must export \`config\`, an object (export const config: RetryproofConfig = { routes: [...] }); found ${
        config === undefined ? 'no such export' : Array.isArray(config) ? 'an array' : typeof config
      }`,
    );
  }
  if (localSetup !== undefined && typeof localSetup !== 'function') {
    throw new SettingsError(
      `config file ${shown}: \`localSetup\` must be a function (local) => Promise<Record<string, string>>; found ${typeof localSetup}`,
    );
  }
  return { path: absolute, shown, config: config as RetryproofConfig, localSetup: localSetup as LocalSetup | undefined };
}
