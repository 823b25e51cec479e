import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#lib/config.ts';
import type { DeliveryMessage, DeliveryQueue } from '#lib/queue/queue.ts';

/** SQS's longest DelaySeconds. */
export const SQS_MAX_DELAY_SECONDS = 900;

const client = new SQSClient({ region: config.region });

/**
 * The delivery queue on AWS. A wait longer than SQS allows (the schedule's 30 min to 12 h) is sent
 * with the longest delay and the message's `not_before`: the sender puts it back for the rest
 * until that time comes (at most 48 hops for 12 h), so no other AWS part is needed.
 */
export function sqsQueue(queueUrl: string): DeliveryQueue {
  return {
    async send(message: DeliveryMessage, delayMs: number) {
      const delaySeconds = Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000)));
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: delaySeconds }));
    },
  };
}
