import { EVENT_SOURCE_ENTITY, REDELIVERY_ENTITY } from '#lib/domain/webhook.ts';
import type { TableAccess } from '#lib/db/table.ts';

/**
 * The consumers of a stream or a queue, beside the route table and the job table and read the
 * same way: each is `functions/<name>.ts`, invoked on AWS by an event source mapping and on the
 * local stack by infra/local/webhooks.ts, with the table access its entry states (granted by the
 * CDK stack, enforced by the local stack as IAM would). Its grants, its environment and its
 * wiring are derived from its entry: a new consumer is a handler file and one entry here.
 */
export const queues = {
  /** Webhook delivery tasks, router -> sender (lib/queue); its URL is in each function that sends to it. */
  'webhook-deliveries': { urlVariable: 'WEBHOOK_QUEUE_URL' },
} as const satisfies Record<string, { urlVariable: string }>;

export type QueueName = keyof typeof queues;

/** The table's stream, handed on only for items whose `entity` is listed (a filter on the new image, as Lambda's filter criteria apply it). */
export interface TableStreamSource {
  stream: 'table';
  entities: readonly string[];
}

export interface QueueSource {
  queue: QueueName;
}

export interface ConsumerSpec {
  source: TableStreamSource | QueueSource;
  /** Its table grant (lib/db/table.ts `tableActions`): no more than its code sends. */
  access: TableAccess;
  /** Queues its code sends to: it is granted SendMessage on each and given its URL. */
  sendsTo: readonly QueueName[];
  /** Lambda timeout when the default is too short for the work of one batch. */
  timeoutSeconds?: number;
  summary: string;
}

/**
 * The entities the stream hands the webhook router: the source of every event (the webhook
 * rules' own list) and the operator's redelivery requests. The AWS filter and the local poller
 * both apply this list; an entity left out of it is an event that never fires.
 */
export const webhookStreamEntities: readonly string[] = [...new Set<string>([...Object.values(EVENT_SOURCE_ENTITY), REDELIVERY_ENTITY])];

export const consumers = {
  'webhook-router': {
    source: { stream: 'table', entities: webhookStreamEntities },
    // It reads the webhooks and the resources, and writes only new event and task items (Put if absent).
    access: 'put',
    sendsTo: ['webhook-deliveries'],
    summary: 'Webhook router: table stream -> events and delivery tasks',
  },
  'webhook-sender': {
    source: { queue: 'webhook-deliveries' },
    access: 'write',
    // It re-queues its own retries (lib/flows/webhook-sender.ts).
    sendsTo: ['webhook-deliveries'],
    // The receiver's 10 s, the table calls around it, and room to spare.
    timeoutSeconds: 30,
    summary: 'Webhook sender: one signed POST per queue message',
  },
} as const satisfies Record<string, ConsumerSpec>;

export type ConsumerName = keyof typeof consumers;

export const consumerEntries = () => Object.entries(consumers) as [ConsumerName, ConsumerSpec][];

export const isStreamSource = (source: ConsumerSpec['source']): source is TableStreamSource => 'stream' in source;
