import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Alarm, Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ResolvedConfig } from '../../lambdas/config/resolve-config.ts';
import { receiverAlarms } from './receiver-alarms.ts';
import { receiverDashboard } from './receiver-dashboard.ts';
import type { ReceiverMetrics } from './retryproof-metrics.ts';
import { watchedQueues } from './watched-queues.ts';

export { FINDINGS_QUERY } from './receiver-alarms.ts';

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly ingest: IFunction;
  readonly executor: IFunction;
  readonly reconciler: IFunction;
  /** The reconciler's log group, where each run's report is; the findings alarm names it. */
  readonly reconcilerLogs: ILogGroup;
  /** The group holding only the reconcile schedule, whose invocation metrics are the reconciler's alone. */
  readonly reconcileScheduleGroup: IScheduleGroup;
  /** Minutes between two scheduled reconciler runs. */
  readonly reconcileEveryMinutes: number;
  /** The shared work queue the executor consumes. */
  readonly queue: IQueue;
  /** The queue of each route with one of its own, by route name. @default - none */
  readonly routeQueues?: ReadonlyMap<string, IQueue>;
  readonly deadLetterQueue: IQueue;
  /** The webhook HTTP API; its own 5xx count includes answers the ingest never gave. */
  readonly api: IHttpApi;
  /** Where every alarm sends its notice. */
  readonly alarmTopic: ITopic;
  /** The resolved configuration: routes, leases and the duplicate-storm thresholds. */
  readonly resolved: ResolvedConfig;
  /** The receiver's name prefix: every alarm's name starts with it. */
  readonly namePrefix: string;
  /** The receiver's metrics, in the namespace its functions emit into. */
  readonly metrics: ReceiverMetrics;
  /** Dashboards are account-wide: the name must be unique across regions and receivers. */
  readonly dashboardName: string;
  /**
   * Each route's secret's name in Secrets Manager, for the alarms to name it.
   * @default - the route's secretName as written
   */
  readonly secretNames?: ReadonlyMap<string, string>;
}

/**
 * What operators watch (docs/operating.md, "Metrics and alarms"): the alarms, each notifying
 * the alarm topic (receiver-alarms.ts), and one CloudWatch dashboard (receiver-dashboard.ts),
 * both over the same work queues (watched-queues.ts). Alarms and the dashboard are this
 * construct's own children, under the ids they always had: an update keeps each of them.
 * Metric names and dimensions come from lambdas/observability/metric-catalogue.ts, the list the
 * functions emit from.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const queues = watchedQueues(props.resolved, props.queue, props.routeQueues ?? new Map());
    this.alarms = receiverAlarms(this, props, queues);
    this.dashboard = receiverDashboard(this, props, queues, this.alarms);
  }
}
