import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import type { ServerKeys } from '#lib/crypto.ts';
import { cursorCodec, isId } from '#lib/db/cursor.ts';
import { deleteOneCounted, getMany, patchOne, putNewCounted } from '#lib/db/entity.ts';
import { countedPage, storeList } from '#lib/db/list-count.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { entitySk, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { writeGuarded } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import {
  type Webhook,
  type WebhookCreate,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookEventType,
  type WebhookPatch,
} from '#lib/schemas/webhook.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Webhooks, their events, delivery tasks and delivery log. Calls exclude the credential lookup.
 *
 * | access pattern                         | key                                                                    | calls |
 * |----------------------------------------|------------------------------------------------------------------------|-------|
 * | create                                 | sequence ADD + Put `STORE#<s> / WEBHOOK#<id>`                           | 2     |
 * | get, update, delete                    | `STORE#<s> / WEBHOOK#<id>` (conditional on existence)                   | 1     |
 * | list; a store's subscribers (router)   | Query `STORE#<s>`, sk begins_with `WEBHOOK#`                            | 1 per MB |
 * | event (the body every attempt sends)   | Put if absent `STORE#<s> / WEBHOOK_EVENT#<event id>` (30 days TTL)      | 1     |
 * | delivery task (one event, one webhook) | Put if absent `STORE#<s> / WEBHOOK_TASK#<event id>#<webhook>`; attempts claimed by a conditional UpdateItem | 1 |
 * | sender's read                          | BatchGet webhook + event + task                                         | 1     |
 * | an attempt                             | sequence ADD + TransactWrite (Put `WEBHOOK_DELIVERY#<webhook>#<id>` + task update) | 2 |
 * | delivery log, newest first (cursor)    | GetItem webhook ‖ Query `WEBHOOK_DELIVERY#<webhook>#` descending, Limit page_size + 1 | 2 |
 * | redeliver                              | BatchGet (webhook, attempt) + Put `WEBHOOK_REDELIVERY#<id>#<request>`   | 2     |
 *
 * Event and task keys are derived from the event id (itself derived from the stream record), so
 * a replayed stream batch writes nothing twice. A task counts its attempts: the sender claims
 * attempt n with `attempts = n - 1`, so a message SQS hands out twice sends once. The log, the
 * events and the tasks expire after 30 days. The signing secret is stored as is (it must be read
 * to sign) and leaves this module only through `getSigningWebhook` and the creation's answer.
 */
const WEBHOOK = ENTITY.WEBHOOK;
const DELIVERY = ENTITY.WEBHOOK_DELIVERY;
/** How long events, tasks and the delivery log are kept. */
export const WEBHOOK_LOG_RETENTION_SECONDS = 30 * 24 * 60 * 60;

export const webhookKey = (storeId: number, webhookId: number) => ({ pk: storePk(storeId), sk: entitySk(WEBHOOK, webhookId) });
const eventKey = (storeId: number, eventId: string) => ({ pk: storePk(storeId), sk: `WEBHOOK_EVENT#${eventId}` });
const taskKey = (storeId: number, eventId: string, webhookId: number) => ({ pk: storePk(storeId), sk: `WEBHOOK_TASK#${eventId}#${padId(webhookId)}` });
const deliveryPrefix = (webhookId: number) => `${DELIVERY}#${padId(webhookId)}#`;
const deliveryKey = (storeId: number, webhookId: number, deliveryId: number) => ({ pk: storePk(storeId), sk: `${deliveryPrefix(webhookId)}${padId(deliveryId)}` });

export interface WebhookItem extends Webhook {
  store_id: number;
  secret: string;
  /** Events that failed for good since the last success; FAILED_EVENTS_TO_DISABLE disables the webhook. */
  failed_streak: number;
}

export interface EventItem {
  id: string;
  store_id: number;
  type: WebhookEventType;
  /** The exact text every attempt sends. */
  body: string;
}

export interface TaskItem {
  event_id: string;
  webhook_id: number;
  attempts: number;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
}

/** The API shape: never the secret. */
export function toWebhook(item: WebhookItem): Webhook {
  return { id: item.id, url: item.url, events: item.events, enabled: item.enabled, description: item.description, created_at: item.created_at, updated_at: item.updated_at };
}

export async function createWebhook(storeId: number, input: WebhookCreate, secret: string, now: string): Promise<WebhookItem> {
  const id = await nextId(storeId, WEBHOOK);
  const item: WebhookItem = {
    id, store_id: storeId, url: input.url, events: input.events, enabled: input.enabled, description: input.description, secret, failed_streak: 0, created_at: now, updated_at: now,
  };
  await putNewCounted({ ...webhookKey(storeId, id), entity: WEBHOOK, ...item }, storeId, WEBHOOK);
  return item;
}

