import type { Action } from './action.ts';

/** Actions by the name routes give in the configuration. */
export type ActionRegistry = ReadonlyMap<string, Action>;

