/** A real SNS topic on fauxqs, subscribed to a queue, so a test can read what was published. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { SnsNotifier } from '../../lambdas/notify/sns-notifier.ts';
import { localSqsClient } from '../../local/aws-clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/local-aws.ts';

export async function localTopic(): Promise<{ notifier: SnsNotifier; published: () => Promise<Record<string, unknown>[]> }> {
  const endpoint = inject('sqsEndpoint');
  const sns = new SNSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const sqs = localSqsClient(endpoint);
  const name = `alarms-${randomUUID().slice(0, 8)}`;
  const topic = await sns.send(new CreateTopicCommand({ Name: name }));
  await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const queueUrl = `${endpoint}/000000000000/${name}`;
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  await sns.send(
    new SubscribeCommand({
      TopicArn: topic.TopicArn,
      Protocol: 'sqs',
      Endpoint: attrs.Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  const seen: Record<string, unknown>[] = [];
  return {
    notifier: new SnsNotifier(sns, topic.TopicArn ?? ''),
    published: async () => {
      for (;;) {
        const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }));
        if ((out.Messages ?? []).length === 0) return seen;
        for (const m of out.Messages ?? []) seen.push(JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
      }
    },
  };
}