export async function getWebhook(storeId: number, webhookId: number): Promise<Webhook> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: webhookKey(storeId, webhookId), ConsistentRead: true }));
  if (!result.Item) throw notFound('Webhook');
  return toWebhook(result.Item as WebhookItem);
}

/** Every webhook of the store, secrets included (the router's subscribers); id order. */
export async function listWebhookItems(storeId: number): Promise<WebhookItem[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${WEBHOOK}#` })).map((item) => stripKeys(item) as unknown as WebhookItem);
}

/** A page of the store's webhooks (as the API shows them, no secret), in id order, and their total. */
export const webhookPage = (storeId: number, page: number, limit: number) =>
  countedPage(storeId, storeList(storeId, WEBHOOK), page, limit, (item) => toWebhook(item as unknown as WebhookItem));

/** Re-enabling a webhook starts its count of failed events again. */
export async function updateWebhook(storeId: number, webhookId: number, patch: WebhookPatch): Promise<Webhook> {
  const extraSets = patch.enabled === true ? { failed_streak: 0 } : undefined;
  return patchOne(webhookKey(storeId, webhookId), 'Webhook', patch, ['url', 'events', 'description', 'enabled'], (stored) => toWebhook(stripKeys(stored) as unknown as WebhookItem), { extraSets });
}

/** Its events, tasks and log expire on their own; a task whose webhook is gone is dropped by the sender. */
export const deleteWebhook = (storeId: number, webhookId: number) => deleteOneCounted(webhookKey(storeId, webhookId), 'Webhook', storeId, WEBHOOK);

