import { Annotations, CfnOutput, Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { TopicGrants } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ENV } from '../lambdas/config/env.ts';
import { resolveConfig } from '../lambdas/config/resolve-config.ts';
import type { ResolvedConfig } from '../lambdas/config/resolve-config.ts';
import type { RetryproofConfig } from '../lambdas/config/route-config.ts';
import { SERVICE } from '../lambdas/observability/metric-catalogue.ts';
import { AlarmTopic } from './stateful/alarm-topic.ts';
import { EventsTable } from './stateful/events-table.ts';
import { LedgerTable } from './stateful/ledger-table.ts';
import { RouteSecrets } from './stateful/route-secrets.ts';
import { WorkQueue } from './stateful/work-queue.ts';
import { configEnvironmentValue } from './stateless/config-environment.ts';
import { Observability } from './stateless/observability.ts';
import { ReconcileSchedule } from './stateless/reconcile-schedule.ts';
import { RetryproofFunction } from './stateless/retryproof-function.ts';
import { WebhookApi } from './stateless/webhook-api.ts';
import { defaultPolicyOf, nagResource } from './nag.ts';

/** Props of {@link RetryproofStack}. */
export interface RetryproofStackProps extends StackProps {
  /**
   * The configuration as written. It travels to the functions as RETRYPROOF_CONFIG,
   * where each re-validates it at cold start.
   */
  readonly config: RetryproofConfig;
  /** `resolveConfig(config)`: every default applied, every derived number computed. */
  readonly resolved: ResolvedConfig;
}

/** Reconciler runs are bounded by this; a run that needs longer continues next hour. */
const RECONCILER_TIMEOUT = Duration.minutes(5);
/**
 * The ingest answers in milliseconds; 10 s only bounds a slow DynamoDB or SQS call, well
 * inside API Gateway's 30 s, after which the sender retries and the retry completes.
 */
const INGEST_TIMEOUT = Duration.seconds(10);

/**
 * The whole retryproof deployment: the stateful resources (events table, demo ledger,
 * queue and DLQ, route secrets, alarm topic) and the stateless ones that use them (the
 * ingest, executor and reconciler functions, the HTTP API, the reconcile schedule, and
 * the dashboard and alarms operators watch).
 * Each function is granted exactly the actions it calls and no more.
 */
