import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { DeliveryMessage } from '#lib/queue/queue.ts';
import { deliverWebhook } from '#lib/flows/webhook-sender.ts';

/**
 * The consumer of the delivery queue (lib/routes/consumers.ts): one attempt per message. A message whose
 * processing throws (the table unavailable, not a receiver's failure, which is an attempt like
 * any other) is reported back alone and retried by SQS, then lands in the dead-letter queue.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        await deliverWebhook(JSON.parse(record.body) as DeliveryMessage);
      } catch (error) {
        console.error(JSON.stringify({ level: 'error', message: 'webhook delivery message failed', message_id: record.messageId, error: (error as Error).message }));
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};
