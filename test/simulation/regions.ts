/** One port over each Region's instance: every call goes to the calling actor's Region's. */
import type { World } from './world.ts';

/**
 * One port whose every call goes to the instance of the calling actor's Region: each
 * function reaches its own Region's queue and table replica, as a deployed one does.
 */
export function byRegion<T extends object>(w: World, instances: readonly T[]): T {
  const first = instances[0] as T;
  if (instances.length === 1 || instances.every((i) => i === first)) return first;
  return new Proxy(first, {
    get(_target, prop) {
      const own = instances[w.regionOfActor()] ?? first;
      const value: unknown = Reflect.get(own, prop, own);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(own) : value;
    },
  });
}

/** A store of each Region's table replica, one port over them (byRegion). */
export function perRegion<T extends object>(w: World, make: (table: string) => T): T {
  const made = new Map<string, T>();
  return byRegion(w, w.regionTables.map((table) => made.get(table) ?? made.set(table, make(table)).get(table) as T));
}
