import { PublishCommand } from '@aws-sdk/client-sns';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { Notifier } from '../ports/notifier.ts';

/** Publishes operator notices to the alarm topic, as JSON: route, key, reason; never a body. */
export class SnsNotifier implements Notifier {
  readonly #client: SNSClient;
  readonly #topicArn: string;
  constructor(client: SNSClient, topicArn: string) {
    this.#client = client;
    this.#topicArn = topicArn;
  }
  async notify(subject: string, message: Readonly<Record<string, unknown>>): Promise<void> {
    // SNS subjects are at most 100 ASCII characters.
    await this.#client.send(
      new PublishCommand({ TopicArn: this.#topicArn, Subject: subject.slice(0, 100), Message: JSON.stringify(message, null, 2) }),
    );
  }
}
