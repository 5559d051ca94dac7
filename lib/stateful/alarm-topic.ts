import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/** Props of {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /**
   * An e-mail address subscribed to the topic. AWS sends it a confirmation first.
   * @default - no subscription
   */
  readonly email?: string;
}

/**
 * The SNS topic operators hear from: CloudWatch alarms and the functions' own reports
 * (a paused route, reconciler corrections). Encrypted with its own KMS key, because
 * CloudWatch alarms cannot publish to a topic under the AWS-managed SNS key.
 */
export class AlarmTopic extends Construct {
  readonly topic: ITopic;
  readonly key: IKey;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
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
    if (props.email !== undefined) {
      topic.addSubscription(new EmailSubscription(props.email));
    }
    this.topic = topic;
    this.key = key;
  }
}
