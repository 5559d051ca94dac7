import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Observability } from '../stateless/observability.ts';
import type { ReceiverFunctions, ReceiverTriggers } from './receiver-functions.ts';
import { secretNameOf } from './receiver-settings.ts';
import type { ReceiverSettings } from './receiver-settings.ts';
import type { ReceiverState } from './receiver-stateful.ts';

/** Makes the alarms, each notifying the alarm topic, and the dashboard, over every part of the receiver. */
export function watchReceiver(
  receiver: Construct,
  settings: ReceiverSettings,
  state: ReceiverState,
  functions: ReceiverFunctions,
  triggers: ReceiverTriggers,
): Observability {
  const { resolved, namePrefix } = settings;
  const { ingest, executor, reconciler } = functions;
  return new Observability(receiver, 'Observability', {
    ingest,
    executor,
    reconciler,
    reconcilerLogs: reconciler.logs,
    reconcileScheduleGroup: triggers.schedule.group,
    reconcileEveryMinutes: resolved.reconciliation.everyMinutes,
    queue: state.work.queue,
    routeQueues: state.work.routeQueues,
    deadLetterQueue: state.work.deadLetterQueue,
    api: triggers.api.api,
    alarmTopic: state.alarms.topic,
    resolved,
    namePrefix,
    metrics: functions.metrics,
    // Dashboards are account-wide, unlike the alarms and the queue: the region keeps a
    // second region's receiver from taking this one's dashboard.
    dashboardName: `${namePrefix}-${Stack.of(receiver).region}`,
    secretNames: new Map(resolved.routes.map((r) => [r.name, secretNameOf(namePrefix, r)])),
  });
}
