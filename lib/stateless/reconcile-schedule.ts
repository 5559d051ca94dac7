import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Schedule, ScheduleExpression, ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { defaultPolicyOf, nagResource } from '../nag.ts';

/** Props of {@link ReconcileSchedule}. */
export interface ReconcileScheduleProps {
  /** The reconciler function the schedule invokes. */
  readonly reconciler: IFunction;
  /** Minutes between two runs. */
  readonly everyMinutes: number;
}

/**
 * The EventBridge Scheduler schedule that runs the reconciler every few minutes
 * (hourly by default). A run that cannot be delivered is retried only until the next
 * one is due: a late run adds nothing the next run will not do.
 */
export class ReconcileSchedule extends Construct {
  readonly schedule: Schedule;
  /**
   * The schedule's own group. EventBridge Scheduler publishes its invocation metrics per
   * group, so a group holding only this schedule makes them the reconciler's alone.
   */
  readonly group: IScheduleGroup;

  constructor(scope: Construct, id: string, props: ReconcileScheduleProps) {
    super(scope, id);
    if (!Number.isInteger(props.everyMinutes) || props.everyMinutes < 1 || props.everyMinutes > 24 * 60) {
      throw new Error(`reconciliation interval of ${props.everyMinutes} minutes is not a whole number from 1 to 1440`);
    }
    const every = Duration.minutes(props.everyMinutes);
    // Our own role rather than the target's shared one, so its finding is acknowledged here.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'retryproof: lets EventBridge Scheduler invoke the reconciler',
    });
    // Nothing else lives in the group: removing it with the stack removes only this schedule.
    this.group = new ScheduleGroup(this, 'Group', { removalPolicy: RemovalPolicy.DESTROY });
    this.schedule = new Schedule(this, 'Schedule', {
      scheduleGroup: this.group,
      description: `retryproof: reconcile every ${props.everyMinutes} minutes`,
      schedule: ScheduleExpression.rate(every),
      target: new LambdaInvoke(props.reconciler, {
        role,
        retryAttempts: 2,
        maxEventAge: every,
      }),
    });
    // The schedule names its group by a literal name, which gives CloudFormation no order; a schedule
    // joins its group only when created ("You can only associate a schedule with a group when you
    // first create the schedule", EventBridge Scheduler User Guide, "Creating a schedule group").
    this.schedule.node.addDependency(this.group);
    Validations.of(defaultPolicyOf(role)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(this, props.reconciler.functionArn)}:*]`,
      reason: "LambdaInvoke's grantInvoke also covers the reconciler's versions and aliases (arn:*); it is still only the reconciler",
    });
  }
}
