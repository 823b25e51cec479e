import { config } from '#lib/config.ts';
import { localQueue } from '#lib/queue/local.ts';
import type { DeliveryQueue } from '#lib/queue/queue.ts';
import { sqsQueue } from '#lib/queue/sqs.ts';

/** SQS when the function was given its queue (AWS), the in-process queue otherwise (the local stack). */
export const deliveryQueue: DeliveryQueue = config.webhookQueueUrl ? sqsQueue(config.webhookQueueUrl) : localQueue;
