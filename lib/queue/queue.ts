/**
 * The delivery queue between the webhook router and the sender: SQS (with a dead-letter queue)
 * on AWS, an in-process timer queue on the local stack (lib/queue/local.ts). Both run the same
 * sender flow on each message; only the transport differs.
 */
export interface DeliveryMessage {
  store_id: number;
  webhook_id: number;
  event_id: string;
  /** The attempt this message makes (1 = the first); 0 for an operator's redelivery, which is one attempt outside the schedule. */
  attempt: number;
  /** Epoch ms before which the attempt must not run: SQS delays at most 15 minutes, so longer waits are re-queued (lib/flows/webhook-sender.ts). */
  not_before?: number;
}

export interface DeliveryQueue {
  send(message: DeliveryMessage, delayMs: number): Promise<void>;
}