export class RetryproofStack extends Stack {
  constructor(scope: Construct, id: string, props: RetryproofStackProps) {
    super(scope, id, props);
    const { config, resolved } = props;
    // The stack sizes resources by `resolved` and ships `config` to the functions; the two
    // must describe the same deployment, or the functions would run with other numbers.
    if (JSON.stringify(resolveConfig(config)) !== JSON.stringify(resolved)) {
      throw new Error('resolved config does not match config: pass resolveConfig(config)');
    }

    // Stateful.
    const events = new EventsTable(this, 'Events');
    const ledger = resolved.demo ? new LedgerTable(this, 'Ledger') : undefined;
    const executorTimeout = Duration.seconds(resolved.executorTimeoutSeconds);
    const work = new WorkQueue(this, 'Work', {
      maxReceiveCount: resolved.queue.maxReceiveCount,
      visibilityTimeout: Duration.seconds(resolved.queue.visibilityTimeoutSeconds),
      consumerTimeout: executorTimeout,
    });
    const secrets = new RouteSecrets(this, 'Secrets', {
      routes: resolved.routes.map((r) => ({ route: r.name, secretName: r.secretName, importSecret: r.importSecret })),
    });
    const alarms = new AlarmTopic(this, 'Alarms', resolved.alarmEmail === undefined ? {} : { email: resolved.alarmEmail });
    if (resolved.alarmEmail === undefined) {
      // Without a subscriber every alarm below notifies nobody; the deploy would look healthy.
      Annotations.of(alarms).addWarningV2(
        'retryproof:no-alarm-email',
        'no alarmEmail is set, so every alarm notifies a topic nobody subscribes to: ' +
          "set alarmEmail: 'you@example.com' in retryproof.config.ts, or subscribe to the topic in the AlarmTopicArn output yourself",
      );
    }

    // Stateless. No function reads the DLQ: dead-letter copies reach it through the work
    // queue's redrive policy, and only the operator CLI lists it (from the DlqUrl output).
    const shared = {
      [ENV.config]: configEnvironmentValue(config),
      [ENV.eventsTable]: events.table.tableName,
      [ENV.queueUrl]: work.queue.queueUrl,
    };
    const ledgerEnv: Record<string, string> = ledger ? { [ENV.ledgerTable]: ledger.table.tableName } : {};
    const logRetentionDays = resolved.logRetentionDays;

    const ingest = new RetryproofFunction(this, 'Ingest', {
      serviceName: SERVICE.ingest,
      entry: 'lambdas/ingest/handler.ts',
      description: 'retryproof: verifies, records and enqueues each webhook delivery',
      timeout: INGEST_TIMEOUT,
      // Memory buys CPU: at 512 MB the HMAC and SHA-256 of the largest body and the cold
      // start stay well under the sender's patience, at a cost of fractions of a cent.
      memorySize: 512,
      logRetentionDays,
      // The circuit breaker's pause notice goes to the alarm topic.
      environment: { ...shared, [ENV.alarmTopicArn]: alarms.topic.topicArn },
    });
    const executor = new RetryproofFunction(this, 'Executor', {
      serviceName: SERVICE.executor,
      entry: 'lambdas/executor/handler.ts',
      description: 'retryproof: claims each accepted delivery and runs its action once',
      // The longest lease plus the completion margin: a live worker never outlives its lease.
      timeout: executorTimeout,
      memorySize: 512,
      logRetentionDays,
      environment: { ...shared, ...ledgerEnv },
    });
    const reconciler = new RetryproofFunction(this, 'Reconciler', {
      serviceName: SERVICE.reconciler,
      entry: 'lambdas/reconciler/handler.ts',
      description: 'retryproof: re-enqueues stuck work and reverses duplicate effects',
      timeout: RECONCILER_TIMEOUT,
      memorySize: 512,
      logRetentionDays,
      // No alarm topic: a run's report is in its log, which the findings alarm points to.
      environment: { ...shared, ...ledgerEnv },
    });

    // Least privilege: each grant names the exact actions its function calls.

    // Claim (PutItem), duplicate count (UpdateItem), the breaker's pause (PutItem).
    events.table.grant(ingest, 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    work.queue.grant(ingest, 'sqs:SendMessage');
    for (const route of resolved.routes) {
      const secret = secrets.byRoute.get(route.name);
      if (secret === undefined) throw new Error(`route ${route.name} has no secret`);
      secret.grantRead(ingest);
      if (route.importSecret) {
        // A secret imported by name has an unknown 6-character suffix; its policy ARN ends in -??????.
        Validations.of(defaultPolicyOf(ingest.serviceRole)).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${nagResource(this, secret.secretArn)}-??????]`,
          reason: `route "${route.name}" imports its secret by name; -?????? matches only the suffix Secrets Manager appends`,
        });
      }
    }
    // The breaker's pause notice. grantPublish() would add kms:GenerateDataKey*, a wildcard;
    // SNS needs only these two. The ingest is the only function that publishes.
    TopicGrants.fromTopic(alarms.topic).actions(ingest, ['sns:Publish'], { keyActions: ['kms:Decrypt', 'kms:GenerateDataKey'] });

    // Route state (GetItem), claim and fenced writes (UpdateItem), the execution log (PutItem),
    // and parking, a transaction that checks the route is still paused (ConditionCheckItem).
    events.table.grant(executor, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem');
    // Dead-letter copies go to the WORK queue and reach the DLQ through its redrive policy, so
    // that every DLQ message has a source queue and the console's "redrive to source" works.
    // The executor cannot write to the DLQ at all.
    work.queue.grant(executor, 'sqs:SendMessage');
    ledger?.table.grant(executor, 'dynamodb:PutItem');
    executor.addEventSource(
      new SqsEventSource(work.queue, {
        reportBatchItemFailures: true,
        batchSize: resolved.queue.batchSize,
        maxBatchingWindow: Duration.seconds(resolved.queue.maxBatchingWindowSeconds),
        maxConcurrency: resolved.queue.maxConcurrency,
      }),
    );

    events.table.grant(reconciler, 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    work.queue.grant(reconciler, 'sqs:SendMessage');
    // The ledger window (Query on the byHour index) and reversals (UpdateItem).
    ledger?.table.grant(reconciler, 'dynamodb:Query', 'dynamodb:UpdateItem');

    const api = new WebhookApi(this, 'Webhooks', {
      ingest,
      throttlingRateLimit: resolved.api.throttlingRateLimit,
      throttlingBurstLimit: resolved.api.throttlingBurstLimit,
      logRetentionDays,
    });
    const schedule = new ReconcileSchedule(this, 'Reconcile', { reconciler, everyMinutes: resolved.reconciliation.everyMinutes });
    new Observability(this, 'Observability', {
      ingest,
      executor,
      reconciler,
      reconcilerLogs: reconciler.logs,
      reconcileScheduleGroup: schedule.group,
      reconcileEveryMinutes: resolved.reconciliation.everyMinutes,
      queue: work.queue,
      deadLetterQueue: work.deadLetterQueue,
      api: api.api,
      alarmTopic: alarms.topic,
      resolved,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Webhook base URL: give each sender this URL followed by its route name',
      value: api.webhookBaseUrl,
    });
    new CfnOutput(this, 'QueueUrl', { description: 'The work queue', value: work.queue.queueUrl });
    new CfnOutput(this, 'DlqUrl', { description: 'The dead-letter queue', value: work.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'The SNS topic every alarm notifies: subscribe to it, or set alarmEmail in retryproof.config.ts',
      value: alarms.topic.topicArn,
    });
    new CfnOutput(this, 'DlqConsoleUrl', {
      description: 'The DLQ in the SQS console, where "Start DLQ redrive" sends messages back',
      value: sqsConsoleUrl(this, work.deadLetterQueue.queueUrl),
    });

    // TableV2.grant() always adds the table's `index/*` ARN beside the table's own.
    const acknowledgeIndexes = (fn: RetryproofFunction, table: EventsTable | LedgerTable, reason: string) => {
      Validations.of(defaultPolicyOf(fn.serviceRole)).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(this, table.table.tableArn)}/index/*]`,
        reason,
      });
    };
    const itemOnly = 'grant() adds index/* for this table only; GetItem, PutItem and UpdateItem do nothing on an index';
    acknowledgeIndexes(ingest, events, itemOnly);
    acknowledgeIndexes(executor, events, itemOnly);
    acknowledgeIndexes(reconciler, events, 'the reconciler Queries the byTime and parked indexes; index/* names only this table\'s indexes');
    if (ledger) {
      const byHour = 'payout and reconciliation Query the ledger\'s byHour index; index/* names only this table\'s indexes';
      acknowledgeIndexes(executor, ledger, byHour);
      acknowledgeIndexes(reconciler, ledger, byHour);
    }
  }
}

/**
 * The SQS console page of a queue. The console takes the queue URL percent-encoded in
 * its fragment; a queue URL is known only at deploy time, and of its characters only
 * `:` and `/` need encoding, so CloudFormation does the encoding with split and join.
 */
function sqsConsoleUrl(stack: Stack, queueUrl: string): string {
  const encoded = Fn.join('%3A', Fn.split(':', Fn.join('%2F', Fn.split('/', queueUrl))));
  const region = stack.region;
  return `https://${region}.console.aws.amazon.com/sqs/v3/home?region=${region}#/queues/${encoded}`;
}
