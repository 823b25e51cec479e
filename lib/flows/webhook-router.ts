import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { currentTimeMs, nowIso } from '#lib/clock.ts';
import { transactionFromItem } from '#lib/db/affiliate.ts';
import { newMessageOf } from '#lib/db/chat.ts';
import { commandFromItem, commandKey, commandResponse } from '#lib/db/command.ts';
import { getMany } from '#lib/db/entity.ts';
import { getOrderItem, orderFromItem, orderResponse } from '#lib/db/order.ts';
import { paymentFromItem, paymentResponse } from '#lib/db/payment.ts';
import { listWebhookItems, putEventIfAbsent, putTaskIfAbsent, WEBHOOK_LOG_RETENTION_SECONDS, type WebhookItem } from '#lib/db/webhook.ts';
import { eventBody, eventIdOf, eventOrigin, eventsOf, eventTime, isOrderDelivered, REDELIVERY_ENTITY, type Image, type PlannedEvent } from '#lib/domain/webhook.ts';
import { deliveryQueue } from '#lib/queue/index.ts';
import type { DeliveryQueue } from '#lib/queue/queue.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * The webhook router: table changes in, delivery tasks out. It runs in the Lambda on the table
 * stream (functions/webhook-router.ts), on AWS and on the local stack behind its stream poller
 * (infra/local/webhooks.ts), so no flow that changes an order, a command, a
 * transaction, a message or a payment knows webhooks exist, and no write that succeeded loses its event.
 *
 * Per record: the pure rules say which events the change is (lib/domain/webhook.ts); for each,
 * the store's enabled webhooks subscribed to it (one Query per store per batch, none written
 * when there is none), then the event item and one task per webhook, each a Put if absent under
 * keys derived from the stream record, and one queue message per task. A replayed batch writes
 * nothing twice and its repeated messages are dropped by the sender's claim of the attempt.
 * `data` is built here, from the item as the change left it, by the db modules' own mappers
 * (lib/domain never sees lib/db).
 */
export interface StreamRecord {
  eventID?: string;
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, AttributeValue>; OldImage?: Record<string, AttributeValue> };
}

const image = (raw: Record<string, AttributeValue> | undefined): Image | undefined => (raw ? unmarshall(raw) : undefined);

/** The resource the event carries, or undefined when `order.delivered` turns out not to hold yet. */
async function dataOf(planned: PlannedEvent, item: Image): Promise<unknown> {
  const storeId = Number(item.store_id);
  if (planned.needsDeliveryCheck) {
    const order = await getOrderItem(storeId, Number(item.order_id));
    const commands = (await getMany(order.command_ids.map((id) => commandKey(storeId, id)))).filter((command) => command !== undefined);
    return isOrderDelivered(commands) ? orderResponse(order) : undefined;
  }
  switch (item.entity) {
    case ENTITY.ORDER:
      return orderResponse(orderFromItem(item));
    case ENTITY.COMMAND:
      // The command as its route answers it.
      return commandResponse(commandFromItem(item));
    case ENTITY.AFFILIATE_TRANSACTION:
      return transactionFromItem(item);
    case ENTITY.PAYMENT:
      // The payment as its routes answer it (section 13's resource: no history, no internal marks).
      return paymentResponse(paymentFromItem(item));
    default:
      return newMessageOf(item);
  }
}

export async function routeStreamRecords(records: readonly StreamRecord[], queue: DeliveryQueue = deliveryQueue): Promise<void> {
  const subscribers = new Map<number, Promise<WebhookItem[]>>();
  const webhooksOf = (storeId: number) => {
    const known = subscribers.get(storeId);
    if (known !== undefined) return known;
    const list = listWebhookItems(storeId);
    subscribers.set(storeId, list);
    return list;
  };
  for (const record of records) {
    const item = image(record.dynamodb?.NewImage);
    if (!item) continue;
    const old = image(record.dynamodb?.OldImage);
    const storeId = Number(item.store_id);
    if (item.entity === REDELIVERY_ENTITY && !old) {
      await queue.send({ store_id: storeId, webhook_id: Number(item.webhook_id), event_id: String(item.event_id), attempt: 0 }, 0);
      continue;
    }
    for (const planned of eventsOf({ old, new: item })) {
      const hooks = (await webhooksOf(storeId)).filter((hook) => hook.enabled && hook.events.includes(planned.type));
      if (hooks.length === 0) continue;
      const data = await dataOf(planned, item);
      if (data === undefined) continue;
      const now = nowIso();
      const expires = Math.floor(currentTimeMs() / 1000) + WEBHOOK_LOG_RETENTION_SECONDS;
      const id = eventIdOf(eventOrigin(planned.type, record.eventID ?? '', storeId, item.order_id));
      const createdAt = planned.needsDeliveryCheck ? now : eventTime(item, now);
      await putEventIfAbsent({ id, store_id: storeId, type: planned.type, body: eventBody({ id, type: planned.type, created_at: createdAt, store_id: storeId, data }) }, expires);
      for (const hook of hooks) {
        await putTaskIfAbsent(storeId, id, hook.id, expires);
        await queue.send({ store_id: storeId, webhook_id: hook.id, event_id: id, attempt: 1 }, 0);
      }
    }
  }
}
