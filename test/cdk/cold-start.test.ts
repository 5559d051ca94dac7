/**
 * Each function of the app, started as Lambda starts it: its entry module imported with the
 * environment the template gives it and the configuration the construct bundles into it. A
 * cold start that throws (a variable missing or misnamed, a configuration the functions
 * refuse, an action module of the wrong shape) fails every invocation of a deploy; this finds
 * it at test time. References to resources (the table's name, the queue's URL) are filled
 * with stand-ins: nothing is called.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { generatedEntriesOf } from '../../lib/webhook-receiver.ts';
import { shipConfig } from '../support/shipped-config.ts';
import { demoConfig as config } from './fixtures/demo-config.ts';
import { synthesize } from './stack-fixture.ts';

type FunctionResource = { Properties: { Environment?: { Variables?: Record<string, unknown> } } };

/** The function's variables, each reference to a resource replaced by a stand-in string. */
function variablesOf(fn: FunctionResource): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fn.Properties.Environment?.Variables ?? {}).map(([name, value]) => [name, typeof value === 'string' ? value : `stand-in-for-${name}`]),
  );
}

describe('the app\'s functions at cold start', () => {
  const built = synthesize(config);
  const functions = built.template.findResources('AWS::Lambda::Function') as Record<string, FunctionResource>;
  const byId = (id: string): FunctionResource => {
    const found = Object.entries(functions).find(([logicalId]) => logicalId.startsWith(id));
    if (found === undefined) throw new Error(`no function ${id}`);
    return found[1];
  };
  const entries = generatedEntriesOf(built.stack.receiver);
  const cases = [
    ['Ingest', new URL('../../lambdas/ingest/handler.ts', import.meta.url).href],
    ['Executor', `file://${join(entries, 'executor.mjs')}`],
    ['Reconciler', `file://${join(entries, 'reconciler.mjs')}`],
  ] as const;

  it.each(cases)('starts the %s from its entry with the template\'s environment and its bundled configuration, and exports a handler', async (id, entry) => {
    const variables = { ...variablesOf(byId(id)), AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'stand-in', AWS_SECRET_ACCESS_KEY: 'stand-in' };
    expect(Object.keys(variables)).not.toContain('RETRYPROOF_CONFIG');
    const saved = { ...process.env };
    Object.assign(process.env, variables);
    const { ingestFunction, executorFunction, reconcilerFunction } = built.stack.receiver;
    const unship = shipConfig({ Ingest: ingestFunction, Executor: executorFunction, Reconciler: reconcilerFunction }[id].shippedConfig ?? '');
    try {
      vi.resetModules();
      const module = (await import(/* @vite-ignore */ entry)) as { handler?: unknown };
      expect(typeof module.handler).toBe('function');
    } finally {
      unship();
      for (const name of Object.keys(variables)) {
        if (saved[name] === undefined) Reflect.deleteProperty(process.env, name);
        else process.env[name] = saved[name];
      }
    }
  });

  it('imports, in the executor\'s generated entry, the demo\'s action module and no other', () => {
    const text = readFileSync(join(entries, 'executor.mjs'), 'utf8');
    expect(text.match(/^import \* as m\d+ from .*$/gm)).toEqual([expect.stringMatching(/lambdas\/demo\/payout-action\.ts";$/)]);
  });
});
