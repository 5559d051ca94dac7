import { ArnFormat, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/**
 * The name of one of a receiver's CloudWatch alarms: its name prefix, a dash, then
 * `name`. The topic lets exactly the alarms named so publish to it.
 */
export function alarmName(namePrefix: string, name: string): string {
  return `${namePrefix}-${name}`;
}

/** Props of {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /** The receiver's name prefix: the topic accepts only the alarms named with it. */
  readonly namePrefix: string;
  /**
   * An e-mail address subscribed to the topic. AWS sends it a confirmation first.
   * @default - no subscription
   */
  readonly email?: string;
}

/**
 * The SNS topic operators hear from: CloudWatch alarms, and the ingest's notice of a
 * route its circuit breaker paused. Encrypted with its own KMS key, because
 * CloudWatch alarms cannot publish to a topic under the AWS-managed SNS key.
 */
export class AlarmTopic extends Construct {
  readonly topic: ITopic;
  readonly key: IKey;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    const key = new Key(this, 'Key', {
      description: 'retryproof: encrypts the alarm topic',
      enableKeyRotation: true,
    });
    // CloudWatch alarms in this account publish to the topic; SNS asks them for a data key.
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    const topic = new Topic(this, 'Topic', {
      displayName: 'retryproof alarms',
      masterKey: key,
      enforceSSL: true,
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one; without
    // this statement CloudWatch is refused sns:Publish ("no resource-based policy allows").
    // Only this receiver's alarms, by their name prefix (see alarmName), in this account.
    const stack = Stack.of(this);
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: alarmName(props.namePrefix, '*'),
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    if (props.email !== undefined) {
      topic.addSubscription(new EmailSubscription(props.email));
    }
    this.topic = topic;
    this.key = key;
  }
}
