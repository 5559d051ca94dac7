/**
 * The sparse failed index holds FAILED records, every one of them: a bulk redrive finds by it
 * all the FAILED work there is, and takes back nothing else.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';

export function checkFailedIndexExact(records: readonly Record<string, AttributeValue>[], violations: string[]): void {
  for (const item of records) {
    const pk = item.pk?.S ?? '';
    const failed = item.status?.S === RECORD_STATUS.failed;
    const indexed = item.gsi3pk?.S !== undefined;
    if (failed && !indexed) violations.push(`${pk}: FAILED but not in the failed index: a bulk redrive never finds it`);
    if (!failed && indexed) violations.push(`${pk}: in the failed index while ${String(item.status?.S)}`);
  }
}
