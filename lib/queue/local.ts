import type { DeliveryMessage, DeliveryQueue } from '#lib/queue/queue.ts';

/**
 * The local stack's queue: a timer per message, consumed in the same process by the consumer the
 * local stack registers (infra/local/webhooks.ts: the sender's handler). No dead-letter queue: a
 * consumer that throws is logged, as the DLQ alarm would show it on AWS.
 */
type Consumer = (message: DeliveryMessage) => Promise<void>;
let consumer: Consumer | undefined;
const pending = new Set<NodeJS.Timeout>();

export function consumeLocally(next: Consumer | undefined): void {
  consumer = next;
  if (!next) for (const timer of pending) clearTimeout(timer);
}

export const localQueue: DeliveryQueue = {
  async send(message, delayMs) {
    const timer = setTimeout(
      () => {
        pending.delete(timer);
        consumer?.(message).catch((error: Error) =>
          console.error(JSON.stringify({ level: 'error', message: 'webhook delivery failed', event_id: message.event_id, webhook_id: message.webhook_id, error: error.message })),
        );
      },
      Math.max(0, delayMs),
    );
    pending.add(timer);
  },
};
