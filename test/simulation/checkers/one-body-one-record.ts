/** One event, one key: the copies of one body (one order) on one route all made one record. */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export function checkOneBodyOneRecord(records: readonly Record<string, AttributeValue>[], violations: string[]): void {
  const keysOfBody = new Map<string, Set<string>>();
  for (const item of records) {
    const pk = item.pk?.S ?? '';
    const route = pk.split('#')[1] ?? '';
    const scoped = `${route}\u0000${item.fingerprint?.S ?? ''}`;
    keysOfBody.set(scoped, (keysOfBody.get(scoped) ?? new Set()).add(pk));
  }
  for (const pks of keysOfBody.values()) {
    if (pks.size > 1) violations.push(`one body on one route became ${pks.size} records under different keys: ${[...pks].map((p) => JSON.stringify(p)).join(', ')}`);
  }
}
