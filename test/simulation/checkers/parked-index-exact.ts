/** The parked index holds parked records only. */
import { RECORD_STATUS } from '../../../lambdas/domain/event-record.ts';
import type { DynamoDbParkedRecords } from '../../../lambdas/store/dynamodb-parked-records.ts';
import type { World } from '../world.ts';

export async function checkParkedIndexExact(w: World, parked: DynamoDbParkedRecords): Promise<void> {
  for (const route of w.routes.keys()) {
    for await (const page of parked.listParked(route)) {
      for (const r of page) if (r.status !== RECORD_STATUS.parked) w.violations.push(`${r.key}: in the parked index while ${r.status}`);
    }
  }
}