async function putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
  try {
    await db.send(new PutCommand({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

export const putEventIfAbsent = (event: EventItem, expiresEpoch: number) =>
  putIfAbsent({ ...eventKey(event.store_id, event.id), entity: ENTITY.WEBHOOK_EVENT, ...event, expires_epoch: expiresEpoch });

export const putTaskIfAbsent = (storeId: number, eventId: string, webhookId: number, expiresEpoch: number) =>
  putIfAbsent({
    ...taskKey(storeId, eventId, webhookId), entity: ENTITY.WEBHOOK_TASK, store_id: storeId, event_id: eventId, webhook_id: webhookId, attempts: 0, status: 'PENDING', expires_epoch: expiresEpoch,
  } satisfies Record<string, unknown> & TaskItem);

/** What the sender needs for one attempt: the webhook (with its secret), the event, the task. One BatchGet. */
export async function readDeliveryState(storeId: number, webhookId: number, eventId: string) {
  const [webhook, event, task] = await getMany([webhookKey(storeId, webhookId), eventKey(storeId, eventId), taskKey(storeId, eventId, webhookId)]);
  return {
    webhook: webhook && (stripKeys(webhook) as unknown as WebhookItem),
    event: event && (stripKeys(event) as unknown as EventItem),
    task: task && (stripKeys(task) as unknown as TaskItem),
  };
}

/** Takes attempt `attempt` of a pending task; false when another copy of the message took it already. */
export async function claimAttempt(storeId: number, eventId: string, webhookId: number, attempt: number): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: taskKey(storeId, eventId, webhookId),
        UpdateExpression: 'SET attempts = :attempt',
        ConditionExpression: 'attempts = :previous AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':attempt': attempt, ':previous': attempt - 1, ':pending': 'PENDING' },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

export interface AttemptRecord extends Omit<WebhookDelivery, 'id'> {
  webhook_id: number;
}

/** Logs an attempt and, for a scheduled one, settles its task (DELIVERED, FAILED, or still PENDING). Answers the attempt's id. */
export async function recordAttempt(storeId: number, attempt: AttemptRecord, taskStatus: TaskItem['status'] | undefined, expiresEpoch: number): Promise<number> {
  const id = await nextId(storeId, DELIVERY);
  const delivery: WebhookDelivery & { webhook_id: number; store_id: number } = {
    id, event_id: attempt.event_id, type: attempt.type, status_code: attempt.status_code, duration_ms: attempt.duration_ms, error: attempt.error, created_at: attempt.created_at,
    webhook_id: attempt.webhook_id, store_id: storeId,
  };
  await writeGuarded([
    { item: { Put: { TableName: TABLE, Item: { ...deliveryKey(storeId, attempt.webhook_id, id), entity: DELIVERY, ...delivery, expires_epoch: expiresEpoch } } } },
    ...(taskStatus === undefined
      ? []
      : [{
          item: {
            Update: {
              TableName: TABLE,
              Key: taskKey(storeId, attempt.event_id, attempt.webhook_id),
              UpdateExpression: 'SET #status = :status',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':status': taskStatus },
            },
          },
          onConditionFailed: () => new Error(`webhook task of ${attempt.event_id} is missing`),
        }]),
  ]);
  return id;
}

/** A success ends the webhook's run of failed events. */
export async function clearFailedStreak(storeId: number, webhookId: number): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: webhookKey(storeId, webhookId),
        UpdateExpression: 'SET failed_streak = :zero',
        ConditionExpression: 'attribute_exists(pk) AND failed_streak > :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/**
 * One more event failed for good: counts it and disables the webhook when the count reaches
 * `disableAt`, in one UpdateItem (the condition makes the count and the switch one step). Answers
 * whether this call disabled it.
 */
export async function countFailedEvent(storeId: number, webhookId: number, disableAt: number, now: string): Promise<boolean> {
  const update = (disable: boolean) =>
    db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: webhookKey(storeId, webhookId),
        UpdateExpression: disable ? 'ADD failed_streak :one SET enabled = :false, updated_at = :now' : 'ADD failed_streak :one',
        ConditionExpression: disable ? 'attribute_exists(pk) AND failed_streak >= :last' : 'attribute_exists(pk)',
        ExpressionAttributeValues: disable ? { ':one': 1, ':false': false, ':now': now, ':last': disableAt - 1 } : { ':one': 1 },
      }),
    );
  try {
    await update(true);
    return true;
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
  try {
    await update(false);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
  return false;
}

/** The delivery log's cursor: the shared codec (lib/db/cursor.ts), bound to the store and the webhook, positioned at the last attempt's id. */
const deliveryCursor = cursorCodec('webhook-delivery', (payload) => (isId(payload.i) ? { i: payload.i } : undefined));

const toDelivery = (item: Record<string, unknown>): WebhookDelivery => {
  const d = item as unknown as WebhookDelivery;
  return { id: d.id, event_id: d.event_id, type: d.type, status_code: d.status_code, duration_ms: d.duration_ms, error: d.error, created_at: d.created_at };
};

/** A page of the delivery log, newest first; 404 for a webhook that is not the store's. */
export async function listDeliveries(storeId: number, webhookId: number, cursor: string, pageSize: number, keys: ServerKeys): Promise<WebhookDeliveryPage> {
  const after = cursor === '' ? undefined : deliveryCursor.decode(storeId, [webhookId], cursor, keys).i;
  const [webhook, page] = await Promise.all([
    db.send(new GetCommand({ TableName: TABLE, Key: webhookKey(storeId, webhookId) })),
    db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: after === undefined ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk AND sk BETWEEN :prefix AND :before',
        ExpressionAttributeValues: {
          ':pk': storePk(storeId),
          ':prefix': deliveryPrefix(webhookId),
          ...(after === undefined ? {} : { ':before': `${deliveryPrefix(webhookId)}${padId(after - 1)}` }),
        },
        ScanIndexForward: false,
        Limit: pageSize + 1,
      }),
    ),
  ]);
  if (!webhook.Item) throw notFound('Webhook');
  const items = (page.Items ?? []).map(toDelivery);
  const data = items.slice(0, pageSize);
  const last = data[data.length - 1];
  return { data, next_cursor: items.length > pageSize && last ? deliveryCursor.encode(storeId, [webhookId], { i: last.id }, keys) : null };
}

/** The webhook and one of its attempts, or 404 (another store's, another webhook's, or gone). */
export async function getDelivery(storeId: number, webhookId: number, deliveryId: number): Promise<WebhookDelivery> {
  const [webhook, delivery] = await getMany([webhookKey(storeId, webhookId), deliveryKey(storeId, webhookId, deliveryId)]);
  if (!webhook) throw notFound('Webhook');
  if (!delivery) throw notFound('Delivery');
  return toDelivery(delivery);
}

/**
 * Asks for the event to be sent again. The request is an item the stream carries to the router
 * (lib/flows/webhook-router.ts), which queues it: the API function needs no queue permission,
 * and the stream stays the one way into the queue.
 */
export async function putRedeliveryRequest(storeId: number, webhookId: number, delivery: WebhookDelivery, requestId: string, expiresEpoch: number): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        pk: storePk(storeId), sk: `WEBHOOK_REDELIVERY#${padId(delivery.id)}#${requestId}`, entity: ENTITY.WEBHOOK_REDELIVERY,
        store_id: storeId, webhook_id: webhookId, event_id: delivery.event_id, expires_epoch: expiresEpoch,
      },
    }),
  );
}
